"""Chopper's tutorial (docs/chopper_api.rst of hatchet/hatchet, where Chopper's GraphFrame
methods live now) run step by step with ``import cctool as ht`` on ../shared/data.

Each step is the tutorial's code as one string, run in one namespace in order, as a notebook
runs it. Edits, each for a reason the data or cctool gives: the Jupyter magics (``%cct``) are
left out; the tutorial's placeholders name the shared profiles (its ``simple_cct`` is the
Hatchet literal, ``lulesh-512cores`` the 8-rank LULESH Caliper JSON, ``simple-profile`` the
HPCToolkit cpi database, its list of LULESH profiles the LULESH runs at 27 to 343 cores);
those Spot profiles have no ``time`` column, so the multi-run steps name their metric
(``Avg time/rank``), and the efficiency column sorted on is the one the call makes
(``343.<metric>.efficiency``; the tutorial's ``512.time`` is no column Chopper makes either).
The values are checked against the profiles' own numbers: the Caliper JSON's per-rank
records, read here with ``json``.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

STEPS: list[tuple[str, str]] = [
    ("to_callgraph", "gf = ht.GraphFrame.from_literal(simple_cct)\n"
                     "callgraph_graphframe = gf.to_callgraph()"),
    ("load_imbalance", "gf = ht.GraphFrame.from_caliper(lulesh_512cores)\n"
                       "gf = gf.load_imbalance(metric_column='time', verbose=True)\n"
                       "print(gf.dataframe)"),
    ("hot_path", "gf = ht.GraphFrame.from_hpctoolkit(simple_profile)\n"
                 "hot_path = gf.hot_path()"),
    ("construct_from and multirun_analysis",
     "datasets = glob.glob(list_of_lulesh_profiles)\n"
     "gfs = ht.GraphFrame.construct_from(datasets)\n"
     "table = ht.Chopper.multirun_analysis(gfs, metric='Avg time/rank')\n"
     "print(table)"),
    ("speedup_efficiency",
     "efficiency = ht.Chopper.speedup_efficiency(gfs, weak=True, efficiency=True, "
     "metrics=['Avg time/rank (inc)'])\n"
     "print(efficiency.sort_values('343.Avg time/rank (inc).efficiency', ascending=True))"),
]


def _paths(labels: list[str], parents: list[int | None]) -> list[str]:
    out: list[str] = []
    for label, parent in zip(labels, parents, strict=True):
        out.append(label if parent is None else f"{out[parent]} / {label}")
    return out


def test_chopper_tutorial_runs_every_step(data: Callable[[str], Path],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pandas")
    import cctool as ht

    lulesh = data("caliper-lulesh-json") / "lulesh-annotation-profile.json"
    space: dict[str, object] = {
        "ht": ht, "glob": glob,
        "simple_cct": json.loads((data("json") / "hatchet-graph-literal.json").read_text()),
        "lulesh_512cores": str(lulesh),
        "simple_profile": str(data("hpctoolkit-cpi-database")),
        "list_of_lulesh_profiles": str(data("mpi_scaling_cali") / "*.cali"),
    }
    for title, code in STEPS:
        if title == "load_imbalance":
            with pytest.warns(UserWarning, match="cctool.imbalance"):  # verbose's tables
                exec(compile(code, title, "exec"), space)  # noqa: S102
        else:
            exec(compile(code, title, "exec"), space)  # noqa: S102
    out = capsys.readouterr().out
    assert "node rank thread" in out and "MPI_Allreduce" in out

    cg = space["callgraph_graphframe"]
    names = ht.GraphFrame.from_literal(space["simple_cct"]).nodes["name"]  # type: ignore[arg-type]
    assert cg.frame.num_nodes == names.n_unique()  # type: ignore[attr-defined]

    # load_imbalance: max / mean over the 8 ranks of each region's exclusive time, from the
    # Caliper JSON's own records (a rank without a record has 0 there).
    doc = json.loads(lulesh.read_text())
    paths = _paths([n["label"] for n in doc["nodes"]], [n.get("parent") for n in doc["nodes"]])
    per_rank = np.zeros((len(paths), 8))
    for _, rank, exclusive, node in doc["data"]:
        if node is not None:
            per_rank[node, rank] = exclusive
    expected = dict(zip(paths, per_rank.max(axis=1) / per_rank.mean(axis=1), strict=True))
    imb = ht.GraphFrame.from_caliper(lulesh).load_imbalance("time")  # (gf is reassigned)
    mine = _paths(imb.nodes["name"].to_list(), imb.nodes["parent"].to_list())
    ratio = imb.node_values(["time.imbalance"])["time.imbalance"].to_numpy()
    checked = 0
    for path, value in zip(mine, ratio, strict=True):
        if path in expected:
            assert value == pytest.approx(expected[path], rel=1e-12), path
            checked += 1
    assert checked == len(paths) and imb.default_metric == "time.imbalance"
    # Chopper's threshold: the regions whose max over ranks exceeds 10% of the largest
    # value on any region and rank; the result keeps its imbalance column.
    kept = ht.GraphFrame.from_caliper(lulesh).load_imbalance("time", threshold=0.1)
    wanted = [p.split(" / ")[-1] for p, row in zip(paths, per_rank, strict=True)
              if row.max() > 0.1 * per_rank.max()]
    assert 0 < len(wanted) < len(paths)
    assert sorted(kept.nodes["name"].to_list()) == sorted(wanted)
    assert "time.imbalance" in kept.metric_columns

    # hot_path: each next node is the heaviest child and holds at least half its parent.
    cpi = ht.GraphFrame.from_hpctoolkit(space["simple_profile"])  # type: ignore[arg-type]
    hot: list[int] = space["hot_path"]  # type: ignore[assignment]
    metric = cpi.resolve_metric(None)
    inc = cpi.node_values([metric])[metric].to_numpy()
    assert len(hot) > 2
    for parent, child in zip(hot[:-1], hot[1:], strict=True):
        assert inc[child] >= 0.5 * inc[parent]
        assert inc[child] == inc[cpi.children(parent)].max()

    # multirun_analysis: one row per process count, a region's value its mean over ranks.
    table = space["table"]
    assert list(table.index) == [27, 64, 125, 216, 343]  # type: ignore[attr-defined]
    run = ht.read(data("mpi_scaling_cali") / "64_cores.cali")
    values = run.table.filter(run.table["name"] == "CalcFBHourglassForceForElems")
    assert table.loc[64, "CalcFBHourglassForceForElems"] == pytest.approx(  # type: ignore[attr-defined]
        values["Avg time/rank"].mean(), rel=1e-12)

    # weak efficiency: the 27-core run's time over the 343-core run's, per call path.
    eff = space["efficiency"]
    main = [ht.read(data("mpi_scaling_cali") / f"{p}_cores.cali").table for p in (27, 343)]
    t27, t343 = (t.filter(t["name"] == "main")["Avg time/rank (inc)"].item() for t in main)
    assert eff.loc["main", "343.Avg time/rank (inc).efficiency"] == pytest.approx(  # type: ignore[attr-defined]
        t27 / t343, rel=1e-12)
