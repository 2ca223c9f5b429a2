"""Load imbalance on the real allgather database, hand-checked against the raw metric-db
files, and on literal profiles; hpcprof-style std/cv aggregation in ``node_values``."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError
from cctool.graphframe import GraphFrame
from cctool.ops.imbalance import default_dimension, imbalance, location_matrix
from cctool.readers import READERS
from cctool.readers import read_declared as read
from tests import hpctoolkit_raw

ALLGATHER = "hpctoolkit-allgather-database"


def raw_ranking(db: hpctoolkit_raw.RawDB, threshold: float) -> list[tuple[int, float, float]]:
    """(xml id, mean, max) of every scope, per rank with threads summed, by max - mean."""
    per_rank = {i: db.inclusive_per_rank(i) for i in db.scopes}
    peak = max(v.max() for v in per_rank.values())
    kept = [(i, v.mean(), v.max()) for i, v in per_rank.items() if v.max() >= threshold * peak]
    return sorted(kept, key=lambda t: (-(t[2] - t[1]), t[0]))


def test_allgather_top_nodes_match_raw_database(data) -> None:
    folder = data(ALLGATHER)
    gf = read(folder)
    df = imbalance(gf, top=5)
    db = hpctoolkit_raw.load(folder)
    expected = raw_ranking(db, 0.01)[:5]
    ids = gf.nodes["hpctoolkit_id"].gather(df["node"]).to_list()
    assert ids == [i for i, _, _ in expected]
    np.testing.assert_allclose(df["mean"], [m for _, m, _ in expected])
    np.testing.assert_allclose(df["max"], [x for _, _, x in expected])
    # The top node by hand: MPIC_Wait inside the ring allgather, rank 0 waits longest.
    top = df.row(0, named=True)
    assert top["name"] == "MPIC_Wait"
    assert top["max"] == 793489.0
    assert top["mean"] == pytest.approx(419767.9)
    assert top["min"] == 178536.0
    assert top["imbalance"] == pytest.approx(793489.0 / 419767.9)
    assert top["top"][:3] == [0, 5, 1]
    per_rank = db.inclusive_per_rank(gf.nodes["hpctoolkit_id"][top["node"]])
    assert top["std"] == pytest.approx(per_rank.std())
    assert top["cv"] == pytest.approx(per_rank.std() / per_rank.mean())
    assert top["p50"] == pytest.approx(np.median(per_rank))
    assert sum(top["histogram"]) == 10


@pytest.mark.skipif("caliper-json" not in dict(READERS), reason="Caliper JSON reader missing")
def test_caliper_mpi_imbalance_matches_json_rows(data) -> None:
    import json

    path = data("caliper-cpi-json") / "cpi-callpath-profile.json"
    raw = json.loads(path.read_text())
    labels = [n["label"] for n in raw["nodes"]]
    # Rows are [count, module, mpi.rank, call path node, source location, sum#time.duration].
    main = {r[2]: r[5] for r in raw["data"] if labels[r[3]] == "main"}

    def under_start(i: int | None) -> bool:
        while i is not None and labels[i] != "_start":
            i = raw["nodes"][i].get("parent")
        return i is not None

    per_rank: dict[int, float] = {}
    for r in raw["data"]:
        if under_start(r[3]):
            per_rank[r[2]] = per_rank.get(r[2], 0.0) + r[5]
    gf = read(path)
    exc = imbalance(gf, metric="time", threshold=0.0, top=0)
    row = exc.filter(pl.col("name") == "main").row(0, named=True)
    vals = np.asarray([main[r] for r in range(4)])  # 309432, 309754, 309573, 344782
    assert (row["mean"], row["max"], row["min"]) == (vals.mean(), 344782.0, 309432.0)
    assert row["imbalance"] == pytest.approx(344782.0 / 318385.25)
    assert row["top"][0] == 3
    assert exc.row(0, named=True)["name"] == "main"  # the largest max - mean of all
    inc = imbalance(gf, metric="time (inc)", threshold=0.0, top=0)
    start = inc.filter(pl.col("name") == "_start").row(0, named=True)
    assert (start["max"], start["min"]) == (max(per_rank.values()), min(per_rank.values()))
    assert start["mean"] == pytest.approx(sum(per_rank.values()) / 4)


def test_by_location_and_thread(data) -> None:
    folder = data(ALLGATHER)
    gf = read(folder)
    db = hpctoolkit_raw.load(folder)
    values, labels = location_matrix(gf, "time (inc)", "location")
    assert labels[:3] == ["0.0", "0.1", "1.0"] and len(labels) == 20
    some = int(gf.nodes["hpctoolkit_id"][6])
    np.testing.assert_allclose(values[:, 6], db.inclusive_per_file(some))
    threads, tlabels = location_matrix(gf, "time (inc)", "thread")
    assert tlabels == [0, 1]
    np.testing.assert_allclose(threads.sum(axis=0), values.sum(axis=0))
    df = imbalance(gf, by="location", top=3)
    assert df["top"].dtype == pl.List(pl.String)
    # With the helper threads as locations every node looks imbalanced: ratios near 2.
    assert (df["imbalance"] > 1.9).all()


def test_default_dimension(tiny) -> None:
    assert default_dimension(tiny) == "rank"
    threads_only = GraphFrame.from_arrays(
        [-1], {"name": ["a"], "type": ["f"]},
        {"node": [0, 0], "thread": [0, 1], "t": [1.0, 3.0]}, exclusive=["t"])
    assert default_dimension(threads_only) == "thread"
    df = imbalance(threads_only, metric="t")
    assert df["max"][0] == 3.0 and df["imbalance"][0] == 1.5


def test_absent_rows_count_as_zero() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0], {"name": ["main", "work"], "type": ["function"] * 2},
        {"node": [0, 1, 0, 0], "rank": [0, 0, 1, 2], "t": [1.0, 6.0, 1.0, 1.0]},
        exclusive=["t"], derive_inclusive=False)
    df = imbalance(gf, metric="t", threshold=0.0)
    work = df.filter(pl.col("name") == "work").row(0, named=True)
    assert (work["mean"], work["max"], work["min"]) == (2.0, 6.0, 0.0)
    assert work["imbalance"] == 3.0
    assert work["top"] == [0, 1, 2]
    assert work["histogram"] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    main = df.filter(pl.col("name") == "main").row(0, named=True)
    assert (main["imbalance"], main["std"], main["cv"]) == (1.0, 0.0, 0.0)
    assert df["name"].to_list() == ["work", "main"]  # max - mean: 4 before 0


def test_threshold_top_and_order() -> None:
    # Three nodes: big and balanced, big and imbalanced, small and very imbalanced.
    gf = GraphFrame.from_arrays(
        [-1, -1, -1], {"name": ["balanced", "skewed", "tiny"], "type": ["f"] * 3},
        {"node": [0, 1, 2] * 2, "rank": [0] * 3 + [1] * 3,
         "t": [100.0, 60.0, 0.5, 100.0, 140.0, 0.0]}, exclusive=["t"], derive_inclusive=False)
    df = imbalance(gf, metric="t", threshold=0.0)
    assert df["name"].to_list() == ["skewed", "tiny", "balanced"]
    assert imbalance(gf, metric="t", threshold=0.01)["name"].to_list() == ["skewed", "balanced"]
    assert imbalance(gf, metric="t", threshold=0.0, top=1)["name"].to_list() == ["skewed"]
    assert imbalance(gf, metric="t", threshold=0.0, top=0).height == 3


def test_percentiles_and_histogram_match_numpy() -> None:
    rng = np.random.default_rng(3)
    vals = rng.gamma(2.0, 10.0, size=(16, 4))
    gf = GraphFrame.from_arrays(
        [-1, 0, 0, 0], {"name": list("abcd"), "type": ["f"] * 4},
        {"node": np.tile(np.arange(4), 16), "rank": np.repeat(np.arange(16), 4),
         "t": vals.ravel()}, exclusive=["t"], derive_inclusive=False)
    df = imbalance(gf, metric="t", threshold=0.0, top=0, k=16).sort("node")
    for j in range(4):
        col = vals[:, j]
        row = df.row(j, named=True)
        assert row["p25"] == pytest.approx(np.percentile(col, 25))
        assert row["p90"] == pytest.approx(np.percentile(col, 90))
        counts, _ = np.histogram(col, bins=10, range=(col.min(), col.max()))
        assert row["histogram"] == counts.tolist()
        assert row["top"] == np.argsort(-col, kind="stable").tolist()


def test_errors(tiny) -> None:
    with pytest.raises(CctoolError, match="location dimension"):
        imbalance(tiny, by="socket")
    with pytest.raises(CctoolError, match="fraction"):
        imbalance(tiny, threshold=2.0)
    with pytest.raises(CctoolError, match="unknown metric"):
        imbalance(tiny, metric="nope")


@pytest.mark.parametrize("agg", ["std", "cv"])
def test_node_values_std_cv_match_numpy(data, agg: str) -> None:
    gf = read(data(ALLGATHER))
    dense, locs = gf.dense("time")
    got = gf.node_values(["time"], agg=agg)["time"].to_numpy()
    # Across ranks of per-rank values: each rank's two threads summed first.
    assert locs["thread"].to_list() == [0, 1] * 10
    dense = dense.reshape(10, 2, -1).sum(axis=1)
    std = dense.std(axis=0)
    mean = dense.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = std if agg == "std" else np.where(std == 0, 0.0, std / mean)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_node_values_std_counts_absent_rows() -> None:
    gf = GraphFrame.from_arrays(
        [-1, 0], {"name": ["a", "b"], "type": ["f"] * 2},
        {"node": [0, 1, 0], "rank": [0, 0, 1], "t": [2.0, 4.0, 2.0]},
        exclusive=["t"], derive_inclusive=False)
    assert gf.node_values(["t"], agg="std")["t"].to_list() == [0.0, 2.0]
    assert gf.node_values(["t"], agg="cv")["t"].to_list() == [0.0, 1.0]


def test_input_not_mutated(tiny) -> None:
    nodes, metrics = tiny.nodes.clone(), tiny.metrics.clone()
    imbalance(tiny, threshold=0.0, top=0)
    assert tiny.nodes.equals(nodes) and tiny.metrics.equals(metrics)
    tiny.validate()
