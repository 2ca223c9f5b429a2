"""SpotDB directories: one GraphFrame per .cali run (spotdb, mpi_scaling_cali, rajaperf).

Expected values: job sizes, thread counts and world sizes grepped from each file's globals
(the nodes under ``mpi.world.size``/``jobsize``/``threads``), node counts as the number of
``regionprofile`` snapshot records that name a region (each is one distinct region path).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.readers import read
from cctool.readers.caliper import spotdb


def test_spotdb_runs(data) -> None:
    folder = data("spotdb")
    assert spotdb.sniff(folder)
    runs = spotdb.read_runs(folder)
    assert [Path(r.metadata["path"]).name for r in runs] == ["0.cali", "1.cali", "2.cali",
                                                             "3.cali"]
    assert [r.metadata["jobsize"] for r in runs] == [64, 64, 1, 1]
    assert [r.metadata["threads"] for r in runs] == [1, 2, 4, 4]
    assert [r.num_nodes for r in runs] == [32, 32, 20, 20]  # with <outside regions>
    for r in runs:
        # the "timeseries" Spot channel (loop blocks) is not part of the call tree
        assert r.metric_columns == ("Min time/rank (inc)", "Max time/rank (inc)",
                                    "Avg time/rank (inc)", "Total time (inc)",
                                    "Avg time/rank", "Total time")
        r.validate()


def test_read_refuses_an_ensemble(data) -> None:
    folder = data("spotdb")
    with pytest.raises(ReaderError, match="holds 4 runs") as info:
        read(folder, "spotdb")
    assert info.value.fmt == "spotdb" and "read_runs" in str(info.value)


def test_single_run_directory_reads(data) -> None:
    gf = read(data("caliper-lulesh-cali"), "spotdb")
    assert gf.num_nodes == 20
    gf.validate()


def test_mpi_scaling_world_sizes(data) -> None:
    runs = spotdb.read_runs(data("mpi_scaling_cali"))
    sizes = sorted(r.metadata["mpi.world.size"] for r in runs)
    assert sizes == [27, 64, 125, 216, 343]
    for r in runs:
        assert r.metadata["mpi.world.size"] == int(Path(r.metadata["path"]).name.split("_")[0])
        assert r.metadata["jobsize"] == r.metadata["mpi.world.size"]
        assert r.num_nodes == 46
        r.validate()
    # Node identity is the call path, so every run has the same tree.
    first = runs[0].nodes.select("name", "parent", "type")
    assert all(r.nodes.select("name", "parent", "type").equals(first) for r in runs)


def test_mpi_scaling_values(data) -> None:
    (run,) = [r for r in spotdb.read_runs(data("mpi_scaling_cali"))
              if r.metadata["mpi.world.size"] == 27]
    roots = run.nodes["name"].gather(run.roots).to_list()
    # MPI calls made outside every annotated region are roots beside main
    assert roots[0] == "MPI_Comm_split" and "main" in roots
    root = run.node_values().row(int(run.roots[roots.index("main")]), named=True)
    # the main record of 27_cores.cali: __rec=ctx,ref=43=101,attr=86=89=92=96=94=99,
    # data=47.226995=47.248547=47.238297=1275.434023=27=1275.434023
    assert (root["Min time/rank (inc)"], root["Max time/rank (inc)"]) == (47.226995, 47.248547)
    assert root["Avg time/rank (inc)"] == 47.238297
    assert root["Total time (inc)"] == 1275.434023


def test_rajaperf_runs(data) -> None:
    runs = spotdb.read_runs(data("rajaperf"))
    assert len(runs) == 18
    kinds = [(r.metadata["cluster"], r.metadata["variant"], r.metadata["tuning"]) for r in runs]
    assert kinds.count(("lassen", "Base_CUDA", "block_128")) == 11
    assert kinds.count(("lassen", "Base_CUDA", "block_256")) == 2
    assert kinds.count(("quartz", "Base_Seq", "default")) == 5
    sizes = {r.metadata["ProblemSizeRunParam"] for r in runs}
    assert sizes == {1048576.0, 2097152.0}
    nodes = {k: {r.num_nodes for r, kk in zip(runs, kinds, strict=True) if kk == k}
             for k in set(kinds)}
    assert nodes == {("lassen", "Base_CUDA", "block_128"): {65},
                     ("lassen", "Base_CUDA", "block_256"): {68},
                     ("quartz", "Base_Seq", "default"): {75}}
    gf = runs[0]
    # any#any#max#... kernel parameters are metrics, but not summed over subtrees
    assert "ProblemSize" in gf.exclusive and "ProblemSize (inc)" not in gf.metric_columns
    assert gf.nodes["name"][:3].to_list() == ["RAJAPerf", "Basic", "Basic_COPY8"]
    for r in runs:
        r.validate()


def test_sniff(data, tmp_path: Path) -> None:
    assert spotdb.sniff(data("rajaperf"))
    assert not spotdb.sniff(data("caliper-lulesh-json"))
    assert not spotdb.sniff(data("hpctoolkit-cpi-database"))
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "run.cali").write_bytes((data("spotdb") / "0.cali").read_bytes())
    assert not spotdb.sniff(tmp_path)  # other files beside the runs
    with pytest.raises(ReaderError, match="no .cali files"):
        spotdb.read_runs(data("caliper-cpi-json"))


def test_run_files_are_in_path_order_below_nested_folders(tmp_path: Path) -> None:
    """Sorted by path (a folder's files where its name sorts among its siblings), as
    ``sorted()`` of the paths; a link to a folder is not followed, other files left out."""
    import os

    for rel in ["b.cali", "a/z.cali", "a/b/c.cali", "a-b/x.cali", "a.cali", "A.cali",
                "a/readme.txt"]:
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
    os.symlink(tmp_path / "a", tmp_path / "link")
    got = spotdb.run_files(tmp_path)
    assert got == sorted(got)
    assert [str(f.relative_to(tmp_path)) for f in got] == [
        "A.cali", "a/b/c.cali", "a/z.cali", "a-b/x.cali", "a.cali", "b.cali"]
