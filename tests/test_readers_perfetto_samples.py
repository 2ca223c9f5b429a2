"""Callstack samples of a Perfetto trace (traced_perf's PerfSample packets) on a trace an
Android 12 device recorded (tests/data/perfetto/android-perf.pftrace.gz, README there).

The expected values come from ``expected_samples.py``, a separate decoding with Perfetto's
own generated protobuf classes: 684 samples with a callstack (the rows of the trace
processor's ``perf_sample`` table in the trace's original test), 58 more traced_perf skipped,
a 50 Hz CPU-clock timebase, the samples per process and the first sample's stack.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import _input, detect, read
from cctool.readers.timelines import read_timeline
from cctool.readers.traces import perfetto_samples
from tests.reader_checks import check_damaged
from tests.test_readers_perfetto import V8, _field, _packets, _trace, _varint

DATA = Path(__file__).parent / "data" / "perfetto"


def cxxfilt(names: list[str]) -> list[str]:
    """``names`` as binutils' c++filt demangles them: the independent check of the names
    cctool shows (traced_perf interns raw symbols; Perfetto's UI shows them demangled)."""
    if shutil.which("c++filt") is None:
        pytest.skip("c++filt (binutils) is not installed")
    done = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


ANDROID = DATA / "android-perf.pftrace.gz"
# expected_samples.py: the first sample's stack (pid 447, /system/bin/traced), outermost first
FIRST_STACK = [
    ("__libc_init", "/apex/com.android.runtime/lib64/bionic/libc.so"),
    ("_ZN8perfetto11ServiceMainEiPPc", "/system/lib64/libperfetto.so"),
    ("_ZN8perfetto4base14UnixTaskRunner3RunEv", "/system/lib64/libperfetto.so"),
    ("poll", "/apex/com.android.runtime/lib64/bionic/libc.so"),
    ("__ppoll", "/apex/com.android.runtime/lib64/bionic/libc.so"),
    ("entry_SYSCALL_64_after_hwframe", "/kernel"),
    ("do_syscall_64", "/kernel"),
    ("__x64_sys_ppoll", "/kernel"),
    ("__se_sys_ppoll", "/kernel"),
    ("poll_select_finish", "/kernel"),
    ("ktime_get_ts64", "/kernel"),
    ("read_hpet", "/kernel"),
]


def _read(path: Path = ANDROID, fmt: str | None = None):  # type: ignore[no-untyped-def]
    with pytest.warns(CctoolWarning, match="58 samples traced_perf skipped without a callstack"):
        return read(path, fmt)


@pytest.fixture(scope="module")
def android():  # type: ignore[no-untyped-def]
    return _read()  # read once: the tests below only look at it


def test_a_trace_of_samples_alone_is_read_as_its_samples(android) -> None:  # type: ignore[no-untyped-def]
    assert detect(ANDROID).NAME == "perfetto"
    gf = android
    gf.validate()
    assert gf.metadata["format"] == "perfetto"
    values = gf.node_values()
    assert values["samples (inc)"][gf.roots].sum() == pytest.approx(684, rel=1e-6)
    # 50 Hz on the CPU clock: 20 ms a sample, said to be an estimate
    assert values["sampled time (inc)"][gf.roots].sum() == pytest.approx(13.68, rel=1e-6)
    assert gf.metric("sampled time").source_unit == "ns"
    assert "an estimate" in gf.metadata["estimate"]
    assert gf.metadata["skipped_samples"] == 58


def test_processes_are_ranks_with_their_command_lines(android) -> None:  # type: ignore[no-untyped-def]
    gf = android
    locations = gf.metadata["locations"]
    rank_of = {loc["pid"]: loc["rank"] for loc in locations}
    names = {loc["pid"]: loc["process_name"] for loc in locations}
    assert names[10621] == "/system/bin/traced_perf" and names[10296] == "com.android.chrome"
    assert len(rank_of) == 27  # processes with samples
    roots = pl.DataFrame({"node": gf.roots})
    per_rank = gf.metrics.join(roots, on="node").group_by("rank").agg(pl.col("samples (inc)").sum())
    got = dict(zip(per_rank["rank"].to_list(), per_rank["samples (inc)"].to_list(), strict=True))
    # expected_samples.py: samples per pid
    assert got[rank_of[10621]] == 140 and got[rank_of[10296]] == 130
    assert got[rank_of[446]] == 5 and got[rank_of[447]] == 5


def test_frames_are_function_and_mapping_outermost_first(android) -> None:  # type: ignore[no-untyped-def]
    gf = android
    nodes = gf.nodes
    parent = dict(zip(nodes["node"].to_list(), nodes["parent"].to_list(), strict=True))
    key = dict(
        zip(
            nodes["node"].to_list(),
            zip(nodes["name"].to_list(), nodes["module"].to_list(), strict=True),
            strict=True,
        )
    )
    first = list(zip(cxxfilt([n for n, _ in FIRST_STACK]), [m for _, m in FIRST_STACK],
                     strict=True))
    leaves = [n for n, k in key.items() if k == first[-1]]
    stacks = []
    for leaf in leaves:
        path, node = [], leaf
        while node is not None:
            path.append(key[node])
            node = parent[node]
        stacks.append(path[::-1])
    assert first in stacks


def test_the_samples_of_a_trace_with_slices_are_read_when_named(tmp_path: Path) -> None:
    # Chromium's slices and the Android samples in one file (packets of the two traces
    # concatenated: a trace is a sequence of packets)
    both = tmp_path / "both.pftrace"
    both.write_bytes(V8.read_bytes() + _input.read_bytes(ANDROID))
    with pytest.warns(CctoolWarning, match="also holds 684 callstack samples"):
        gf = read(both)
    assert gf.node_values()["calls (inc)"][gf.roots].sum() == 260  # the slices, as alone
    gf = _read(both, "perfetto-samples")
    assert gf.metadata["format"] == "perfetto-samples"
    assert gf.node_values()["samples (inc)"][gf.roots].sum() == 684
    with pytest.raises(ReaderError, match="no callstack samples"):
        read(V8, "perfetto-samples")
    assert not perfetto_samples.sniff(ANDROID)  # named only


def test_sample_packets_it_does_not_read_are_said(tmp_path: Path) -> None:
    # an empty StreamingProfilePacket (field 54) added to the Chromium trace
    packets = _packets(V8)
    seq = next(_field(p, 10) for p in packets if _field(p, 10) is not None)
    path = tmp_path / "chrome-samples.pftrace"
    path.write_bytes(_trace([*packets, b"\xb2\x03\x00\x50" + _varint(int(seq))]))
    with pytest.warns(CctoolWarning, match=r"1 packets of Chrome's sampling profiler"):
        gf = read(path)
    assert gf.node_values()["calls (inc)"][gf.roots].sum() == 260


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    raw = tmp_path / "android.pftrace"
    raw.write_bytes(_input.read_bytes(ANDROID))
    packets = _packets(raw)
    samples = [k for k, p in enumerate(packets) if _field(p, 66) is not None]
    raw.write_bytes(_trace(packets[: samples[20]]))  # the first 20 samples: a fast check
    assert check_damaged(perfetto_samples, raw, tmp_path / "damaged.pftrace")["read"]


def test_a_trace_of_samples_has_no_timeline() -> None:
    with pytest.raises(ReaderError, match="a trace of callstack samples and no slices"):
        read_timeline(ANDROID)
