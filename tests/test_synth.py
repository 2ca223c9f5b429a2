"""The synthetic HPCToolkit database generator: format, determinism and realistic shape."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from cctool.graphframe import GraphFrame
from cctool.readers import read_declared as read
from cctool.synth import generate, main

NODES, RANKS, THREADS = 1500, 6, 2


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "db"
    generate(out, nodes=NODES, ranks=RANKS, threads=THREADS, metrics=3, seed=11)
    return out


@pytest.fixture(scope="module")
def gf(db: Path) -> GraphFrame:
    return read(db)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", nodes=400, ranks=3, threads=2, metrics=2, seed=5)
    generate(tmp_path / "b", nodes=400, ranks=3, threads=2, metrics=2, seed=5)
    generate(tmp_path / "c", nodes=400, ranks=3, threads=2, metrics=2, seed=6)
    assert a.files == 6
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert _files(tmp_path / "a") != _files(tmp_path / "c")


def test_layout_matches_hpcprof(db: Path) -> None:
    names = sorted(p.name for p in db.glob("*.metric-db"))
    assert len(names) == RANKS * THREADS
    pattern = re.compile(r"1\.flowsim-\d{6}-\d{3}-[0-9a-f]{8}-\d+-0\.metric-db")
    assert all(pattern.fullmatch(n) for n in names)
    root = etree.parse(str(db / "experiment.xml")).getroot()
    assert root.tag == "HPCToolkitExperiment"
    dbs = root.findall(".//MetricDBTable/MetricDB")
    assert [m.get("n") for m in dbs] == [
        f"{k} ({t})" for k in ("CPUTIME (usec)", "PAPI_TOT_CYC", "PAPI_TOT_INS") for t in "IE"]
    max_id = max(int(e.get("i")) for e in root.iter("PF", "C", "L", "S"))
    raw = (db / names[0]).read_bytes()
    assert raw[:24] == b"HPCPROF-metricdb__00.10b"
    assert int.from_bytes(raw[24:28], "big") == max_id
    assert int.from_bytes(raw[28:32], "big") == 6
    assert len(raw) == 32 + max_id * 6 * 8


def test_raw_values_follow_hpctoolkit(db: Path) -> None:
    """In the files: a scope's exclusive cost is the sum of the statements it encloses (not
    through calls), call sites have none, and inclusive values are subtree sums."""
    root = etree.parse(str(db / "experiment.xml")).getroot()
    vals = np.stack([np.fromfile(p, dtype=">f8", offset=32).reshape(-1, 6)
                     for p in sorted(db.glob("*.metric-db"))])
    inc, exc = vals[:, :, 0], vals[:, :, 1]
    for elem in root.find(".//SecCallPathProfileData").iter("PF", "C", "L", "S"):
        row = int(elem.get("i")) - 1
        kids = [int(k.get("i")) - 1 for k in elem if k.tag != "M"]
        own = exc[:, row] if elem.tag == "S" else 0.0
        np.testing.assert_array_equal(inc[:, row], own + inc[:, kids].sum(axis=1))
        if elem.tag == "C":
            assert not exc[:, row].any()
        elif elem.tag in ("PF", "L"):
            stmts = _statements_within(elem)
            np.testing.assert_array_equal(exc[:, row], exc[:, stmts].sum(axis=1))


def _statements_within(scope: etree._Element) -> list[int]:
    """Rows of the statements in ``scope`` and its loops, not in the procedures it calls."""
    rows = []
    for kid in scope:
        if kid.tag == "S":
            rows.append(int(kid.get("i")) - 1)
        elif kid.tag == "L":
            rows += _statements_within(kid)
    return rows


def test_reader_reads_it_back(gf: GraphFrame) -> None:
    gf.validate()
    assert gf.num_nodes == NODES
    assert gf.num_ranks == RANKS
    assert gf.num_threads == THREADS
    assert gf.metadata["num_ranks"] == RANKS
    for m in ("time", "PAPI_TOT_CYC", "PAPI_TOT_INS"):
        assert {m, f"{m} (inc)"} <= set(gf.metric_columns)
    assert 20 <= int(gf.nodes["depth"].max()) <= 60  # type: ignore[arg-type]


@pytest.mark.parametrize("metric", ["time", "PAPI_TOT_CYC", "PAPI_TOT_INS"])
def test_inclusive_is_exclusive_plus_children(gf: GraphFrame, metric: str) -> None:
    exc, _ = gf.dense(metric)
    inc, _ = gf.dense(f"{metric} (inc)")
    par = gf.parent_array
    has = par >= 0
    expected = exc.copy()
    np.add.at(expected, (slice(None), par[has]), inc[:, has])
    # Values are whole numbers, so every location's sums are exact.
    np.testing.assert_array_equal(inc, expected)
    assert inc.sum() > 0


def test_mpi_subtrees(gf: GraphFrame) -> None:
    values = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()
    mpi = gf.nodes.with_columns(value=values).filter(gf.nodes["name"].str.starts_with("MPI_"))
    assert mpi.height > 0
    assert all("libmpi" in m for m in mpi["module"].to_list())
    assert len(set(mpi["name"].to_list())) >= 3
    assert mpi["value"].sum() > 0.01 * values[0]
    assert gf.nodes["type"].value_counts().height == 3  # functions, loops and statements


def test_ranks_are_imbalanced(gf: GraphFrame) -> None:
    inc, locs = gf.dense("time (inc)")
    main = inc[locs["thread"].to_numpy() == 0]
    mean = main.mean(axis=0)
    big = mean >= 0.01 * mean.max()
    ratio = main.max(axis=0)[big] / mean[big]
    assert ratio.max() >= 1.3
    # Total time per rank stays close: ranks with less work wait longer in MPI.
    totals = main[:, 0]
    assert totals.max() / totals.min() < 1.3


def test_worker_threads_run_only_their_own_tree(gf: GraphFrame) -> None:
    inc, locs = gf.dense("time (inc)")
    roots = gf.roots
    names = gf.nodes["name"].to_list()
    worker_root = next(int(r) for r in roots if names[r] == "<thread root>")
    end = gf.subtree_end[worker_root]
    workers = locs["thread"].to_numpy() > 0
    assert inc[workers][:, worker_root].min() > 0
    assert not inc[workers][:, :worker_root].any() and not inc[workers][:, end:].any()
    assert not inc[~workers][:, worker_root:end].any()


@pytest.mark.parametrize("nodes", [40, 300, 5000])
def test_node_count_is_exact(tmp_path: Path, nodes: int) -> None:
    res = generate(tmp_path, nodes=nodes, ranks=2, seed=nodes)
    assert res.nodes == nodes
    assert read(tmp_path).num_nodes == nodes


def test_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="metrics"):
        generate(tmp_path, metrics=4)
    with pytest.raises(ValueError, match="nodes must be at least"):
        generate(tmp_path, nodes=2)
    with pytest.raises(SystemExit) as exc:
        main([str(tmp_path), "--ranks", "0"])
    assert exc.value.code == 2


def test_script_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "demo"), "--nodes", "300", "--ranks", "8", "--seed", "1"]) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert "300 nodes" in out.err
    assert len(list((tmp_path / "demo").glob("*.metric-db"))) == 8
