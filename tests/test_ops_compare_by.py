"""``diff/div --by``: functions, files and modules compared whatever the call paths.

Expected values come from the profilers' own numbers: TAU's profile files list every
function's exclusive and inclusive microseconds on a line of its own (beside the call-path
lines, which hold ``=>``); Score-P's per-function values are summed from the Cube tree as
Cube's flat view does (exclusive over every call path of the function, inclusive over the
outermost ones); pstats' ``tt``/``ct`` for cProfile. The XML and v4 databases are written by
``python -m cctool.synth`` from one seed, so every value of one is the other's.
"""

from __future__ import annotations

import pstats
import re
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from cctool import api
from cctool.cli import cli
from cctool.errors import CctoolError, CctoolWarning
from cctool.model.frame import GraphFrame
from cctool.model.paths import function_key
from cctool.ops.compare_by import collapse
from cctool.readers import read

TAU, SCOREP = "tau-cpi-mpi", "scorep-cpi-cubex"
CPROFILE = Path(__file__).parent / "data" / "cprofile" / "imports.pstats"
_TAU_LINE = re.compile(r'^"(?P<name>[^"]*)" (\d+) (\d+) (?P<excl>\S+) (?P<incl>\S+) ')


def _tau_functions(folder: Path) -> dict[str, tuple[float, float]]:
    """Per function (TAU's own flat lines, all ranks summed): (exclusive, inclusive) in s."""
    out: dict[str, tuple[float, float]] = {}
    for path in sorted(folder.glob("profile.*")):
        for line in path.read_text().splitlines():
            if re.match(r"^\d+ aggregates", line):
                break  # user events follow
            m = _TAU_LINE.match(line)
            if m is None or "=>" in m["name"]:
                continue
            name = m["name"].strip()
            exc, inc = out.get(name, (0.0, 0.0))
            out[name] = (exc + float(m["excl"]) * 1e-6, inc + float(m["incl"]) * 1e-6)
    return out


def _tree_functions(gf, metric: str = "time") -> dict[str, tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Per node name: exclusive over all its nodes, inclusive over those with no ancestor of
    the same name (a plain walk over the parents)."""
    vals = gf.node_values([metric, f"{metric} (inc)"]).sort("node")
    exc, inc = vals[metric].to_list(), vals[f"{metric} (inc)"].to_list()
    names = gf.nodes["name"].to_list()
    parent = gf.nodes["parent"].to_list()
    out: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(names):
        up, nested = parent[i], False
        while up is not None:
            nested |= names[up] == name
            up = parent[up]
        e, c = out.get(name, (0.0, 0.0))
        out[name] = (e + exc[i], c + (0.0 if nested else inc[i]))
    return out


@pytest.fixture(scope="module")
def tau_scorep(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    tau, scorep = SHARED_DATA / TAU, SHARED_DATA / SCOREP
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        cmp = api.diff(read(tau), read(scorep), metrics=["time", "time (inc)"], by="function")
    return tau, scorep, cmp


def test_tau_against_scorep_by_function(tau_scorep) -> None:  # type: ignore[no-untyped-def]
    tau, scorep, cmp = tau_scorep
    a = _tau_functions(tau)
    b = _tree_functions(read(scorep))
    rows = {r["name"]: r for r in cmp.values.iter_rows(named=True)}
    keys_a = {re.sub(r"\(\)$", "", n): n for n in a}  # TAU's MPI_Init() is MPI_Init
    mpi_both = {k for k in keys_a if k.startswith("MPI_")} & {k for k in b if k.startswith("MPI_")}
    assert mpi_both == {"MPI_Init", "MPI_Comm_size", "MPI_Comm_rank", "MPI_Bcast",
                        "MPI_Reduce", "MPI_Finalize"}
    for key in mpi_both:
        row = rows[key]
        assert row["status"] == "both", key
        exc_a, inc_a = a[keys_a[key]]
        exc_b, inc_b = b[key]
        assert row["time [A]"] == pytest.approx(exc_a, rel=1e-9), key
        assert row["time (inc) [A]"] == pytest.approx(inc_a, rel=1e-9), key
        assert row["time [B]"] == pytest.approx(exc_b, rel=1e-9), key
        assert row["time (inc) [B]"] == pytest.approx(inc_b, rel=1e-9), key
        assert row["time (inc) [change]"] == pytest.approx(inc_b - inc_a, rel=1e-9), key
    # Score-P's two MPI_Bcast call paths (the MPI region and a sample) are one function.
    assert rows["MPI_Bcast"]["time [B]"] == pytest.approx(8.665663, abs=1e-6)
    only_a = {k for k in keys_a if k not in b}
    only_b = {k for k in b if k not in keys_a}
    assert only_a == {".TAU application", "MPI_Get_processor_name", "MPI_Info_create",
                      "MPI_File_open", "MPI_Info_free", "MPI_Comm_get_attr"}
    assert only_b == {"cpi", "main", "iteration", "iteration.cold.1"}
    assert {k for k, r in rows.items() if r["status"] == "left"} == only_a
    assert {k for k, r in rows.items() if r["status"] == "right"} == only_b
    assert rows["MPI_File_open"]["time (inc) [B]"] == 0.0
    # Totals are the profiles' own (the roots'), not a sum over overlapping functions.
    assert cmp.totals["time (inc)"] == pytest.approx((a[".TAU application"][1],
                                                      b["cpi"][1]), rel=1e-9)


def test_cli_marks_one_sided_functions(tau_scorep) -> None:  # type: ignore[no-untyped-def]
    tau, scorep, _ = tau_scorep
    res = CliRunner().invoke(cli, ["diff", str(tau), str(scorep), "--by", "function",
                                   "-m", "time", "--to", "csv"])
    assert res.exit_code == 0, res.stderr
    rows = {r["name"]: r for r in pl.read_csv(res.stdout.encode()).iter_rows(named=True)}
    assert rows["MPI_File_open"]["status"] == "left"
    assert rows["iteration"]["status"] == "right"
    assert rows["MPI_Reduce"]["status"] == "both"
    text = CliRunner().invoke(cli, ["diff", str(tau), str(scorep), "--by", "function",
                                    "-m", "time", "--top", "20", "--width", "100"])
    assert text.exit_code == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if "MPI_File_open" in x)
    assert "◀" in line
    js = CliRunner().invoke(cli, ["diff", str(tau), str(scorep), "--by", "function",
                                  "--to", "json"])
    assert js.exit_code == 0, js.stderr
    assert "MPI_File_open" in js.stdout and '"left"' in js.stdout


@pytest.fixture(scope="module")
def synth_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("synth")
    for fmt in ("xml", "v4"):
        subprocess.run([sys.executable, "-m", "cctool.synth", "--nodes", "200", "--seed", "3",
                        "--format", fmt, str(root / fmt)], check=True, capture_output=True)
    return root / "xml", root / "v4"


@pytest.mark.parametrize("by", ["path", "function", "name", "module"])
def test_xml_and_v4_of_one_run_give_a_zero_diff(synth_pair, by: str) -> None:  # type: ignore[no-untyped-def]
    xml, v4 = synth_pair
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", CctoolWarning)
        cmp = api.diff(xml, v4, metrics=["time", "time (inc)"], by=by)
    v = cmp.values
    for col in ("time [change]", "time (inc) [change]"):
        assert v[col].abs().max() == pytest.approx(0.0, abs=1e-9), (by, col)
    # The only contexts of one side: the XML database's statement lines without samples,
    # which the v4 database leaves out.
    one_sided = v.filter(pl.col("status") != "both")
    assert (one_sided["time (inc) [A]"] == 0).all() and (one_sided["time (inc) [B]"] == 0).all()
    if by == "path":
        assert one_sided.height == 15 and set(one_sided["status"]) == {"left"}
        assert v.filter(pl.col("status") == "both").height == 185
        assert any("entry-point context (main thread)" in str(w.message) for w in said)
    if by == "function":
        assert one_sided.height == 0
    assert cmp.totals["time (inc)"][0] == pytest.approx(cmp.totals["time (inc)"][1], rel=1e-12)


def test_call_graph_profile_compares_its_own_function_table() -> None:
    """A cProfile run read with a small node budget (the tree holds part of the cost) and in
    full compare equal by function: both take pstats' own tt and ct."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        small, full = read(CPROFILE, max_nodes=400), read(CPROFILE)
        cmp = api.diff(small, full, metrics=["time", "time (inc)"], by="name")
    want: dict[str, list[tuple[float, float]]] = {}
    for (_, _, name), (_, _, tt, ct, _) in pstats.Stats(str(CPROFILE)).stats.items():  # type: ignore[attr-defined]
        want.setdefault(name, []).append((tt, ct))
    rows = {r["name"]: r for r in cmp.values.iter_rows(named=True)}
    assert set(rows) == set(want)
    assert (cmp.values["status"] == "both").all()
    assert cmp.values["time [change]"].abs().max() == pytest.approx(0.0, abs=1e-12)
    for name, got in want.items():
        assert rows[name]["time [A]"] == pytest.approx(sum(t for t, _ in got), abs=1e-12)
        if len(got) == 1:  # a name several functions share has a cum within bounds only
            assert rows[name]["time (inc) [A]"] == pytest.approx(got[0][1], abs=1e-12)
            assert rows[name]["time (inc) [B]"] == pytest.approx(got[0][1], abs=1e-12)


def test_function_key_spellings() -> None:
    names = pl.Series("n", ["MPI_Init()  ", "MPI_Init", "<unknown procedure> 0x2d4d9 [libpsm.so.1]",
                            "void foo(int) [{a.c} {12,1}-{40,1}]", "operator[]", "f(int)",
                            "foo [clone .cold]"])
    keys = names.to_frame().select(function_key(pl.col("n"))).to_series().to_list()
    assert keys == ["MPI_Init", "MPI_Init", "<unknown procedure> 0x2d4d9", "void foo(int)",
                    "operator[]", "f(int)", "foo [clone .cold]"]


def test_collapse_counts_recursion_once() -> None:
    """main (1 s) -> f() (4 s) -> f (5 s): f's inclusive 9 s once, its exclusive 9 s."""
    gf = GraphFrame.from_arrays([-1, 0, 1], {"name": ["main", "f()", "f"],
                                             "type": ["function"] * 3},
                                {"node": [0, 1, 2], "time": [1.0, 4.0, 5.0]},
                                exclusive=["time"])
    rows = collapse(gf, "function")
    vals = rows.node_values(["time", "time (inc)"]).sort("node")
    got = {n: (e, i) for n, e, i in zip(rows.nodes["name"].to_list(), vals["time"].to_list(),
                                         vals["time (inc)"].to_list(), strict=True)}
    assert got == {"main": (1.0, 10.0), "f": (9.0, 9.0)}


def test_unknown_key_and_folders_refused(tau_scorep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tau, scorep, _ = tau_scorep
    with pytest.raises(CctoolError, match="unknown comparison key 'line'"):
        api.diff(read(tau), read(scorep), by="line")
    res = CliRunner().invoke(cli, ["diff", str(tau), str(scorep), "--by", "function",
                                   "--to", "folded"])
    assert res.exit_code == 2 and "--by" in res.stderr


def test_cli_choices_are_the_keys() -> None:
    from cctool.cli._compare import COMPARE_BY
    from cctool.ops.compare_by import BY

    assert COMPARE_BY == BY


def test_gate_and_views_by_function(tau_scorep, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tau, scorep, cmp = tau_scorep
    run = CliRunner().invoke
    # MPI_Bcast grew from 1.4 ms to 8.7 s: a function past 1 s trips the gate (exit 1).
    res = run(cli, ["diff", str(tau), str(scorep), "--by", "function", "-m", "time",
                    "--fail-if", "time > 1s", "--to", "csv"])
    assert res.exit_code == 1 and "MPI_Bcast" in res.stderr
    ok = run(cli, ["diff", str(tau), str(scorep), "--by", "function", "-m", "time",
                   "--fail-if", "time > 10s", "--to", "csv"])
    assert ok.exit_code == 0 and "gate passed" in ok.stderr
    flat = run(cli, ["diff", str(tau), str(scorep), "--by", "function", "-m", "time (inc)",
                     "--view", "flat", "--to", "json"])
    assert flat.exit_code == 0, flat.stderr
    for flags in (["--view", "bottom-up", "--to", "markdown"],
                  ["--view", "flat", "--html", str(tmp_path / "x.html")]):
        bad = run(cli, ["diff", str(tau), str(scorep), *flags])
        assert bad.exit_code == 2 and "--view" in bad.stderr, flags
    assert not (tmp_path / "x.html").exists()
    assert cmp.opts.by == "function"


def test_by_refused_for_folders_of_runs() -> None:
    runs = Path(__file__).parent / "data" / "caliper-ensemble"
    res = CliRunner().invoke(cli, ["diff", str(runs / "base"), str(runs / "slow"), "--by",
                                   "function"])
    assert res.exit_code == 2 and "--by" in res.stderr and "folders of runs" in res.stderr


def test_caliper_mpi_calls_and_regions_are_functions() -> None:
    """Caliper's MPI calls (type ``mpi``) are rows of their own; its loop folds into the
    function that holds it (LULESH's ``lulesh.cycle`` into ``main``)."""
    from tests.conftest import SHARED_DATA

    runs = SHARED_DATA / "mpi_scaling_cali"
    if not runs.is_dir():
        pytest.skip(f"real profiles not available: {runs} is absent")
    a, b = read(runs / "27_cores.cali"), read(runs / "64_cores.cali")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        cmp = api.diff(a, b, metrics=["Total time", "Total time (inc)"], by="function")
    rows = {r["name"]: r for r in cmp.values.iter_rows(named=True)}
    assert "lulesh.cycle" not in rows
    want_a, want_b = _tree_functions(a, "Total time"), _tree_functions(b, "Total time")
    mpi = [n for n in rows if n.startswith("MPI_")]
    assert len(mpi) > 10
    for name in mpi:
        assert rows[name]["Total time (inc) [A]"] == pytest.approx(want_a[name][1], rel=1e-9)
        assert rows[name]["Total time (inc) [B]"] == pytest.approx(want_b[name][1], rel=1e-9)
        assert rows[name]["Total time [A]"] == pytest.approx(want_a[name][0], rel=1e-9)
    loop = a.nodes.filter(pl.col("type") == "loop")["node"].to_list()
    own = a.node_values(["Total time"]).filter(pl.col("node").is_in(loop))["Total time"].sum()
    assert rows["main"]["Total time [A]"] == pytest.approx(want_a["main"][0] + own, rel=1e-9)
