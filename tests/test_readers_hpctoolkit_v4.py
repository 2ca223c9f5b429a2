"""HPCToolkit sparse database (v4) reader: real samples, written databases, corruption."""

from __future__ import annotations

import random
import struct
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from cctool.errors import CctoolError, CctoolWarning, MetricNotFoundError
from cctool.readers import READERS
from cctool.readers import read_declared as read
from cctool.readers.hpctoolkit import v4 as hpctoolkit_v4
from cctool.readers.hpctoolkit import xml as hpctoolkit
from tests.conftest import SHARED_DATA
from tests.hpctoolkit_v4_writer import (
    CALL,
    FUNCTION,
    INLINED,
    INSTRUCTION,
    LINE,
    LOOP,
    Ctx,
    Database,
    Entry,
    Profile,
    write,
)
from tests.reader_checks import time_limit

CPI = "hpctoolkit-cpi-v4-database"
GAMESS = "hpctoolkit-gamess"


# ------------------------------------------------------------------ an independent decoder
def decode(folder: Path) -> dict:
    """Contexts, execution-scope metric ids and per-profile values, with struct alone."""
    m = (folder / "meta.db").read_bytes()
    q = lambda b, o: struct.unpack_from("<Q", b, o)[0]  # noqa: E731
    sec = lambda i: q(m, 0x18 + 16 * i)  # noqa: E731
    metrics, parent = {}, {}
    pm = sec(2)
    for i in range(struct.unpack_from("<I", m, pm + 8)[0]):
        md = q(m, pm) + m[pm + 12] * i
        name = m[q(m, md) : m.index(b"\0", q(m, md))].decode()
        for j in range(struct.unpack_from("<H", m, md + 24)[0]):
            psi = q(m, md + 8) + m[pm + 13] * j
            if m[q(m, psi) + 8] == 2:  # execution scope
                metrics[struct.unpack_from("<H", m, psi + 8)[0]] = name

    def children(ptr: int, size: int, up: int) -> None:
        end = ptr + size
        while ptr < end:
            cid = struct.unpack_from("<I", m, ptr + 16)[0]
            parent[cid] = up
            children(q(m, ptr + 8), q(m, ptr), cid)
            ptr += 32 + 8 * m[ptr + 23]

    ctx = sec(3)
    for i in range(struct.unpack_from("<H", m, ctx + 8)[0]):
        e = q(m, ctx) + m[ctx + 10] * i
        parent[struct.unpack_from("<I", m, e + 16)[0]] = None
        children(q(m, e + 8), q(m, e), struct.unpack_from("<I", m, e + 16)[0])

    p = (folder / "profile.db").read_bytes()
    info = q(p, 0x18)
    profiles = []
    for i in range(struct.unpack_from("<I", p, info + 8)[0]):
        pi = q(p, info) + p[info + 12] * i
        nval, pval, nctx, pctx = q(p, pi), q(p, pi + 8), struct.unpack_from("<I", p, pi + 16)[0], \
            q(p, pi + 24)
        starts = [q(p, pctx + 12 * k + 4) for k in range(nctx)] + [nval]
        values: dict[int, dict[int, float]] = {}
        for k in range(nctx):
            cid = struct.unpack_from("<I", p, pctx + 12 * k)[0]
            for v in range(starts[k], starts[k + 1]):
                mid, val = struct.unpack_from("<Hd", p, pval + 10 * v)
                values.setdefault(cid, {})[mid] = val
        profiles.append({"summary": bool(struct.unpack_from("<I", p, pi + 40)[0] & 1),
                         "values": values})
    return {"parent": parent, "exec": metrics, "profiles": profiles}


def exec_total(raw: dict, ctx: int, metric: str) -> float:
    """Sum over non-summary profiles of a context's execution (inclusive) value."""
    mid = next(i for i, n in raw["exec"].items() if n == metric)
    return sum(pr["values"].get(ctx, {}).get(mid, 0.0) for pr in raw["profiles"]
               if not pr["summary"])


def node_table(gf) -> pl.DataFrame:
    return gf.nodes.join(gf.node_values(), on="node")


# ------------------------------------------------------------------ the real samples
def test_cpi_v4_structure_and_values(data):
    path = data(CPI)
    gf = read(path)
    assert gf.metadata["format"] == "hpctoolkit-v4"
    assert gf.num_nodes == 147
    assert list(gf.exclusive) == ["time"] and list(gf.inclusive) == ["time (inc)"]
    assert gf.metadata["metric_units"] == {"time": "s"}
    assert gf.num_ranks == 4 and len(gf.metadata["profiles"]) == 16  # 4 ranks x 4 threads
    assert {(p["rank"], p["thread"]) for p in gf.metadata["profiles"]} == {
        (r, t) for r in range(4) for t in range(4)}
    raw = decode(path)
    assert len(raw["parent"]) == 205  # 3 entry points and 202 contexts listed in meta.db
    nodes = node_table(gf)
    # Each sample counted once: all exclusive time = the programme total hpcprof stored on the
    # global context (id 0) of every thread profile, and = the summary profile's.
    total = exec_total(raw, 0, "CPUTIME (sec)")
    assert nodes["time"].sum() == pytest.approx(total, rel=1e-12)
    assert nodes.filter(pl.col("type") == "entry")["time (inc)"].sum() == pytest.approx(total)
    summary = raw["profiles"][0]["values"][0][next(iter(raw["exec"]))]
    assert total == pytest.approx(summary, rel=1e-12)
    # Inclusive values at function and loop nodes are hpcprof's execution values.
    for row in nodes.filter(pl.col("type").is_in(["function", "loop", "entry"])).iter_rows(
            named=True):
        want = exec_total(raw, row["hpctoolkit_id"], "CPUTIME (sec)")
        assert row["time (inc)"] == pytest.approx(want, rel=1e-9, abs=1e-12), row["name"]
    # One record decoded by hand with xxd: profile 1 (tuple at 0x370: RANK 1, THREAD 0) lists
    # ctx 80 at 0x2478 with start 73; value 73 at 0x1cb6 is metric 3 = 0.058643.
    reduce = nodes.filter(pl.col("name") == "PMPI_Reduce")
    assert reduce["callsite"].to_list() == [52] and reduce["hpctoolkit_id"].to_list() == [80]
    one = gf.node_values(["time (inc)"], rank=1, thread=0)["time (inc)"][reduce["node"][0]]
    assert one == pytest.approx(0.058643, rel=1e-12)  # a sum of own costs: 1 ulp off
    gf.validate()


def test_cpi_v4_tree_shape(data):
    gf = read(data(CPI))
    nodes = node_table(gf)
    main = nodes.filter(pl.col("name") == "main").row(0, named=True)
    kids = nodes.filter(pl.col("parent") == main["node"])
    # Calls hang from the calling function; the call line is kept as callsite.
    assert sorted(zip(kids["name"], kids["callsite"], strict=True)) == [
        ("MPI_Finalize", 62), ("PMPI_Bcast", 40), ("PMPI_Reduce", 52)]
    assert set(nodes["type"]) == {"entry", "function", "loop", "statement"}
    assert nodes.filter(pl.col("type") == "entry")["name"].to_list() == [
        "application thread", "main thread"]
    # hpcprof's " [libmpi.so.40.30.1]" suffix is dropped; the module is a column.
    bcast = nodes.filter(pl.col("name") == "PMPI_Bcast").row(0, named=True)
    assert bcast["module"].endswith("libmpi.so.40.30.1")
    # Line contexts that only held a call are gone: every statement has a cost of its own.
    assert (nodes.filter(pl.col("type") == "statement")["time"] > 0).all()
    gf.validate()


def test_cpi_same_functions_as_xml_database(data):
    """The v4 and XML cpi databases are two different runs of the same program.

    The XML one ran in 2017 with MVAPICH2 over PSM (1 s per rank), the v4 one with Open MPI
    over UCX (0.33 s in all), so library internals, which MPI calls got samples and the
    totals genuinely differ. The application's own functions, the MPI call made at the same
    source line, the node kinds and naming agree, and each total matches its own file.
    """
    v4 = read(data(CPI))
    xml = read(data("hpctoolkit-cpi-database"))
    a, b = node_table(v4), node_table(xml)
    app = lambda t: set(t.filter(pl.col("module").str.ends_with("cpi"))["name"])  # noqa: E731
    assert app(a) == app(b) == {"main"}
    for t in (a, b):
        fin = t.filter(pl.col("name") == "MPI_Finalize").row(0, named=True)
        assert fin["callsite"] == 62  # MPI_Finalize() is on cpi.c:62 in both
        assert t.filter(pl.col("node") == fin["parent"])["name"].to_list() == ["main"]
    mpi = lambda t: {n for n in t["name"] if n.startswith(("MPI_", "PMPI_"))}  # noqa: E731
    assert mpi(a) & mpi(b) == {"MPI_Finalize"}
    assert {"function", "statement"} <= set(a["type"]) & set(b["type"])
    # Totals in seconds: the XML reader keeps hpcprof's microseconds.
    assert xml.metadata["metric_units"]["time"] == "usec"
    tx = b.filter(pl.col("parent").is_null())["time (inc)"].sum() / 1e6
    tv = a.filter(pl.col("parent").is_null())["time (inc)"].sum()
    assert tx == pytest.approx(b["time"].sum() / 1e6) and tv == pytest.approx(a["time"].sum())
    assert 3.9 < tx < 4.1 and 0.30 < tv < 0.35  # 4 ranks each: ~1 s vs ~0.03-0.1 s per rank
    v4.validate()
    xml.validate()


def test_gamess_gpu_database(data):
    path = data(GAMESS)
    gf = read(path)
    assert gf.num_nodes == 7751
    assert gf.num_ranks == 16
    profiles = gf.metadata["profiles"]
    kinds = [tuple(i["kind"] for i in p["ids"]) for p in profiles]
    assert kinds.count(("NODE", "RANK", "THREAD")) == 48
    assert kinds.count(("NODE", "RANK", "GPUCONTEXT", "GPUSTREAM")) == 16
    # Ranks 0-7 have 5 CPU threads and 2 GPU streams; streams are numbered after threads.
    rank0 = sorted((p["thread"], p["ids"][-1]["kind"]) for p in profiles if p["rank"] == 0)
    assert [k for _, k in rank0] == ["THREAD"] * 5 + ["GPUSTREAM"] * 2
    assert set(gf.exclusive) == {"REALTIME", "GPUOP", "GKER", "GXCOPY", "GXCOPY:COUNT"}
    assert len(gf.metadata["empty_metrics"]) == 39  # of 44 metrics, 39 are zero everywhere
    assert gf.default_metric == "REALTIME (inc)"
    raw = decode(path)
    # profile.db has values for 5931 contexts meta.db does not list (call sites and leaf
    # instructions); their cost must still be counted, on the nearest listed context.
    valued = {c for pr in raw["profiles"] for c in pr["values"]}
    assert len(valued - set(raw["parent"]) - {0}) == 5931
    nodes = node_table(gf)
    realtime = exec_total(raw, 0, "REALTIME (sec)")
    assert realtime == pytest.approx(4008.423769, abs=1e-6)
    assert nodes["REALTIME"].sum() == pytest.approx(realtime, rel=1e-12)
    roots = nodes.filter(pl.col("parent").is_null())
    assert roots["REALTIME (inc)"].sum() == pytest.approx(realtime, rel=1e-12)
    assert roots["GKER (inc)"].sum() == pytest.approx(exec_total(raw, 0, "GKER (sec)"))
    gamess_ = nodes.filter(pl.col("name") == "gamess_").row(0, named=True)
    assert gamess_["REALTIME (inc)"] == pytest.approx(
        exec_total(raw, gamess_["hpctoolkit_id"], "REALTIME (sec)"), rel=1e-12)
    # Exclusive costs: no negative values, and a function's cost is not repeated on its loops.
    assert min(gf.metrics[c].min() for c in gf.exclusive) >= 0
    gf.validate()


def test_metric_selection(data):
    path = data(GAMESS)
    gf = read(path, metrics=["GKER (inc)", "REALTIME (sec)"])
    assert list(gf.exclusive) == ["GKER", "REALTIME"]  # in the order asked for
    assert read(path, metrics=["GMEM:UNK"]).exclusive == ("GMEM:UNK",)  # asked for: kept
    with pytest.raises(MetricNotFoundError):
        read(path, metrics=["no such metric"])


# ------------------------------------------------------------------ written databases
def cuda_database(**kw) -> Database:
    """A CUDA run: CPU threads and GPU streams, PC sampling, unlisted instruction contexts."""
    kernel = Ctx(8, FUNCTION, CALL, function=3, children=[
        Ctx(9, LOOP, file=1, line=20, children=[Ctx(10, LINE, file=1, line=21, children=[
            Ctx(11, INSTRUCTION, module=2, offset=0x140),
            Ctx(12, INSTRUCTION, module=2, offset=0x150, listed=False)])]),
        Ctx(13, LINE, file=1, line=25)])
    main = Ctx(2, FUNCTION, CALL, function=0, children=[
        Ctx(3, LINE, file=0, line=10, children=[
            Ctx(4, INSTRUCTION, module=0, offset=0x1010, listed=False, children=[
                Ctx(5, FUNCTION, CALL, function=1, children=[
                    Ctx(6, LINE, file=2, children=[
                        Ctx(7, FUNCTION, CALL, function=2, children=[kernel])])])])]),
        Ctx(14, LOOP, file=0, line=12, children=[
            Ctx(15, LINE, file=0, line=13),
            Ctx(16, LINE, file=0, line=14, children=[
                Ctx(17, INSTRUCTION, module=0, offset=0x1100, listed=False, children=[
                    Ctx(18, FUNCTION, INLINED, function=4, children=[
                        Ctx(19, LINE, file=0, line=31)])])])]),
        Ctx(20, LINE, file=0, line=40, children=[
            Ctx(21, FUNCTION, CALL, function=5, children=[Ctx(22, FUNCTION, CALL, function=6)])])])
    helper = Ctx(31, INSTRUCTION, CALL, module=3, offset=0x1234, children=[
        Ctx(32, FUNCTION, CALL, function=7, children=[Ctx(33, LINE, file=3)])])
    cpu = lambda r, t: [("NODE", 0, 0xABC), ("RANK", r, r), ("THREAD", t, t)]  # noqa: E731
    gpu = lambda r, s: [("NODE", 0, 0xABC), ("RANK", r, r), ("GPUCONTEXT", 0, 0),  # noqa: E731
                        ("GPUSTREAM", s, s)]
    t, k, h2d, gins, stall = "CPUTIME (sec)", "GKER (sec)", "GXCOPY:H2D (B)", "GINS", "GINS:STL_ANY"
    return Database(
        metrics=[t, k, h2d, gins, stall, "GMEM:UNK (B)"],
        modules=["/app/saxpy", "/usr/lib/libcudart.so.12", "gpubins/5f3a.gpubin",
                 "/usr/lib/libcuda.so.1"],
        files=["/src/main.cu", "/src/saxpy.cu", "[libcudart.so.12]", "[libcuda.so.1]"],
        functions=[
            ("main", 0, 0x1000, 0, 5),
            ("cudaLaunchKernel [libcudart.so.12]", 1, 0x2000, None, 0),  # hpcprof's suffix
            ("<gpu kernel>", None, 0, None, 0),
            ("saxpy(float*, float*)", 2, 0x100, 1, 18),
            ("helper", 0, 0x1800, 0, 30),
            ("cudaMemcpy [libcudart.so.12]", 1, 0x3000, None, 0),
            ("<gpu copy>", None, 0, None, 0),
            (None, 3, 0x5000, None, 0),  # anonymous: only a module and an offset
        ],
        entries=[Entry(1, 1, "main thread", [main]), Entry(30, 2, "application thread", [helper]),
                 Entry(40, 0, "unknown entry", [Ctx(41, FUNCTION, CALL)])],
        profiles=[
            Profile(cpu(0, 0), {2: {t: 1.0}, 3: {t: 0.125}, 4: {t: 0.0625}, 6: {t: 0.25},
                                15: {t: 2.0}, 19: {t: 0.5}}),
            Profile(cpu(0, 1), {33: {t: 0.75}, 41: {t: 0.05}}),
            Profile(gpu(0, 0), {7: {k: 3.0}, 11: {gins: 100, stall: 40},
                                12: {gins: 60, stall: 10}, 13: {gins: 25}}),
            Profile(gpu(0, 1), {22: {h2d: 4096}}),
            Profile(cpu(1, 0), {15: {t: 1.5}, 19: {t: 0.25}}),
            Profile(gpu(1, 0), {7: {k: 2.5}, 11: {gins: 80}}),
        ],
        **kw,
    )


def value(gf, name: str, metric: str, rank: int, thread: int) -> float:
    node = gf.nodes["name"].to_list().index(name)
    return gf.node_values([metric], rank=rank, thread=thread)[metric][node]


@pytest.mark.parametrize("pad", [0, 8, 24])
def test_cuda_style_database(tmp_path, pad):
    gf = read(write(cuda_database(pad=pad), tmp_path / "db"))
    nodes = node_table(gf)
    assert gf.num_nodes == 22
    assert sorted(nodes.filter(pl.col("type") == "function")["name"]) == sorted([
        "main", "cudaLaunchKernel", "<gpu kernel>", "saxpy(float*, float*)", "helper",
        "cudaMemcpy", "<gpu copy>", "<unknown procedure> 0x5000",
        "<unknown procedure> 0x1234",  # an instruction reached by a call: module + offset
        "<unknown procedure>"])
    assert sorted(nodes.filter(pl.col("type") == "statement")["name"]) == sorted([
        "main.cu:10", "[libcudart.so.12]:0", "saxpy.cu:21", "saxpy.cu:25", "main.cu:13",
        "main.cu:31", "[libcuda.so.1]:0"])  # main.cu:14 and main.cu:40 only held calls
    assert list(gf.exclusive) == ["time", "GKER", "GXCOPY:H2D", "GINS", "GINS:STL_ANY"]
    assert gf.metadata["empty_metrics"] == ["GMEM:UNK"]
    assert gf.metadata["metric_units"] == {"time": "s", "GKER": "s", "GXCOPY:H2D": "B",
                                           "GINS": "GINS", "GINS:STL_ANY": "GINS:STL_ANY"}
    locs = {(p["rank"], p["thread"]): p["ids"][-1]["kind"] for p in gf.metadata["profiles"]}
    assert locs == {(0, 0): "THREAD", (0, 1): "THREAD", (0, 2): "GPUSTREAM",
                    (0, 3): "GPUSTREAM", (1, 0): "THREAD", (1, 1): "GPUSTREAM"}
    parent_of = lambda n: nodes["name"][nodes.filter(pl.col("name") == n)["parent"][0]]  # noqa: E731
    assert parent_of("helper") == "Loop@main.cu:12"  # an inlined call on main.cu:14
    assert nodes.filter(pl.col("name") == "helper")["callsite"].to_list() == [14]
    assert parent_of("cudaMemcpy") == "main"
    assert parent_of("<gpu kernel>") == "cudaLaunchKernel"
    # Own costs: the unlisted call instruction's 0.0625 s stays on its line.
    assert value(gf, "main.cu:10", "time", 0, 0) == 0.1875
    assert value(gf, "main", "time", 0, 0) == 1.0
    assert value(gf, "main", "time (inc)", 0, 0) == 3.9375
    assert value(gf, "helper", "time (inc)", 1, 0) == 0.25
    # PC samples: listed (100) and unlisted (60) instructions fold into saxpy.cu:21.
    assert value(gf, "saxpy.cu:21", "GINS", 0, 2) == 160
    assert value(gf, "saxpy.cu:21", "GINS:STL_ANY", 0, 2) == 50
    assert value(gf, "saxpy(float*, float*)", "GINS (inc)", 0, 2) == 185
    assert value(gf, "<gpu kernel>", "GKER", 1, 1) == 2.5
    assert value(gf, "cudaMemcpy", "GXCOPY:H2D (inc)", 0, 3) == 4096
    assert gf.metrics["time"].sum() == pytest.approx(6.4875)
    assert gf.default_metric == "time (inc)"
    gf.validate()


def perf_database(**kw) -> Database:
    """A perf-event run without MPI: three threads with CORE ids, unit-less metrics."""
    c, i = "perf::CYCLES", "perf::INSTRUCTIONS"
    return Database(
        metrics=[c, i], modules=["/bin/app"], files=["/src/app.c"],
        functions=[("main", 0, 0x10, 0, 3), ("worker", 0, 0x80, 0, 20)],
        entries=[
            Entry(1, 1, "main thread", [Ctx(2, FUNCTION, CALL, function=0, children=[
                Ctx(3, LOOP, file=0, line=8, children=[Ctx(4, LINE, file=0, line=9)])])]),
            Entry(5, 2, "application thread", [Ctx(6, FUNCTION, CALL, function=1, children=[
                Ctx(7, LINE, file=0, line=22)])])],
        profiles=[
            Profile([("NODE", 0, 7), ("THREAD", 0, 0), ("CORE", 3, 3)], {4: {c: 1e9, i: 2e9}}),
            Profile([("NODE", 0, 7), ("THREAD", 2, 2), ("CORE", 7, 7)], {7: {c: 3e8}}),
            Profile([("NODE", 0, 7), ("THREAD", 1, 1), ("CORE", 5, 5)], {7: {c: 5e8, i: 1e8}}),
        ],
        **kw,
    )


@pytest.mark.parametrize("scopes", [("point", "function", "lex_aware", "execution"),
                                    ("execution",)])
def test_perf_style_database(tmp_path, scopes):
    gf = read(write(perf_database(scopes=scopes, pad=16), tmp_path / "db"))
    assert list(gf.exclusive) == ["perf::CYCLES", "perf::INSTRUCTIONS"]
    assert gf.metadata["metric_units"] == {"perf::CYCLES": "perf::CYCLES",
                                           "perf::INSTRUCTIONS": "perf::INSTRUCTIONS"}
    assert gf.default_metric == "perf::CYCLES (inc)"
    assert gf.num_ranks == 1 and sorted(gf.locations["thread"]) == [0, 1, 2]
    assert {p["thread"]: p["ids"][1]["logical"] for p in gf.metadata["profiles"]} == {
        0: 0, 1: 1, 2: 2}  # thread numbers follow THREAD ids, not profile order
    assert value(gf, "app.c:22", "perf::CYCLES", 0, 2) == 3e8
    assert value(gf, "Loop@app.c:8", "perf::INSTRUCTIONS (inc)", 0, 0) == 2e9
    assert gf.metrics["perf::CYCLES"].sum() == 1.8e9
    gf.validate()


def test_metric_without_execution_scope_is_empty(tmp_path):
    gf = read(write(perf_database(scopes=("point", "function")), tmp_path / "db"))
    assert gf.metadata["empty_metrics"] == ["perf::CYCLES", "perf::INSTRUCTIONS"]
    assert gf.metric_columns == ()
    gf.validate()


def test_written_cct_db_agrees_with_profile_db(tmp_path):
    """The writer's cct.db (context-major) holds the same values as its profile.db."""
    folder = write(cuda_database(), tmp_path / "db")
    raw = decode(folder)
    c = (folder / "cct.db").read_bytes()
    q = lambda o: struct.unpack_from("<Q", c, o)[0]  # noqa: E731
    info = q(0x18)
    for ctx in (7, 11, 12, 15):
        ci = q(info) + c[info + 12] * ctx
        nval, pval, nmet, pmet = q(ci), q(ci + 8), struct.unpack_from("<H", c, ci + 16)[0], \
            q(ci + 24)
        starts = [struct.unpack_from("<Q", c, pmet + 10 * k + 2)[0] for k in range(nmet)] + [nval]
        for k in range(nmet):
            mid = struct.unpack_from("<H", c, pmet + 10 * k)[0]
            for v in range(starts[k], starts[k + 1]):
                prof, val = struct.unpack_from("<Id", c, pval + 12 * v)
                assert raw["profiles"][prof]["values"][ctx][mid] == val


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
    """True if the reader refused the input with a CctoolError; a read must validate.

    A read may warn (values lost to the damage are reported, not hidden)."""
    try:
        with time_limit(20), warnings.catch_warnings():
            warnings.simplefilter("ignore", CctoolWarning)
            gf = read_fn()
    except CctoolError:
        return True
    except Exception as exc:  # the failure these tests look for
        pytest.fail(f"{label}: {type(exc).__name__}: {exc}")
    gf.validate()
    return False


@pytest.mark.parametrize("name", ["meta.db", "profile.db"])
def test_damaged_files(data, name):
    """Truncations and random byte changes: a CctoolError or a valid tree, never a hang."""
    folder = data(CPI)
    good = (folder / name).read_bytes()
    refused = 0
    for seed in range(4):
        for label, blob in damaged(good, seed):
            (folder / name).write_bytes(blob)
            refused += read_damaged(lambda: hpctoolkit_v4.read(folder), f"{name} {label}")
    assert refused >= 4 * 13  # every truncation at least: the end-of-file marker is gone


@pytest.mark.parametrize("name", ["meta.db", "profile.db"])
def test_damaged_headers(data, name):
    """Each byte of the file header and its section table, set to 0xFF in turn."""
    folder = data(CPI)
    good = (folder / name).read_bytes()
    for pos in range(0x90 if name == "meta.db" else 0x30):
        (folder / name).write_bytes(good[:pos] + b"\xff" + good[pos + 1 :])
        read_damaged(lambda: hpctoolkit_v4.read(folder), f"{name} byte {pos}")


def test_cct_db_is_not_needed(data):
    src = data(CPI)
    before = read(src)
    (src / "cct.db").write_bytes((src / "cct.db").read_bytes()[:100])
    after = read(src)
    assert after.metrics.equals(before.metrics) and after.nodes.equals(before.nodes)


def test_missing_profile_db(data):
    src = data(CPI)
    (src / "profile.db").unlink()
    with pytest.raises(CctoolError, match="profile.db"):
        read(src)


# ------------------------------------------------------------------ format detection
def test_sniff(data):
    assert ("hpctoolkit-v4", "cctool.readers.hpctoolkit.v4") in READERS
    for name in (CPI, GAMESS):
        folder = data(name)
        assert hpctoolkit_v4.sniff(folder) and hpctoolkit_v4.sniff(folder / "meta.db")
        assert not hpctoolkit.sniff(folder)
    for folder in sorted(SHARED_DATA.iterdir()):
        if folder.is_dir() and folder.name not in (CPI, GAMESS):
            copy = data(folder.name)
            assert not hpctoolkit_v4.sniff(copy), folder.name
            for f in copy.iterdir():
                assert not hpctoolkit_v4.sniff(f), f


def test_values_are_float64_and_keys_int32(data):
    gf = read(data(CPI))
    assert gf.metrics.schema["node"] == pl.Int32
    assert all(gf.metrics.schema[c] == pl.Float64 for c in gf.metric_columns)
    assert np.array_equal(gf.nodes["node"].to_numpy(), np.arange(gf.num_nodes))
