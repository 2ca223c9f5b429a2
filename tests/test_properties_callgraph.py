"""Property: for every call-graph reader and any node budget (``--max-nodes``), the roots'
inclusive values add up to the profile's own total (tests/data/*/totals.json: pstats
``total_tt``, callgrind ``totals:``, gprof's total, gprof2dot's 100%), the tree's exclusive
values to the sum of the profile's per-function self costs, and every function's flat self
(and cum, where the profile determines it) is the profile's own number."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cctool.errors import CctoolWarning
from cctool.ops.flat import flat_profile
from cctool.readers import read_declared

DATA = Path(__file__).parent / "data"
FILES = [
    ("cprofile", "cprofile-py311.pstats"), ("cprofile", "imports.pstats"),
    ("cprofile", "profile-py311.pstats"),
    ("callgrind", "callgrind.out.sample"), ("callgrind", "callgrind.out.threads"),
    ("gprof", "cycles.gprof.txt"), ("gprof", "pthreads.gprof.txt"),
    ("gprof2dot", "cprofile-py311.dot"), ("gprof2dot", "callgrind-threads.dot"),
]


def _total(folder: str, name: str) -> tuple[str, float]:
    spec = json.loads((DATA / folder / "totals.json").read_text())["files"]
    entry = next(e for e in spec if e["path"] == name)
    return entry["metric"], float(entry["total"])


@pytest.mark.parametrize(("folder", "name"), FILES)
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(max_nodes=st.one_of(st.integers(1, 60), st.integers(60, 3000)))
def test_totals_hold_at_any_node_budget(folder: str, name: str, max_nodes: int) -> None:
    inc_col, total = _total(folder, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        gf = read_declared(DATA / folder / name, max_nodes=max_nodes)
        flat = flat_profile(gf, "name", inc_col)
    assert gf.num_nodes <= max(max_nodes, len(gf.roots) * 2 + 1)
    exc_col = gf.exclusive_of(inc_col)
    assert exc_col is not None and gf.callgraph is not None
    vals = gf.node_values([exc_col, inc_col])
    roots = vals[inc_col].gather(gf.roots.tolist())
    assert float(roots.sum()) == pytest.approx(total, rel=1e-9)
    fn = gf.callgraph.functions
    own = float(fn[exc_col].sum())
    assert float(vals[exc_col].sum()) == pytest.approx(own, rel=1e-9, abs=1e-12)
    # every function's flat self (and cum where the profile determines it) is its own
    per_name = fn.group_by("name").agg(pl.col(exc_col).sum(), pl.col(inc_col).first(),
                                       pl.len().alias("n"))
    got = flat.select("name", "self", "cum").join(per_name, on="name", how="full",
                                                  coalesce=True)
    assert got["self"].null_count() == 0 and got[exc_col].null_count() == 0
    assert (got["self"] - got[exc_col]).abs().max() <= 1e-12 + 1e-9 * abs(own)
    single = got.filter((pl.col("n") == 1) & pl.col(inc_col).is_not_null())
    assert (single["cum"] - single[inc_col]).abs().max() <= 1e-12 + 1e-9 * abs(total)
