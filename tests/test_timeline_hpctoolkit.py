"""HPCToolkit's own trace.db (tests/data/hpctoolkit-v4/loops-cputime-t.nostruct.d, hpcprof's
test database of a traced 4-thread run): the timeline's time per context equals the trace
lines decoded here with ``struct`` alone (element i lasts until element i+1; context 0 is
idle), and a window over the whole run folds to the same profile.
"""

from __future__ import annotations

import shutil
import struct
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.model.timeline import fold, parse_window
from cctool.readers import read
from cctool.readers.timelines import read_timeline

DB = Path(__file__).parent / "data" / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d"


def _decode(path: Path) -> dict[int, dict[int, int]]:
    """profIndex -> {ctxId: ns} from the raw file (FORMATS.md v4.0, trace.db)."""
    raw = path.read_bytes()
    (sec,) = struct.unpack_from("<Q", raw, 0x18)
    p_traces, n_traces, stride = struct.unpack_from("<QIB", raw, sec)
    out: dict[int, dict[int, int]] = {}
    for i in range(n_traces):
        prof, _, start, end = struct.unpack_from("<IIQQ", raw, p_traces + i * stride)
        elems = [struct.unpack_from("<QI", raw, at) for at in range(start, end, 12)]
        per: dict[int, int] = defaultdict(int)
        for (ts, ctx), (nxt, _) in zip(elems, elems[1:], strict=False):
            if ctx:
                per[ctx] += nxt - ts
        out[prof] = dict(per)
    return out


def test_trace_db_times_per_context() -> None:
    tl = read_timeline(DB)
    tl.validate()
    assert tl.locations.height == 4
    whole = fold(tl)
    whole.validate()
    profiles = {p["profile"]: (p["rank"], p["thread"]) for p in tl.tree.metadata["profiles"]}
    ids = tl.tree.nodes["hpctoolkit_id"].to_list()
    got = whole.metrics.select("node", "rank", "thread", "time").filter(pl.col("time") > 0)
    checked = 0
    for prof, per_ctx in _decode(DB / "trace.db").items():
        rank, thread = profiles[prof]
        mine = got.filter((pl.col("rank") == rank) & (pl.col("thread") == thread))
        assert mine["time"].sum() == pytest.approx(sum(per_ctx.values()) / 1e9, rel=1e-12)
        by_ctx = {ids[n]: t for n, t in zip(mine["node"], mine["time"], strict=True)}
        for ctx, ns in per_ctx.items():
            if ctx in by_ctx:  # contexts the tree holds themselves (others go to an ancestor)
                assert by_ctx[ctx] == pytest.approx(ns / 1e9, rel=1e-12)
                checked += 1
    assert checked >= 8
    # The same tree as the profile, and about the profile's CPU time per thread (a sampled
    # trace: within 1 % here, not equal).
    prof = read(DB)
    assert prof.nodes.equals(tl.tree.nodes)
    cpu = prof.metrics.group_by("rank", "thread").agg(pl.col("time").sum()).sort("thread")
    trace = got.group_by("rank", "thread").agg(pl.col("time").sum()).sort("thread")
    assert (trace["time"] / cpu["time"] - 1).abs().max() < 0.01  # type: ignore[operator]
    span_s = (tl.span[1] - tl.span[0]) / 1e9
    again = fold(tl, parse_window(f"0:{span_s}"))
    assert again.metrics["time"].sum() == pytest.approx(whole.metrics["time"].sum(), rel=1e-12)


def test_counts_of_running_samples_per_line() -> None:
    """The page's first pass: each line's samples that ran (a context, a later next
    timestamp) and when the last of them ends, as the raw file says."""
    from cctool.readers.timelines import read_timeline_parts

    raw = (DB / "trace.db").read_bytes()
    (sec,) = struct.unpack_from("<Q", raw, 0x18)
    p_traces, n_traces, stride = struct.unpack_from("<QIB", raw, sec)
    want = {}
    for i in range(n_traces):
        prof, _, start, end = struct.unpack_from("<IIQQ", raw, p_traces + i * stride)
        elems = [struct.unpack_from("<QI", raw, at) for at in range(start, end, 12)]
        ends = [nxt for (ts, ctx), (nxt, _) in zip(elems, elems[1:], strict=False)
                if ctx and nxt > ts]
        want[prof] = (len(ends), ends[-1] if ends else 0)
    parts = read_timeline_parts(DB)
    assert parts.counts is not None
    profiles = {(p["rank"], p["thread"]): p["profile"] for p in parts.tree.metadata["profiles"]}
    got = {profiles[(c.rank, c.thread)]: (c.segments, c.last) for c in parts.counts}
    assert got == want
    assert all(n > 100 for n, _ in got.values())


def test_no_trace_db_is_said(tmp_path: Path) -> None:
    for name in ("meta.db", "profile.db"):
        shutil.copy(DB / name, tmp_path / name)
    with pytest.raises(ReaderError, match="no trace.db"):
        read_timeline(tmp_path)
    raw = bytearray((DB / "trace.db").read_bytes())
    raw[-8:] = b"xxxxxxxx"
    (tmp_path / "trace.db").write_bytes(bytes(raw))
    with pytest.raises(ReaderError, match="footer"):
        read_timeline(tmp_path)


def test_synthetic_trace_db_adds_up_to_the_profile(tmp_path: Path) -> None:
    """``python -m cctool.synth --format v4 --trace``: every location runs each context for
    exactly its exclusive CPUTIME, so the fold equals profile.db's values per node."""
    from cctool.synth import generate

    generate(tmp_path, nodes=300, ranks=3, threads=2, fmt="v4", trace=True)
    tl = read_timeline(tmp_path)
    tl.validate()
    assert tl.locations.height == 6
    whole, prof = fold(tl), read(tmp_path)
    key = ["node", "rank", "thread"]
    for metric in ("time", "time (inc)"):
        a = whole.metrics.select(*key, metric).filter(pl.col(metric) != 0)
        b = prof.metrics.select(*key, metric).filter(pl.col(metric) != 0)
        j = a.join(b, on=key, how="full", coalesce=True).fill_null(0.0)
        assert j.height == a.height == b.height > 300
        assert (j[metric] - j[f"{metric}_right"]).abs().max() < 1e-12  # type: ignore[operator]
    with pytest.raises(ValueError, match="v4"):
        generate(tmp_path / "x", nodes=50, trace=True)


def _broken(tmp_path: Path, how: str) -> Path:
    """A copy of DB whose first trace line is broken ``how``."""
    for name in ("meta.db", "profile.db"):
        shutil.copy(DB / name, tmp_path / name)
    raw = bytearray((DB / "trace.db").read_bytes())
    (sec,) = struct.unpack_from("<Q", raw, 0x18)
    p_traces, _, _ = struct.unpack_from("<QIB", raw, sec)
    (origin,) = struct.unpack_from("<Q", raw, sec + 0x10)
    _, _, start, _ = struct.unpack_from("<IIQQ", raw, p_traces)
    first, second = struct.unpack_from("<Q", raw, start)[0], struct.unpack_from(
        "<Q", raw, start + 12)[0]
    if how == "unsorted":  # the second element before the first
        struct.pack_into("<Q", raw, start, second)
        struct.pack_into("<Q", raw, start + 12, first)
    elif how == "early":
        struct.pack_into("<Q", raw, start, origin - 1)
    else:  # a running sample names a context meta.db does not hold
        struct.pack_into("<I", raw, start + 8, 0xFFFFFF00)
    (tmp_path / "trace.db").write_bytes(bytes(raw))
    return tmp_path


@pytest.mark.parametrize(("how", "said"), [
    ("unsorted", "trace 0's timestamps are not sorted"),
    ("early", "trace 0 starts before minTimestamp"),
    ("unknown", f"a trace names context {0xFFFFFF00}, which meta.db lacks"),
])
@pytest.mark.parametrize("compiled", [False, True])
def test_a_broken_trace_line_is_named_by_either_decoder(tmp_path: Path, how: str, said: str,
                                                        compiled: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from cctool import kernels

    if compiled:  # trace_line's compiled twin runs where Numba is loaded
        kernels._compiled()
    else:
        monkeypatch.setattr(kernels, "_impl", None)
    with pytest.raises(ReaderError, match=f"trace.db: {said}"):
        read_timeline(_broken(tmp_path, how))


def test_a_broken_trace_line_exits_2_with_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = _broken(tmp_path, "unsorted")
    res = subprocess.run([sys.executable, "-m", "cctool", "timeline", str(db)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "trace 0's timestamps are not sorted" in res.stderr
    assert "trace.db" in res.stderr
