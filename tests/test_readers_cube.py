"""Cube 4 (.cubex) reader: the Score-P cpi sample, written archives, damaged archives."""

from __future__ import annotations

import io
import random
import struct
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError, MetricNotFoundError
from cctool.readers import READERS, read
from cctool.readers.trees import cube
from tests.conftest import SHARED_DATA
from tests.reader_checks import time_limit

SAMPLE = "scorep-cpi-cubex"


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def raw_values(blobs: dict[str, bytes], metric: int, fmt: str) -> tuple[list[int], list[tuple]]:
    """Positions and per-location values of one metric, decoded with struct alone."""
    index = blobs[f"{metric}.index"]
    (count,) = struct.unpack_from("<i", index, 18)
    positions = list(struct.unpack_from(f"<{count}i", index, 22))
    data = blobs[f"{metric}.data"][10:]
    per = len(data) // struct.calcsize(fmt) // count
    values = struct.unpack(f"<{count * per}{fmt}", data)
    return positions, [values[i * per : (i + 1) * per] for i in range(count)]


def table(gf) -> pl.DataFrame:
    return gf.nodes.join(gf.node_values(), on="node")


def per_location(gf, name: str, metric: str) -> list[float]:
    node = gf.nodes["name"].to_list().index(name)
    return [gf.node_values([metric], rank=r, thread=0)[metric][node] for r in range(4)]


def test_cpi_cubex(data):
    folder = data(SAMPLE)
    gf = read(folder)
    assert gf.metadata["format"] == "cube"
    assert gf.num_nodes == 11 and gf.num_ranks == 4 and gf.num_threads == 1
    assert list(gf.exclusive) == ["visits", "time", "hits", "bytes_sent", "bytes_received"]
    assert "min_time (inc)" in gf.inclusive and "max_time (inc)" in gf.inclusive
    assert gf.metric("min_time (inc)").combine == "min"
    assert gf.metric("max_time (inc)").combine == "max"
    assert gf.default_metric == "time (inc)"
    t = table(gf)
    assert t["name"].to_list() == [
        "cpi", "main", "MPI_Init", "MPI_Comm_size", "MPI_Comm_rank", "iteration", "MPI_Bcast",
        "MPI_Reduce", "MPI_Bcast", "iteration.cold.1", "MPI_Finalize"]
    assert t["type"].to_list()[:3] == ["region", "function", "function"]
    blobs = members(folder / "profile.cubex")
    # visits (metric 0, EXCLUSIVE, depth-first positions): the 11th row is MPI_Finalize.
    _, visits = raw_values(blobs, 0, "Q")
    assert visits[10] == (1, 1, 1, 1)
    assert per_location(gf, "MPI_Finalize", "visits") == [1, 1, 1, 1]
    assert per_location(gf, "iteration.cold.1", "visits") == list(visits[9])  # 29, 29, 31, 24
    # time (metric 1, INCLUSIVE): row 0 is the root, rows 6/7 are iteration.cold.1 and
    # MPI_Finalize (children listed together after main's other children).
    _, time = raw_values(blobs, 1, "d")
    assert per_location(gf, "cpi", "time (inc)") == list(time[0])  # 5.0556 s per rank
    assert per_location(gf, "MPI_Finalize", "time (inc)") == list(time[7])
    main_exclusive = [time[1][r] - sum(time[i][r] for i in (2, 3, 4, 5, 6, 7)) for r in range(4)]
    assert per_location(gf, "main", "time") == pytest.approx(main_exclusive, abs=1e-12)
    assert t["time"].sum() == pytest.approx(sum(time[0]), rel=1e-12)  # nothing counted twice
    assert t.filter(pl.col("parent").is_null())["time (inc)"].sum() == pytest.approx(sum(time[0]))
    # bytes_sent (metric 9) has values for two cnodes only (sparse index).
    positions, sent = raw_values(blobs, 9, "Q")
    assert positions == [6, 7] and sent[0] == (800000, 0, 0, 0)
    assert per_location(gf, "MPI_Reduce", "bytes_sent") == list(sent[1])
    assert gf.metrics["bytes_sent"].sum() == sum(map(sum, sent))
    locations = {(r["rank"], r["thread"]) for r in gf.metadata["locations"]}
    assert locations == {(r, 0) for r in range(4)}
    gf.validate()


def test_metric_selection(data):
    folder = data(SAMPLE)
    gf = read(folder, metrics=["Time", "visits (inc)"])
    assert list(gf.exclusive) == ["time", "visits"]
    with pytest.raises(MetricNotFoundError):
        read(folder, metrics=["cycles"])


# ------------------------------------------------------------------ written archives
def anchor(metrics: str, cnodes: str, locations: str) -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<cube version="4.5"><attr key="Creator" value="test"/><metrics>{metrics}</metrics><program>
<region id="0" mod="" begin="-1" end="-1"><name>app</name><paradigm>measurement</paradigm>
<role>artificial</role></region>
<region id="1" mod="/src/a.c" begin="3" end="40"><name>main</name><paradigm>compiler</paradigm>
<role>function</role></region>
<region id="2" mod="/src/a.c" begin="10" end="20"><name>!$omp parallel @a.c:10</name>
<paradigm>openmp</paradigm><role>parallel</role></region>
<region id="3" mod="CUDA" begin="-1" end="-1"><name>saxpy</name><paradigm>cuda</paradigm>
<role>function</role></region>
<region id="4" mod="/src/a.c" begin="30" end="35"><name>loop</name><paradigm>user</paradigm>
<role>loop</role></region>
{cnodes}</program><system>{locations}</system></cube>""".encode()


METRICS = """<metric id="0" type="INCLUSIVE"><disp_name>Time</disp_name><uniq_name>time</uniq_name>
<dtype>DOUBLE</dtype><uom>sec</uom><metric id="1" type="EXCLUSIVE"><disp_name>Visits</disp_name>
<uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom></metric></metric>
<metric id="2" type="POSTDERIVED"><uniq_name>ratio</uniq_name><dtype>DOUBLE</dtype></metric>
<metric id="3" type="EXCLUSIVE"><uniq_name>hist</uniq_name><dtype>TAU_ATOMIC</dtype>
</metric>"""
# app(0) -> main(1) -> [parallel(2) -> saxpy(3, n=4), loop(4)]: the call tree
CNODES = """<cnode id="0" calleeId="0"><cnode id="1" calleeId="1">
<cnode id="2" calleeId="2" line="12"><cnode id="3" calleeId="3">
<parameter partype="numeric" parkey="n" parvalue="4"/></cnode></cnode>
<cnode id="4" calleeId="4"/></cnode></cnode>"""
LOCATIONS = """<systemtreenode Id="0"><name>node</name><class>node</class>
<locationgroup Id="1"><name>CUDA context</name><rank>0</rank><type>accelerator</type>
<location Id="2"><name>CUDA stream 0</name><rank>0</rank><type>accelerator</type></location>
</locationgroup>
<locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank><type>process</type>
<location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location>
<location Id="1"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
</locationgroup></systemtreenode>"""


def write_cubex(path: Path, endian: str = "<", compress: bool = False) -> Path:
    # Inclusive time, listed in the "children together" order: app, main, parallel, loop, saxpy.
    time = {0: [10.0, 6.0, 2.0], 1: [9.0, 6.0, 2.0], 2: [5.0, 6.0, 2.0], 3: [3.0, 0.0, 0.0],
            4: [1.0, 0.0, 2.0]}
    visits = {1: [1, 0, 0], 3: [0, 0, 7]}  # depth-first positions: main 1, saxpy 3
    files = {"anchor.xml": anchor(METRICS, CNODES, LOCATIONS)}
    for mid, rows, fmt in ((0, time, "d"), (1, visits, "Q")):
        order = list(rows)
        files[f"{mid}.index"] = (b"CUBEX.INDEX" + struct.pack(endian + "ihBi", 1, 0, 1, len(order))
                                 + struct.pack(f"{endian}{len(order)}i", *order))
        blocks = [struct.pack(f"{endian}3{fmt}", *rows[i]) for i in order]
        if compress:
            packed = [zlib.compress(b) for b in blocks]
            head = struct.pack(endian + "q", len(packed)) + b"".join(
                struct.pack(endian + "3q", 24 * i, 0, len(p)) for i, p in enumerate(packed))
            files[f"{mid}.data"] = b"ZCUBEX.DATA" + head + b"".join(packed)
        else:
            files[f"{mid}.data"] = b"CUBEX.DATA" + b"".join(blocks)
    with tarfile.open(path, "w") as tar:
        for name, blob in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return path


@pytest.mark.parametrize(("endian", "compress"), [("<", False), (">", False), ("<", True)])
def test_written_cubex(tmp_path, endian, compress):
    gf = read(write_cubex(tmp_path / "run.cubex", endian, compress))
    t = table(gf)
    assert t["name"].to_list() == ["app", "main", "!$omp parallel @a.c:10", "saxpy [n=4]", "loop"]
    assert t["type"].to_list() == ["region", "function", "region", "function", "loop"]
    assert t["callsite"].to_list() == [0, 0, 12, 0, 0]
    assert t["module"].to_list() == [None, None, None, "CUDA", None]
    assert list(gf.exclusive) == ["time", "visits"]
    assert gf.metadata["skipped_metrics"] == []  # POSTDERIVED/TAU_ATOMIC have no data files
    # Location 2 (a CUDA stream) belongs to rank 0 and comes after its two CPU threads.
    assert [(r["rank"], r["thread"]) for r in gf.metadata["locations"]] == [(0, 0), (0, 1), (0, 2)]

    def at(name: str, metric: str, thread: int) -> float:
        node = t["name"].to_list().index(name)
        return gf.node_values([metric], thread=thread)[metric][node]

    assert at("app", "time (inc)", 0) == 10.0
    assert at("main", "time", 0) == 1.0  # 9 - 5 - 3
    assert at("!$omp parallel @a.c:10", "time", 0) == 4.0
    assert at("loop", "time (inc)", 0) == 3.0
    assert at("saxpy [n=4]", "time (inc)", 2) == 2.0
    assert at("main", "visits (inc)", 2) == 7
    assert at("saxpy [n=4]", "visits", 2) == 7
    gf.validate()


# ------------------------------------------------------------------ broken input
def damaged(blob: bytes, seed: int, flips: int = 40) -> Iterator[tuple[str, bytes]]:
    """Truncations at several offsets, then random single-byte changes."""
    n = len(blob)
    for cut in sorted({0, 1, 9, 15, 16, 17, 47, 64, n // 7, n // 3, n // 2, n - 9, n - 1}):
        yield f"cut at {cut}", blob[:cut]
    rng = random.Random(seed)
    for _ in range(flips):
        pos, new = rng.randrange(n), rng.randrange(256)
        yield f"byte {pos} set to {new:#x}", blob[:pos] + bytes([new]) + blob[pos + 1 :]


def read_damaged(read_fn: Callable[[], Any], label: str) -> bool:
    """True if the reader refused the input with a CctoolError; a read must validate."""
    try:
        with time_limit(20):
            gf = read_fn()
    except CctoolError:
        return True
    except Exception as exc:  # the failure these tests look for
        pytest.fail(f"{label}: {type(exc).__name__}: {exc}")
    gf.validate()
    return False


def test_damaged_archives(data):
    """Truncations and random byte changes: a CctoolError or a valid tree, never a hang."""
    path = data(SAMPLE) / "profile.cubex"
    good = path.read_bytes()
    refused = 0
    for seed in range(3):
        for label, blob in damaged(good, seed):
            path.write_bytes(blob)
            refused += read_damaged(lambda: cube.read(path), label)
    assert refused >= 3 * 13


@pytest.mark.parametrize("damage", ["index-order", "index-range", "data-short", "no-anchor",
                                    "bad-xml", "entity", "location-ids"])
def test_damaged_members(tmp_path, damage):
    path = write_cubex(tmp_path / "run.cubex")
    blobs = members(path)
    if damage == "index-order":
        blobs["0.index"] = blobs["0.index"][:11] + b"\7\7\7\7" + blobs["0.index"][15:]
    elif damage == "index-range":
        blobs["1.index"] = blobs["1.index"][:-4] + struct.pack("<i", 99)
    elif damage == "data-short":
        blobs["1.data"] = blobs["1.data"][:-3]
    elif damage == "no-anchor":
        del blobs["anchor.xml"]
    elif damage == "bad-xml":
        blobs["anchor.xml"] = blobs["anchor.xml"][:200]
    elif damage == "entity":  # an entity bomb must be refused, not expanded
        blobs["anchor.xml"] = (b'<?xml version="1.0"?><!DOCTYPE cube [<!ENTITY a "aaaaaaaaaa">'
                               b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><cube>&b;</cube>')
    else:
        blobs["anchor.xml"] = blobs["anchor.xml"].replace(b'location Id="2"', b'location Id="5"')
    with tarfile.open(path, "w") as tar:
        for name, blob in blobs.items():
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    with pytest.raises(CctoolError):
        cube.read(path)


# ------------------------------------------------------------------ format detection
def test_sniff(data, tmp_path):
    assert ("cube", "cctool.readers.trees.cube") in READERS
    folder = data(SAMPLE)
    assert cube.sniff(folder) and cube.sniff(folder / "profile.cubex")
    assert cube.sniff(write_cubex(tmp_path / "x.cubex"))
    plain = tmp_path / "other.tar"
    with tarfile.open(plain, "w") as tar:
        tar.addfile(tarfile.TarInfo("readme.txt"), io.BytesIO(b""))
    assert not cube.sniff(plain)
    for other in sorted(SHARED_DATA.iterdir()):
        if other.is_dir() and other.name != SAMPLE:
            copy = data(other.name)
            assert not cube.sniff(copy), other.name
            for f in copy.iterdir():
                assert not cube.sniff(f), f


def test_dense_arrays_are_float64(data):
    gf = read(data(SAMPLE))
    assert all(gf.metrics.schema[c] == pl.Float64 for c in gf.metric_columns)
    assert np.array_equal(gf.nodes["cube_id"].to_numpy(), [0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9])
