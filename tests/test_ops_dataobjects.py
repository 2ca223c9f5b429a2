"""Data-centric ops on the real DHAT and Caliper runs of tests/data/{dhat,caliper-data}.

ChplBlamer's table (% of each run per data object, and per function, at 1, 2 and 4
processes) is checked against percentages computed from the profilers' own totals: DHAT's
end-of-run report (``np*/valgrind-summary.txt``) and ``cali-query`` (caliper-data README).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cctool.errors import CctoolError
from cctool.ops import dataobjects as ops
from cctool.readers import read

DATA = Path(__file__).parent / "data"
RUNS = ("np1", "np2", "np4")
# DHAT 'Total:' bytes summed over ranks (valgrind-summary.txt; totals.json)
DHAT_TOTAL = {"np1": 4272846, "np2": 6476974, "np4": 11731840}
# The program's objects per run: rank 0 holds 2n/p doubles, the others n/p (n = 8192)
MATRIX = {"np1": 1048576, "np2": 786432, "np4": 655360}      # calloc, 8 columns
VECTOR = {"np1": 131072, "np2": 98304, "np4": 81920}          # malloc
SCRATCH = {"np1": 524288, "np2": 393216, "np4": 327680}      # 16 mallocs of n/4p doubles
# cali-query: sum(time.duration.ns) per region
# cali-query ... where region / where not region (the <outside regions> root), summed over ranks
REGION_NS = {"np1": {"setup": 81812, "sweep": 343426407, "scratch": 256793,
                     "<outside regions>": 3351031},
             "np2": {"setup": 85568, "sweep": 262779136, "scratch": 245626,
                     "<outside regions>": 39217302},
             "np4": {"setup": 101131, "sweep": 337030547, "scratch": 267049,
                     "<outside regions>": 352331791}}


def runs(kind: str) -> list[tuple[str, object]]:
    return [(str(DATA / kind / r), read(DATA / kind / r)) for r in RUNS]


def column(table, by: str, label: str) -> list[float]:
    row = table.filter(table[by] == label)
    assert row.height == 1, label
    return [row[c][0] for c in ("1", "2", "4")]


def test_chplblamer_table_dhat_per_data_object_and_function() -> None:
    dhat = runs("dhat")
    table = ops.blame_table(dhat, "variable", "bytes").table
    assert table.columns == ["variable", "1", "2", "4"]
    for site, expected in (("alloc_matrix_block (datacentric.c:22)", MATRIX),
                           ("alloc_vector (datacentric.c:21)", VECTOR),
                           ("scratch_work (datacentric.c:36)", SCRATCH)):
        want = [100 * expected[r] / DHAT_TOTAL[r] for r in RUNS]
        assert column(table, "variable", site) == pytest.approx(want, rel=1e-12)
    assert table.select("1", "2", "4").sum().row(0) == pytest.approx((100, 100, 100))
    by_function = ops.blame_table(dhat, "function", "bytes").table
    want = [100 * MATRIX[r] / DHAT_TOTAL[r] for r in RUNS]
    assert column(by_function, "function", "alloc_matrix_block") == pytest.approx(want)


def test_chplblamer_table_caliper_per_label_and_region() -> None:
    cali = runs("caliper-data")
    table = ops.blame_table(cali, "variable", "bytes allocated").table
    for r, col in zip(RUNS, ("1", "2", "4"), strict=True):
        total = MATRIX[r] + VECTOR[r] + SCRATCH[r]
        got = dict(zip(table["variable"], table[col], strict=True))
        assert got == pytest.approx({"m": 100 * MATRIX[r] / total, "u": 100 * VECTOR[r] / total,
                                     "tmp": 100 * SCRATCH[r] / total}, rel=1e-12)
    by_function = ops.blame_table(cali, "function", "time").table
    for r, col in zip(RUNS, ("1", "2", "4"), strict=True):
        got = dict(zip(by_function["function"], by_function[col], strict=True))
        total = sum(REGION_NS[r].values())
        assert got == pytest.approx({k: 100 * v / total for k, v in REGION_NS[r].items()},
                                    rel=1e-9)


def test_data_tree_keeps_only_data_roots() -> None:
    gf = read(DATA / "caliper-data" / "np2")
    tree = ops.data_tree(gf)
    tree.validate()
    assert tree.nodes["name"].to_list() == ["tracked objects", "u", "setup", "m", "setup",
                                            "tmp", "scratch"]
    assert tree.node_values(["bytes allocated (inc)"])["bytes allocated (inc)"][0] == 1277952


def test_data_objects_are_named_by_variable_with_per_rank_values() -> None:
    gf = read(DATA / "dhat" / "np4")
    objects = ops.data_objects(gf)
    objects.validate()
    assert objects.nodes["parent"].null_count() == objects.num_nodes  # DHAT objects are leaves
    node = objects.nodes["name"].to_list().index("alloc_matrix_block (datacentric.c:22)")
    dense, locs = objects.dense("bytes")
    assert locs["rank"].to_list() == [0, 1, 2, 3]
    assert dense[:, node].tolist() == [262144, 131072, 131072, 131072]
    # nothing is lost: the objects hold every byte DHAT counted
    assert objects.node_values(["bytes"])["bytes"].sum() == DHAT_TOTAL["np4"]


def test_by_attribute_sums_exclusive_values_per_location() -> None:
    gf = read(DATA / "dhat" / "np2")
    flat = ops.by_attribute(gf, "variable", "bytes (inc)")
    flat.validate()
    assert flat.exclusive == ("bytes",)
    assert np.isclose(flat.node_values(["bytes"])["bytes"].sum(), DHAT_TOTAL["np2"])


def test_profiles_without_data_objects_are_refused(data) -> None:
    gf = read(data("caliper-example-cali") / "example-profile.cali")
    with pytest.raises(CctoolError, match="no data objects"):
        ops.data_tree(gf)
    with pytest.raises(CctoolError, match="no data objects"):
        ops.data_objects(gf)


def test_combine_warnings_for_peaks_summed_over_ranks() -> None:
    gf = read(DATA / "dhat" / "np2")
    assert ops.combine_warnings(gf, ["bytes (inc)"], "sum") == []
    assert ops.combine_warnings(gf, ["bytes at t-gmax (inc)"], "max") == []
    assert ops.combine_warnings(gf, ["bytes at t-gmax (inc)"], "sum", rank=1) == []
    [line] = ops.combine_warnings(gf, ["max bytes"], "sum")
    assert "peak or level" in line and "shown as its max over 2 ranks" in line


@pytest.mark.parametrize("kind", ["dhat", "caliper-data"])
def test_totals_json(kind: str) -> None:
    spec = json.loads((DATA / kind / "totals.json").read_text())
    for entry in spec["files"]:
        gf = read(DATA / kind / entry["path"], entry["from"])
        vals = gf.node_values([entry["metric"]])[entry["metric"]]
        assert float(vals.gather(gf.roots).sum()) == pytest.approx(entry["total"],
                                                                    rel=entry["rel"])
