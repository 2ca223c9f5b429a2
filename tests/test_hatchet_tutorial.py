"""Hatchet's "Basic Tutorial: Hatchet 101" (docs/basic_tutorial.rst of LLNL/hatchet), ported
with only ``import cctool as ht`` and the differences the README's "Coming from Hatchet"
lists: the dataframe is Polars (``sort`` for ``sort_values``, ``with_columns`` for column
assignment, no index: the key columns are ``gf.metrics``' ``node, rank, thread``), and
``drop_index_levels`` returns the new frame (``gf = gf.drop_index_levels()``).

The tutorial's LULESH Caliper JSON is in ../shared/data (8 ranks); its 1-core/64-core pair
is not, so the division step uses the LULESH Caliper runs at 27 and 64 cores. Each step is
the tutorial's code as one string, run in one namespace in order, as a notebook runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

STEPS: list[tuple[str, str]] = [
    ("read a Caliper JSON file", "gf = ht.GraphFrame.from_caliper(caliper_file)"),
    ("print the dataframe", "print(gf.dataframe)"),
    ("print the tree", "print(gf.tree())"),
    ("sort the dataframe", "sorted_df = gf.dataframe.sort('time', descending=True)"),
    ("a scaled column", "df = gf.dataframe.with_columns(scale=gf.dataframe['time'] * 4)\n"
                        "sorted_df = df.sort('scale')"),
    ("help on tree", "help(gf.tree)"),
    ("tree of another metric", "print(gf.tree(metric_column='time (inc)'))"),
    ("tree to a depth", "print(gf.tree(depth=3))"),
    ("inverted colormap", "print(gf.tree(invert_colormap=True))"),
    ("tree of one rank", "print(gf.tree(rank=4))"),
    ("the index levels", "print([c for c in gf.metrics.columns if c in ('node', 'rank', "
                         "'thread')])"),
    ("drop the index levels", "gf = gf.drop_index_levels()\nprint(gf.dataframe)"),
    ("filter by a function", "filt_func = lambda x: x['name'].startswith('MPI_')\n"
                             "filter_gf = gf.filter(filt_func, squash=True)\n"
                             "print(filter_gf.dataframe)"),
    ("divide two graphframes", "gf = ht.GraphFrame.from_caliper(caliper_file_1core)\n"
                               "gf2 = ht.GraphFrame.from_caliper(caliper_file_64cores)\n"
                               "gf = gf.drop_index_levels()\n"
                               "gf2 = gf2.drop_index_levels()\n"
                               "gf3 = gf / gf2\n"
                               "print(gf3.tree(invert_colormap=True))"),
]


def test_hatchet_101_runs_every_step(data: Callable[[str], Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import cctool as ht

    space: dict[str, object] = {
        "ht": ht,
        "caliper_file": str(data("caliper-lulesh-json") / "lulesh-annotation-profile.json"),
        "caliper_file_1core": str(data("mpi_scaling_cali") / "27_cores.cali"),
        "caliper_file_64cores": str(data("mpi_scaling_cali") / "64_cores.cali"),
    }
    ran = 0
    for title, code in STEPS:
        exec(compile(code, title, "exec"), space)  # noqa: S102 (the tutorial's own code)
        ran += 1
    assert ran == len(STEPS) == 14
    out = capsys.readouterr().out
    assert "LagrangeLeapFrog" in out and "Help on method tree" in out
    gf = space["gf"]
    assert isinstance(gf, ht.GraphFrame) and gf.num_ranks == 1
    # The annotation profile has no MPI_ regions, so the tutorial's filter keeps nothing
    # there; on the 27-core run (MPI_Allreduce, ...) it keeps exactly the MPI_ nodes.
    assert space["filter_gf"].num_nodes == 0  # type: ignore[attr-defined]
    mpi = ht.GraphFrame.from_caliper(space["caliper_file_1core"]).filter(space["filt_func"])
    names = mpi.nodes["name"].to_list()
    assert names and all(n.startswith("MPI_") for n in names)
    gf3 = space["gf3"]
    assert isinstance(gf3, ht.GraphFrame) and gf3.num_nodes >= space["gf2"].num_nodes  # type: ignore[attr-defined]
