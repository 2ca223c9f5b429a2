"""Every face carries the same numbers and spells them the same way.

For the 50 heaviest nodes (inclusive value) of real profiles of six formats (and a C++
compiler's callgrind profile, g++'s cc1plus, expanded to 20,000 nodes), the text tree,
the JSON records, the page's embedded data, the terminal viewer's model and the exports
(folded, speedscope, pprof, read back with cctool's readers) hold the same inclusive value
(to 1e-9, or to the export's whole-unit rounding), and the text tree, the viewer and the
page (values.js run under node on the page's own numbers) print it as the same string.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.model.frame import GraphFrame
from cctool.ops.views import ViewOptions
from cctool.options import TreeOptions
from cctool.readers import read
from cctool.render import render_rows
from cctool.render.html import HtmlOptions, page_data
from cctool.render.rows import tree_rows
from cctool.render.tui.app import TreeTable
from cctool.render.tui.model import ViewModel
from cctool.render.values import format_value, rules_script
from tests.test_exports import PROFILES as EXPORTED

DATA = Path(__file__).parent / "data"
TOP = 50
# (folder, file, inclusive metric): the export tests' callgrind (a call graph of event
# counts), cProfile (a call graph in seconds), Caliper (4 ranks), HPCToolkit XML database
# (8 threads of cycles) and HPCToolkit v4 database (CPU time), and gprof (a call graph of
# samples).
PROFILES: list[tuple[str, str, str | None]] = [*EXPORTED[:5],
                                              ("gprof", "sorter.gprof.txt", None),
                                              ("callgrind", "callgrind.out.cc1plus", None)]
# Large call graphs read with a node budget, on every face alike (the CLI's --max-nodes).
MAX_NODES = {"callgrind.out.cc1plus": 20_000}


def _budget(name: str) -> list[str]:
    """The command-line options that read ``name`` as :func:`_profile` does."""
    return ["--max-nodes", str(MAX_NODES[name])] if name in MAX_NODES else []
SUFFIX = {"folded": ".folded", "speedscope": ".speedscope.json", "pprof": ".pb.gz"}


@functools.cache  # one read per sample for its four tests (cc1plus's takes a second or two)
def _profile(folder: str, name: str, metric: str | None) -> tuple[GraphFrame, str]:
    gf = read(DATA / folder / name, **({"max_nodes": MAX_NODES[name]} if name in MAX_NODES
                                         else {}))
    metric = metric or gf.default_metric
    assert metric is not None and gf.is_inclusive(metric)
    return gf, metric


def _top(gf: GraphFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    values = gf.node_values([metric])[metric].to_numpy()
    top = np.argsort(-values, kind="stable")[:TOP]
    return top, values[top]


def _paths(gf: GraphFrame) -> list[tuple[str, ...]]:
    names, par = gf.nodes["name"].to_list(), gf.parent_array
    out: list[tuple[str, ...]] = []
    for node in range(gf.num_nodes):  # preorder: a parent's path comes first
        p = int(par[node])
        out.append((*out[p], names[node]) if p >= 0 else (names[node],))
    return out


def _by_path(gf: GraphFrame, metric: str) -> dict[tuple[str, ...], float]:
    """Inclusive value per call path (siblings of one name summed, as an export merges)."""
    values = gf.node_values([metric])[metric].to_numpy()
    out: dict[tuple[str, ...], float] = {}
    for path, v in zip(_paths(gf), values.tolist(), strict=True):
        out[path] = out.get(path, 0.0) + v
    return out


def _js_strings(values: list[float], unit: str, whole: bool) -> list[str]:
    node = shutil.which("node")
    assert node is not None
    script = rules_script() + """
const a = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(a.values.map((v) => CCTValues.format(v, a.unit, a.whole))));
"""
    run = subprocess.run([node, "-e", script], input=json.dumps(
        {"values": values, "unit": unit, "whole": whole}), text=True, capture_output=True,
        check=True)
    return list(json.loads(run.stdout))


@pytest.mark.parametrize(("folder", "name", "metric"), PROFILES, ids=[p[1] for p in PROFILES])
def test_faces_carry_and_spell_the_same_values(folder: str, name: str,
                                               metric: str | None) -> None:
    gf, metric = _profile(folder, name, metric)
    info = gf.metric(metric)
    top, want = _top(gf, metric)
    spelled = [format_value(v, info) for v in want.tolist()]

    # The text tree: the rows it draws and the cells it prints.
    opts = TreeOptions(metrics=(metric,), full_names=True)
    rows = tree_rows(gf, opts)
    lines = render_rows(rows, [metric], opts, info=[info])
    at = {n: i for i, n in enumerate(rows["node"].to_list())}
    assert all(int(n) in at for n in top)
    text_values = np.array([rows[metric][at[int(n)]] for n in top])
    np.testing.assert_allclose(text_values, want, rtol=1e-9)
    assert [lines.cells[at[int(n)]].strip() for n in top] == spelled

    # JSON records: raw numbers at full precision.
    res = CliRunner().invoke(cli, ["tree", str(DATA / folder / name), "-m", metric,
                                   *_budget(name), "--to", "json"])
    assert res.exit_code == 0, res.output
    records = json.loads(res.stdout)
    key = next(c for c in records["columns"] if c.startswith(metric + " ["))
    by_node = {r["node"]: r[key] for r in records["rows"]}
    np.testing.assert_allclose([by_node[int(n)] for n in top], want, rtol=1e-9)

    # The page's embedded data, spelled by values.js.
    data, _ = page_data(gf, HtmlOptions(color=metric))
    entry = next(m for m in data["metrics"] if m["name"] == metric)
    page_values = np.asarray(entry["values"])[top]
    np.testing.assert_allclose(page_values, want, rtol=1e-9)
    if shutil.which("node"):
        assert _js_strings(page_values.tolist(), entry["unit"], entry["whole"]) == spelled

    # The viewer's model and the lines its table draws (the inclusive cell comes first).
    model = ViewModel(gf, ViewOptions(metric=metric))
    assert model.view.inclusive == metric
    row_of = {int(n): r for r, n in enumerate(model.view.rows["node"].to_list())}
    viewer = np.array([model.inc[row_of[int(n)]] for n in top])
    np.testing.assert_allclose(viewer, want, rtol=1e-9)
    table = TreeTable(model, (info, gf.metric(model.view.exclusive)))
    drawn = [table._line(row_of[int(n)], 0, 200)[0][0][:table.widths()[0]].strip() for n in top]
    assert drawn == spelled


def _export_cases() -> list[object]:
    out = []
    for folder, name, metric in PROFILES:
        for fmt in SUFFIX:
            out.append(pytest.param(folder, name, metric, fmt, id=f"{name}-{fmt}"))
    return out


@pytest.mark.parametrize(("folder", "name", "metric", "fmt"), _export_cases())
def test_exports_carry_the_trees_values(tmp_path: Path, folder: str, name: str,
                                        metric: str | None, fmt: str) -> None:
    gf, metric = _profile(folder, name, metric)
    info = gf.metric(metric)
    out = tmp_path / f"out{SUFFIX[fmt]}"
    res = CliRunner().invoke(cli, ["tree", str(DATA / folder / name), "-m", metric,
                                   *_budget(name), "-o", str(out)])
    assert res.exit_code == 0, res.output
    back = read(out, fmt)
    col = {"folded": "samples (inc)", "speedscope": next(iter(back.inclusive)),
           "pprof": metric}[fmt]
    is_time = info.unit == "s"
    scale = 1e9 if fmt == "folded" and is_time else 1.0
    got = _by_path(back, col)  # speedscope's profiles per location come back as threads: summed
    tree = _by_path(gf, metric)
    paths = _paths(gf)
    top, _ = _top(gf, metric)
    exc = gf.exclusive_of(metric) or metric
    lines = (gf.node_values([exc])[exc].to_numpy() != 0)
    # A written value is rounded to a whole nanosecond (time) or event at most, once per
    # written line below the node.
    unit = 1e-9 if is_time else 1.0
    rounded = fmt == "pprof" or (fmt == "folded" and is_time)
    end = gf.subtree_end
    for n in top.tolist():
        path = paths[n]
        want = tree[path]
        tol = 0.5 * unit * int(lines[n:end[n]].sum()) * gf.locations.height if rounded else 0.0
        assert got.get(path, 0.0) / scale == pytest.approx(want, rel=1e-9, abs=tol), path
