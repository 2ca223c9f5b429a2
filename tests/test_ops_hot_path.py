"""Hot path on the real cpi database (checked against the raw metric-db files) and on a
literal tree."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError, NodeNotFoundError
from cctool.graphframe import GraphFrame
from cctool.ops.hot_path import default_inclusive, hot_path, hot_path_nodes
from cctool.readers import read_declared as read
from tests import hpctoolkit_raw

CPI_PATH = ["<program root>", "main", "MPI_Finalize", "PMPI_Finalize", "MPID_Finalize",
            "MPIDI_CH3_Finalize", "psm_dofinalize", "<unknown procedure>",
            "<unknown procedure>", "<unknown procedure>"]


def raw_hot_path(db: hpctoolkit_raw.RawDB, threshold: float) -> list[int]:
    """The same walk over the XML scopes, summing the raw inclusive metric over ranks."""
    total = {i: db.inclusive_per_file(i).sum() for i in db.scopes}
    node = max(db.children[None], key=total.__getitem__)
    path = [node]
    while db.children.get(node):
        best = max(db.children[node], key=total.__getitem__)
        if total[best] <= 0 or total[best] < threshold * total[node]:
            break
        path.append(best)
        node = best
    return path


def test_cpi_hot_path_matches_raw_database(data) -> None:
    folder = data("hpctoolkit-cpi-database")
    gf = read(folder)
    df = hot_path(gf)
    assert df["name"].to_list() == CPI_PATH
    # 999238 + 999390 + 1000306 + 999308 usec on the four ranks, all the way down: the program
    # spends its samples in MPI_Finalize's progress loop.
    assert df["time (inc)"].to_list() == [3998242.0] * 10
    assert df["parent%"].to_list() == [100.0] * 10
    assert df["depth"].to_list() == list(range(10))
    db = hpctoolkit_raw.load(folder)
    ids = gf.nodes["hpctoolkit_id"].gather(df["node"]).to_list()
    assert ids == raw_hot_path(db, 0.5)
    # It stops because the heaviest child below holds 1387897 of 3998242 usec (34.7%).
    last = gf.children(int(df["node"][-1]))
    child_vals = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()[last]
    assert child_vals.max() == 1387897.0


def test_lower_threshold_goes_deeper(data) -> None:
    folder = data("hpctoolkit-cpi-database")
    gf = read(folder)
    df = hot_path(gf, threshold=0.3)
    db = hpctoolkit_raw.load(folder)
    assert gf.nodes["hpctoolkit_id"].gather(df["node"]).to_list() == raw_hot_path(db, 0.3)
    assert df.height == 12
    assert df["time (inc)"][10] == 1387897.0
    assert df["parent%"][10] == pytest.approx(100 * 1387897 / 3998242)
    assert df["start%"][-1] == pytest.approx(100 * 1387897 / 3998242)


def test_start_by_name_and_id(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    by_name = hot_path(gf, start="MPI_Finalize")
    assert by_name["name"][0] == "MPI_Finalize"
    assert by_name["name"].to_list() == CPI_PATH[2:]
    by_id = hot_path(gf, start=int(by_name["node"][0]))
    assert by_id.equals(by_name)
    assert hot_path(gf, start=str(int(by_name["node"][0]))).equals(by_name)


def test_unknown_start_is_a_clear_error(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    with pytest.raises(NodeNotFoundError, match="no node named 'nope'"):
        hot_path(gf, start="nope")
    with pytest.raises(NodeNotFoundError, match="no node with id 999"):
        hot_path(gf, start=999)


def test_default_metric_is_inclusive(tiny) -> None:
    assert default_inclusive(tiny) == "time (inc)"
    ex = GraphFrame.from_arrays([-1, 0], {"name": ["a", "b"], "type": ["f", "f"]},
                                {"node": [0, 1], "t": [1.0, 2.0]}, exclusive=["t"],
                                default_metric="t")
    assert default_inclusive(ex) == "t (inc)"
    assert default_inclusive(ex, "t") == "t"


def literal() -> GraphFrame:
    # root(10) -> a(6) -> c(5); a -> d(1); root -> b(4)   (inclusive values)
    return GraphFrame.from_arrays(
        [-1, 0, 0, 1, 1],
        {"name": ["root", "a", "b", "c", "d"], "type": ["function"] * 5},
        {"node": [0, 1, 2, 3, 4], "time": [0.0, 0.0, 4.0, 5.0, 1.0]},
        exclusive=["time"],
    )


@pytest.mark.parametrize(("threshold", "names"), [
    (0.5, ["root", "a", "c"]),
    (0.6, ["root", "a", "c"]),   # 6 / 10 is exactly 0.6: at least the threshold
    (0.61, ["root"]),
    (0.0, ["root", "a", "c"]),
    (1.0, ["root"]),
])
def test_threshold_on_literal_tree(threshold: float, names: list[str]) -> None:
    assert hot_path(literal(), threshold=threshold)["name"].to_list() == names


def test_rank_and_agg_choose_the_values(tiny) -> None:
    # Rank 0 inclusive: main 15, solve 11, mpi_send 9, memcpy 5 (5 >= 0.5 * 9: followed).
    assert hot_path(tiny, rank=0)["name"].to_list() == ["main", "solve", "mpi_send", "memcpy"]
    # Max over ranks: main 19, solve 17, mpi_send 13, memcpy 5 < 6.5: stops at mpi_send.
    vals = hot_path(tiny, agg="max")["time (inc)"].to_list()
    assert vals == [19.0, 17.0, 13.0]


def test_bad_threshold_and_empty() -> None:
    gf = literal()
    with pytest.raises(CctoolError):
        hot_path(gf, threshold=1.5)
    empty = GraphFrame.from_arrays([], {"name": [], "type": []}, {"node": [], "time": []},
                                   exclusive=["time"])
    assert hot_path_nodes(empty, np.zeros(0)).size == 0


def test_input_not_mutated(data) -> None:
    gf = read(data("hpctoolkit-cpi-database"))
    nodes, metrics = gf.nodes.clone(), gf.metrics.clone()
    hot_path(gf, threshold=0.2, start="main")
    assert gf.nodes.equals(nodes) and gf.metrics.equals(metrics)
    assert isinstance(hot_path(gf), pl.DataFrame)
    gf.validate()


def idle_forest() -> GraphFrame:
    # workers(9) -> <omp idle>(8) -> <omp idle>(3) nested; workers -> w(1);
    # main(6) -> solve(5); main -> <omp idle>(1)     (inclusive values)
    return GraphFrame.from_arrays(
        [-1, 0, 1, 0, -1, 4, 4],
        {"name": ["workers", "<omp idle>", "<omp idle>", "w", "main", "solve", "<omp idle>"],
         "type": ["function"] * 7},
        {"node": list(range(7)), "time": [0.0, 5.0, 3.0, 1.0, 0.0, 5.0, 1.0]},
        exclusive=["time"],
    )


def test_hot_path_starts_at_the_busiest_root_not_the_idle_one() -> None:
    from cctool.ops.idle import busiest_root, busy_values

    gf = idle_forest()
    inc = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    assert inc[gf.roots].tolist() == [9.0, 6.0]
    # Nested idle nodes count once: workers keep 9 - 8 = 1, main 6 - 1 = 5.
    assert busy_values(gf, inc).tolist() == [1.0, 5.0]
    assert busiest_root(gf, inc) == 4
    assert hot_path(gf)["name"].to_list() == ["main", "solve"]
    assert hot_path(gf, start="workers")["name"].to_list() == ["workers", "<omp idle>"]


def test_gamess_hot_path_is_not_omp_idle(data) -> None:
    gf = read(data("hpctoolkit-gamess"))
    names = hot_path(gf)["name"].to_list()
    assert names[0] == "main thread" and "<omp idle>" not in names
