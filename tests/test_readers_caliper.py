"""Native .cali reader on the real Caliper profiles.

Expected numbers were taken from the raw records, not from cctool: single values by grepping
the ``__rec=ctx`` line of a region, totals by summing a ``data=`` field with awk or a short
Python script over the raw lines, and node counts by walking the ``parent`` links of the
nested-attribute nodes (a separate 40-line script) and counting distinct region paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cctool.graphframe import GraphFrame
from cctool.readers import read
from cctool.readers.caliper import cali as caliper

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
ALL_CALI = sorted(p.relative_to(SHARED).as_posix() for p in SHARED.glob("**/*.cali"))
SPOT = ("Min time/rank (inc)", "Max time/rank (inc)", "Avg time/rank (inc)",
        "Total time (inc)", "Avg time/rank", "Total time")
# Distinct region paths per file, counted by the independent script, plus the
# <outside regions> root every one of these files has records for.
NODE_COUNTS = {
    "caliper-example-cali/example-profile.cali": 25,
    "caliper-lulesh-cali/lulesh-annotation-profile.cali": 20,
    "caliper-ordered-cali/230525-151052_1930517_eWbGeyrlBOPT.cali": 20,
    "caliper-ordered-cali-mpi/230525-151723_1930647_FSY8b8cKSEEi.cali": 27,
    "caliper-ordered-duplicate/duplicate-node-order-old.cali": 27,
    "caliper-ordered-duplicate/duplicate-node-order.cali": 20,
    "caliper-sw4-cuda-activity-cali/caliper_cuda_activity_profile.cali": 564,
    "caliper-sw4-cuda-activity-profile-cali/caliper_cuda_activity_profile_summary_v2.cali": 394,
    "caliper-timeseries-cali/230711-163829_2055495_OV0UMVFsW6yp.cali": 5,
    "caliper-timeseries-cali/timeseries.cali": 20,
    "spotdb/0.cali": 32,
    "spotdb/2.cali": 20,
    "mpi_scaling_cali/27_cores.cali": 46,
}


def cali(data, folder: str) -> Path:
    (path,) = sorted(data(folder).glob("*.cali"))
    return path


def node(gf: GraphFrame, *names: str) -> int:
    """Id of the node reached by the name path ``names`` from a root."""
    parent = None
    for name in names:
        cand = gf.nodes.filter((pl.col("name") == name) & (
            pl.col("parent").is_null() if parent is None else pl.col("parent") == parent))
        assert cand.height == 1, f"{names}: {cand.height} candidates for {name!r}"
        parent = cand["node"][0]
    assert parent is not None
    return int(parent)


def value(gf: GraphFrame, metric: str, *names: str, rank: int | None = None) -> float:
    vals = gf.node_values([metric], rank=rank)
    return float(vals[metric][node(gf, *names)])


@pytest.mark.parametrize("rel", ALL_CALI)
def test_every_sample_reads(data, rel: str) -> None:
    path = data(rel.split("/")[0]) / rel.split("/", 1)[1]
    assert caliper.sniff(path)
    gf = read(path, "caliper")
    assert gf.metadata["format"] == "caliper"
    assert gf.default_metric in gf.metric_columns
    json.dumps(dict(gf.metadata))  # must be JSON-serialisable as it is
    if rel in NODE_COUNTS:
        assert gf.num_nodes == NODE_COUNTS[rel]
    gf.validate()


def test_lulesh_runtime_report(data) -> None:
    gf = caliper.read(cali(data, "caliper-lulesh-cali"))
    assert gf.metric_columns == ("min#time.duration", "max#time.duration", "time",
                                 "avg#time.duration", "count", "time (inc)", "count (inc)")
    assert gf.exclusive == ("min#time.duration", "max#time.duration", "time",
                            "avg#time.duration", "count")
    assert gf.inclusive == ("time (inc)", "count (inc)")
    assert gf.derived == {"time (inc)", "count (inc)"}
    assert gf.default_metric == "time (inc)"
    # __rec=ctx,ref=181,...,data=0.000051=0.001470=0.095906=0.000274=350
    path = ("main", "lulesh.cycle", "LagrangeLeapFrog", "LagrangeElements",
            "ApplyMaterialPropertiesForElems", "EvalEOSForElems", "CalcEnergyForElems")
    row = gf.node_values().row(node(gf, *path), named=True)
    assert (row["min#time.duration"], row["max#time.duration"]) == (0.000051, 0.001470)
    assert (row["time"], row["avg#time.duration"], row["count"]) == (0.095906, 0.000274, 350)
    assert gf.nodes.row(node(gf, "main", "lulesh.cycle"), named=True)["type"] == "loop"
    # awk over every region record (the record outside all regions, 0.001297 s, is left out)
    assert value(gf, "time (inc)", "main") == pytest.approx(0.492491, abs=1e-9)
    assert value(gf, "count (inc)", "main") == 1243
    assert gf.metadata["cali.caliper.version"] == "2.2.0-dev"
    gf.validate()


def test_spot_example_metrics_and_metadata(data) -> None:
    gf = caliper.read(cali(data, "caliper-example-cali"))
    assert gf.metric_columns == SPOT
    assert gf.inclusive == SPOT[:4] and gf.exclusive == SPOT[4:]
    assert gf.derived == {"Avg time/rank", "Total time"}
    assert gf.default_metric == "Avg time/rank (inc)"
    # ref=33=80 (main) and ref=41=80 (lulesh.cycle): all four statistics are equal (1 rank)
    for metric in SPOT[:4]:
        assert value(gf, metric, "main") == 0.301407
        assert value(gf, metric, "main", "lulesh.cycle") == 0.292946
    # main's children are MPI_Barrier 0.000045, lulesh.cycle 0.292946 and MPI_Reduce 0.000016
    assert value(gf, "Avg time/rank", "main") == pytest.approx(0.301407 - 0.293007, abs=1e-12)
    roots = gf.nodes.filter(pl.col("parent").is_null())
    assert roots["name"].to_list() == ["main", "MPI_Initialized", "MPI_Comm_dup",
                                       "<outside regions>"]
    assert roots["type"].to_list() == ["function", "mpi", "mpi", "region"]
    meta = gf.metadata
    assert (meta["mpi.world.size"], meta["jobsize"], meta["threads"]) == (1, 1, 2)
    assert meta["cali.caliper.version"] == "2.6.0-dev"
    assert meta["launchdate"] == 1609796088 and meta["figure_of_merit"] == 921.425697
    assert meta["cmdline"] == ["./lulesh2.0", "-i", "10", "-P", "spot", "profile.mpi"]
    assert meta["metric_units"]["Avg time/rank"] == "s"
    gf.validate()


def test_node_order_orders_siblings(data) -> None:
    gf = caliper.read(cali(data, "caliper-ordered-cali-mpi"))
    # Node order: main 1, MPI_Finalize 76, MPI_Initialized 77, MPI_Finalized 78,
    # MPI_Comm_dup 79; under main: MPI_Barrier 2, lulesh.cycle 3, MPI_Reduce 75.
    roots = gf.nodes.filter(pl.col("parent").is_null())["name"].to_list()
    assert roots == ["main", "MPI_Finalize", "MPI_Initialized", "MPI_Finalized", "MPI_Comm_dup",
                     "<outside regions>"]
    kids = gf.nodes["name"].gather(gf.children(node(gf, "main"))).to_list()
    assert kids == ["MPI_Barrier", "lulesh.cycle", "MPI_Reduce"]
    assert "Node order" not in gf.metric_columns
    gf.validate()


@pytest.mark.parametrize(("dup", "ordered"), [
    ("duplicate-node-order.cali", "caliper-ordered-cali"),
    ("duplicate-node-order-old.cali", "caliper-ordered-cali-mpi"),
])
def test_duplicate_node_order_gives_the_same_tree(data, dup: str, ordered: str) -> None:
    # The duplicate files differ from the ordered ones in one Node order value (9 -> 8,
    # 75 -> 74) that now ties with another node's.
    a = caliper.read(data("caliper-ordered-duplicate") / dup)
    b = caliper.read(cali(data, ordered))
    assert a.nodes.select("name", "parent", "type").equals(b.nodes.select("name", "parent", "type"))
    assert a.metrics.equals(b.metrics)
    a.validate()


def test_cuda_activity_per_rank(data) -> None:
    gf = caliper.read(cali(data, "caliper-sw4-cuda-activity-cali"))
    assert gf.metric_columns == ("time", "time (gpu)", "time (inc)", "time (gpu) (inc)")
    assert (gf.num_ranks, gf.num_threads) == (4, 1)
    assert gf.metadata["mpi.world.size"] == 4
    types = dict(gf.nodes["type"].value_counts().iter_rows())
    assert types == {"function": 167, "gpu-api": 162, "region": 65, "kernel": 169, "memcpy": 1}
    # cali-query -q "select mpi.rank,sum(scale#cupti.activity.duration),
    # sum(scale#sum#cupti.host.duration) group by mpi.rank": every record, those outside
    # all regions included (printed to 6 decimals)
    gpu = [3.851600, 3.818489, 3.870197, 3.822224]
    host = [67.845547, 67.934237, 67.868806, 67.846396]
    roots = gf.roots
    for rank in range(4):
        vals = gf.node_values(["time (inc)", "time (gpu) (inc)"], rank=rank)
        assert vals["time (inc)"].gather(roots).sum() == pytest.approx(host[rank], abs=1e-6)
        assert vals["time (gpu) (inc)"].gather(roots).sum() == pytest.approx(gpu[rank], abs=1e-6)
    # GPU time sits on kernel leaves under the launching cudaLaunchKernel call
    launch = node(gf, "main", "solve", "TIME_STEPPING", "Force_tt", "set_to_zero",
                  "cudaLaunchKernel")
    (kernel,) = gf.children(launch)
    assert gf.nodes["type"][int(kernel)] == "kernel"
    assert gf.nodes["name"][int(kernel)].startswith("void forallkernel<Sarray::set_to_zero()")
    gf.validate()


def test_cuda_activity_summary(data) -> None:
    gf = caliper.read(cali(data, "caliper-sw4-cuda-activity-profile-cali"))
    # inclusive#scale#sum#cupti.host.duration -> "time (inc)", exclusive "time" derived;
    # sum#scale#cupti.activity.duration -> "time (gpu)", its inclusive twin derived
    assert gf.metric_columns == ("time (inc)", "time (gpu)", "time (gpu) (inc)", "time")
    assert gf.derived == {"time", "time (gpu) (inc)"}
    assert value(gf, "time (inc)", "main") == 271.493903  # __rec=ctx,ref=27,attr=24,...
    # awk: sum of sum#scale#cupti.activity.duration over the records with a region, plus
    # 0.001766 s outside every region (cali-query's sum over all records: 15.3625)
    assert gf.metrics["time (gpu)"].sum() == pytest.approx(15.362510, abs=1e-9)
    outside = value(gf, "time (gpu)", "<outside regions>")
    assert outside == pytest.approx(15.362510 - 15.360744, abs=1e-9)
    assert value(gf, "time (gpu) (inc)", "main") == pytest.approx(15.360744, abs=1e-9)
    gf.validate()


def test_timeseries_is_summed_over_snapshots(data) -> None:
    path = data("caliper-timeseries-cali") / "230711-163829_2055495_OV0UMVFsW6yp.cali"
    gf = caliper.read(path)
    assert gf.nodes["name"].to_list() == ["main", "init", "mainloop", "foo", "<outside regions>"]
    # Python over the raw lines: sum#time.duration.ns and count of foo (ref=104) and
    # mainloop (ref=103) over all snapshots
    assert value(gf, "time", "main", "mainloop", "foo") == pytest.approx(0.017492019, abs=1e-15)
    assert value(gf, "count", "main", "mainloop", "foo") == 100
    assert value(gf, "time", "main", "mainloop") == pytest.approx(0.001913177, abs=1e-15)
    assert value(gf, "count", "main", "mainloop") == 300
    assert gf.metadata["metric_units"]["time"] == "s"
    snaps = gf.metadata["timeseries"]
    assert [s["timeseries.snapshot"] for s in snaps] == list(range(7))
    assert snaps[2]["loop.start_iteration"] == 20 and snaps[2]["loop.iterations"] == 20
    assert snaps[1]["timeseries.duration"] == 0.003734
    assert "loop.iterations" not in gf.metric_columns
    gf.validate()


def test_timeseries_snapshots(data) -> None:
    path = data("caliper-timeseries-cali") / "timeseries.cali"
    whole = caliper.read(path)
    snaps = caliper.read_snapshots(path)
    # snapshot 0 holds only the record outside all regions (ref=23, 13458791 ns)
    assert [s.metadata["timeseries.snapshot"] for s in snaps] == list(range(52))
    assert all(s.num_nodes == whole.num_nodes for s in snaps)
    assert value(snaps[0], "time", "<outside regions>") == pytest.approx(0.013458791, abs=1e-15)
    # raw: 45.697480035 s of sum#time.duration.ns (cali-query: 4.56975e+10 ns)
    roots = whole.node_values(["time (inc)"])["time (inc)"].gather(whole.roots)
    assert roots.sum() == pytest.approx(45.697480035, abs=1e-9)
    main = value(whole, "time (inc)", "main")
    assert main == pytest.approx(45.697480035 - 0.013458791, abs=1e-9)
    assert sum(value(s, "time (inc)", "main") for s in snaps) == pytest.approx(main, abs=1e-9)
    one = caliper.read(path, snapshot=3)
    assert one.metrics.equals(snaps[3].metrics)
    # __rec=ctx,ref=122=23,... of snapshot 3: count 8, sum#time.duration.ns 463654
    assert value(one, "count", "main", "lulesh.cycle") == 8
    assert value(one, "time", "main", "lulesh.cycle") == pytest.approx(463654e-9, abs=1e-15)
    snaps[2].validate()
    whole.validate()


TIMESERIES = Path(__file__).parent / "data" / "caliper-timeseries" / "timeseries.cali"


def test_a_time_series_counts_iterations_and_keeps_gauge_levels() -> None:
    """Caliper's timeseries service (tests/data/caliper-timeseries): the snapshots' loop
    iterations add up, their memory levels (cali-query's max over snapshots) do not."""
    gf = read(TIMESERIES)
    gf.validate()
    assert value(gf, "loop iterations (inc)", "mainloop") == 200
    for gauge, peak in (("memstat.vmrss", 21788), ("memstat.vmsize", 23469),
                        ("memstat.data", 21663)):
        assert gf.metric(gauge).combine.value == "max" and gf.metric(gauge).unit == "pages"
        assert gf.metrics[gauge].max() == peak
        assert f"{gauge} (inc)" not in gf.metric_columns
    snaps = caliper.read_snapshots(TIMESERIES)
    assert [value(s, "loop iterations", "mainloop") for s in snaps] == [0] + [20] * 10 + [0]
    # snapshot 10's summary record: memstat.vmrss=21788, the last and largest level
    assert value(snaps[10], "memstat.vmrss", "mainloop") == 21788


def test_spots_timeseries_blocks_are_kept() -> None:
    """Spot's timeseries channel: ten blocks of 20 iterations of mainloop (cali-query's sum
    of max#sum#loop.iterations, 200), in the metadata beside the region profile."""
    gf = read(TIMESERIES.parent / "spot-timeseries.cali")
    gf.validate()
    blocks = gf.metadata["timeseries"]
    assert [b["block"] for b in blocks] == list(range(0, 200, 20))
    assert {b["loop"] for b in blocks} == {"mainloop"}
    assert sum(b["max#sum#loop.iterations"] for b in blocks) == 200
    assert not [c for c in gf.metric_columns if "loop.iterations" in c]
