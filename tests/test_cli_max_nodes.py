"""``--max-nodes``: the call graph expansion limit reaches the readers, and what it leaves
out is reported on stderr, not only inside ``read --json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli

PSTATS = Path(__file__).parent / "data" / "cprofile" / "cprofile-py311.pstats"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_limit_warns_on_stderr_with_what_is_left_out() -> None:
    res = run("read", "--json", "--max-nodes", "300", str(PSTATS))
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["nodes"] <= 300
    assert res.stderr.startswith(f"warning: {PSTATS}: call graph expansion stopped at the limit "
                                 "of 300 nodes; ")
    assert "contexts were not expanded; their callees' cost (" in res.stderr
    assert "totals stay exact" in res.stderr
    assert res.stderr.count("\n") == 1
    # pstats' total_tt (tests/data/cprofile/totals.json): nothing is left out of the total
    totals = json.loads((PSTATS.parent / "totals.json").read_text())
    want = next(f["total"] for f in totals["files"] if f["path"] == PSTATS.name)
    assert sum(r["time (inc)"] for r in out["roots"]) == pytest.approx(want, rel=1e-12)
    assert out["estimate"].startswith("call-path split estimated")


def test_default_limit_is_silent_and_applies_to_every_command() -> None:
    res = run("read", "--json", str(PSTATS))
    assert res.exit_code == 0 and res.stderr == ""
    assert json.loads(res.stdout)["nodes"] == 2921
    res = run("tree", "--max-nodes", "50", str(PSTATS))
    assert res.exit_code == 0 and "limit of 50 nodes" in res.stderr


def test_formats_without_a_call_graph_ignore_the_limit(tmp_path: Path) -> None:
    folded = Path(__file__).parent / "data" / "folded" / "python.folded"
    res = run("read", "--json", "--max-nodes", "5", str(folded))
    assert res.exit_code == 0 and res.stderr == ""
    res = run("read", "--max-nodes", "0", str(PSTATS))
    assert res.exit_code == 2


def test_markers_are_named_by_their_callees_count() -> None:
    # A node the budget stopped gets a marker child named for how many callees it lost.
    import numpy as np
    import polars as pl

    from cctool.model.callgraph import MARKER_TYPE
    from cctool.readers.callgraph._unexpanded import marker_attrs

    attrs = {"name": ["a", "b", "c", "d"], "type": ["function"] * 4,
             "file": pl.Series(["x.c"] * 4), "line": [1, 2, 3, 4],
             "recursive": np.array([True, False, True, False])}
    got = marker_attrs(attrs, np.array([False, True, False, True]), np.array([1, 12]))
    assert got["name"].to_list() == ["a", "[not expanded: 1 callee]", "c",
                                     "[not expanded: 12 callees]"]
    assert got["type"].to_list() == ["function", MARKER_TYPE, "function", MARKER_TYPE]
    assert got["file"].to_list() == ["x.c", None, "x.c", None]
    assert got["line"].to_list() == [1, None, 3, None]
    assert got["recursive"].to_list() == [True, False, True, False]


def test_callgrind_markers_read_from_valgrinds_file() -> None:
    # A real callgrind file capped at 20 nodes: each stopped node's marker names its count.
    import polars as pl

    from cctool.model.callgraph import MARKER_TYPE
    from cctool.readers.callgraph import callgrind

    src = Path(__file__).parent / "data" / "callgrind" / "callgrind.out.cc1plus"
    with pytest.warns(Warning, match="not expanded"):
        gf = callgrind.read(src, max_nodes=20)
    names = gf.nodes.filter(pl.col("type") == MARKER_TYPE)["name"].to_list()
    assert names and all(n.startswith("[not expanded: ") and n.endswith(("callee]", "callees]"))
                         for n in names)
    assert gf.num_nodes <= 20
