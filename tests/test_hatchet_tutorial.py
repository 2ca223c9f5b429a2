"""Hatchet's "Basic Tutorial: Hatchet 101" (docs/basic_tutorial.rst of LLNL/hatchet), run as
Hatchet writes it with only ``import cctool as ht``: pandas on ``gf.dataframe``
(``sort_values``, column assignment, ``index.names``) and ``drop_index_levels`` as a
statement. The one difference the README's "Coming from Hatchet" lists that shows here: the
index is always (node, rank, thread), also after ``drop_index_levels`` (rank 0, thread 0).

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
    ("sort the dataframe", "sorted_df = gf.dataframe.sort_values(by=['time'], ascending=False)"),
    ("a scaled column", "gf.dataframe['scale'] = gf.dataframe['time'] * 4\n"
                        "sorted_df = gf.dataframe.sort_values(by=['scale'], ascending=True)"),
    ("help on tree", "help(gf.tree)"),
    ("tree of another metric", "print(gf.tree(metric_column='time (inc)'))"),
    ("tree to a depth", "print(gf.tree(depth=3))"),
    ("inverted colormap", "print(gf.tree(invert_colormap=True))"),
    ("tree of one rank", "print(gf.tree(rank=4))"),
    ("the index levels", "print(gf.dataframe.index.names)"),
    ("drop the index levels", "gf.drop_index_levels()\nprint(gf.dataframe)"),
    ("filter by a function", "filt_func = lambda x: x['name'].startswith('MPI_')\n"
                             "filter_gf = gf.filter(filt_func, squash=True)\n"
                             "print(filter_gf.dataframe)"),
    ("divide two graphframes", "gf = ht.GraphFrame.from_caliper(caliper_file_1core)\n"
                               "gf2 = ht.GraphFrame.from_caliper(caliper_file_64cores)\n"
                               "gf.drop_index_levels()\n"
                               "gf2.drop_index_levels()\n"
                               "gf3 = gf/gf2\n"
                               "print(gf3.tree(invert_colormap=True))"),
]


def test_hatchet_101_runs_every_step(data: Callable[[str], Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pandas")
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
    assert "['node', 'rank', 'thread']" in out
    sorted_df = space["sorted_df"]  # the column assignment is a metric of the frame now
    assert (sorted_df["scale"] == sorted_df["time"] * 4).all()
    assert sorted_df["scale"].is_monotonic_increasing
    assert "scale" in space["filter_gf"].metric_columns  # type: ignore[attr-defined]
    gf = space["gf"]
    assert isinstance(gf, ht.GraphFrame) and gf.num_ranks == 1
    # gf.drop_index_levels() as a statement combined the ranks (by their mean).
    assert space["gf2"].num_ranks == 1  # type: ignore[attr-defined]
    # The annotation profile has no MPI_ regions, so the tutorial's filter keeps nothing
    # there; on the 27-core run (MPI_Allreduce, ...) it keeps exactly the MPI_ nodes.
    assert space["filter_gf"].num_nodes == 0  # type: ignore[attr-defined]
    mpi = ht.GraphFrame.from_caliper(space["caliper_file_1core"]).filter(space["filt_func"])
    names = mpi.nodes["name"].to_list()
    assert names and all(n.startswith("MPI_") for n in names)
    gf3 = space["gf3"]
    assert isinstance(gf3, ht.GraphFrame) and gf3.num_nodes >= space["gf2"].num_nodes  # type: ignore[attr-defined]
