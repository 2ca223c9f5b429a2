"""Perfetto protobuf reader on traces Chromium wrote (tests/data/perfetto).

The expected values (README) come from a separate decoding with Perfetto's own generated
protobuf classes: 6994 us of outermost slices and 260 slices in ``v8-execute.pftrace``;
5652 closed slices and one left open in ``loading.pftrace.gz``; 11,246,893.382 us over
Chrome's async navigation tracks, paired in time order, in ``navigation.pftrace.gz``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.model.timeline import fold
from cctool.readers import detect, read
from cctool.readers.stacks import _protobuf
from cctool.readers.timelines import read_timeline
from cctool.readers.traces import perfetto as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "perfetto"
V8, LOADING = DATA / "v8-execute.pftrace", DATA / "loading.pftrace.gz"
NAVIGATION, GPU = DATA / "navigation.pftrace.gz", DATA / "gpu.pftrace.gz"


def _root_total(gf, metric: str = "time (inc)") -> float:  # type: ignore[no-untyped-def]
    return float(gf.node_values()[metric][gf.roots].sum())


def test_slices_of_two_renderer_threads() -> None:
    gf = reader.read(V8)
    gf.validate()
    assert gf.metadata["format"] == "perfetto"
    assert gf.metadata["metric_units"] == {"time": "us", "calls": "count"}
    assert _root_total(gf) == pytest.approx(6994.0, rel=1e-9)
    assert _root_total(gf, "calls (inc)") == 260
    assert [(loc["rank"], loc["thread"], loc["thread_name"])
            for loc in gf.metadata["locations"]] == [(0, 0, "CrRendererMain"),
                                                     (1, 0, "CrRendererMain")]
    # interned names and categories, nested by the begin/end stack
    names = set(gf.nodes["name"].to_list())
    assert {"RunMicrotasks", "V8.StackGuard"} <= names
    assert set(gf.nodes["category"].to_list()) == {"v8.execute"}
    micro = gf.nodes.filter(pl.col("name") == "RunMicrotasks")["node"][0]
    values = gf.node_values()
    children = gf.nodes.filter(pl.col("parent") == micro)["node"].to_list()
    assert values["time"][micro] == pytest.approx(
        values["time (inc)"][micro] - sum(values["time (inc)"][c] for c in children))


def test_compressed_trace_of_three_processes_with_a_slice_left_open() -> None:
    with pytest.warns(CctoolWarning, match=r"1 B events never closed"):
        gf = read(LOADING)
    gf.validate()
    assert _root_total(gf, "calls (inc)") == 5653
    assert _root_total(gf) == pytest.approx(1505741.0e-6, rel=1e-6)  # seconds once read
    locations = gf.metadata["locations"]
    assert len(locations) == 5 and len({loc["pid"] for loc in locations}) == 4
    assert {"CrBrowserMain", "CrRendererMain"} <= {loc["thread_name"] for loc in locations}


def test_events_pair_in_time_order_on_numbered_async_tracks() -> None:
    # Chrome writes navigation timings after the fact, out of time order: paired in the
    # file's order they would give 20,569,884 us instead of 11,246,893.382.
    with pytest.warns(CctoolWarning, match="never closed"):
        gf = read(NAVIGATION, "perfetto")
    gf.validate()
    assert _root_total(gf) == pytest.approx(11246893.382e-6, rel=1e-9)
    assert _root_total(gf, "calls (inc)") == 470
    names = [str(loc["tid"]) for loc in gf.metadata["locations"]]
    assert len(names) == len(set(zip(names, [loc["pid"] for loc in gf.metadata["locations"]],
                                     strict=True)))
    assert any(n.startswith("Navigation: Timelines (Browser) [") for n in names)
    assert "NavigationRequest:Breakdown" in names


def test_a_track_two_sequences_write() -> None:
    with pytest.warns(CctoolWarning, match="4 B events never closed"):
        gf = read(GPU)
    gf.validate()
    assert _root_total(gf) == pytest.approx(829554.29e-6, rel=1e-9)
    assert _root_total(gf, "calls (inc)") == 293
    assert "gpu::Scheduler" in [loc["tid"] for loc in gf.metadata["locations"]]


def test_timeline_folds_back_to_the_profile() -> None:
    tl = read_timeline(V8)
    tl.validate()
    assert tl.metadata["format"] == "perfetto"
    whole = fold(tl)
    assert _root_total(whole) == pytest.approx(6994.0e-6, rel=1e-9)
    profile = read(V8)
    assert whole.nodes["name"].to_list() == profile.nodes["name"].to_list()
    assert whole.node_values()["time"].to_list() == pytest.approx(
        profile.node_values()["time"].to_list(), rel=1e-9)


def _packets(path: Path) -> list[bytes]:
    return [bytes(v) for _, _, v in _protobuf.fields(path.read_bytes())]  # type: ignore[arg-type]


def _trace(packets: list[bytes]) -> bytes:
    out = bytearray()
    for p in packets:
        out += b"\x0a" + _varint(len(p)) + p
    return bytes(out)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _field(packet: bytes, number: int) -> int | bytes | None:
    return next((v for n, _, v in _protobuf.fields(packet) if n == number), None)


def test_packets_after_a_loss_wait_for_the_state_to_be_sent_again(tmp_path: Path) -> None:
    # Cut the packet that clears (and sends) the incremental state of the sequence with the
    # most slices: its other packets need interned names and a clock the reader never saw;
    # they are left out, as Perfetto leaves them out, and said.
    packets = _packets(V8)
    events: dict[int | bytes | None, int] = {}
    for p in packets:
        if _field(p, 11) is not None:
            seq = _field(p, 10)
            events[seq] = events.get(seq, 0) + 1
    busiest = max(events, key=lambda k: events[k])
    clear = next(i for i, p in enumerate(packets)
                 if _field(p, 10) == busiest and int(_field(p, 13) or 0) & 1)
    path = tmp_path / "lost.pftrace"
    path.write_bytes(_trace(packets[:clear] + packets[clear + 1:]))
    with pytest.warns(CctoolWarning, match=r"\d+ packets after a data loss"):
        gf = reader.read(path)
    gf.validate()
    assert 0 < _root_total(gf, "calls (inc)") < 260


def test_sniff_is_strict_and_survives_compression(tmp_path: Path) -> None:
    assert detect(V8).NAME == "perfetto"
    assert detect(LOADING).NAME == "perfetto"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    for pprof in (Path(__file__).parent / "data" / "pprof").iterdir():
        if pprof.is_file():
            assert not reader.sniff(pprof), pprof
    raw = tmp_path / "raw.pb"
    raw.write_bytes(gzip.decompress(LOADING.read_bytes()))
    assert reader.sniff(raw)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "cut.pftrace"
    path.write_bytes(V8.read_bytes()[:-3])
    with pytest.raises(ReaderError, match="not a well-formed Perfetto trace"):
        read(path)
    path.write_bytes(_trace([p for p in _packets(V8) if _field(p, 11) is None]))
    with pytest.raises(ReaderError, match="no complete"):
        read(path, "perfetto")


def _encode(records: list[tuple[int, int, int | bytes]]) -> bytes:
    out = bytearray()
    for number, wire, value in records:
        out += _varint(number << 3 | wire)
        if isinstance(value, bytes):
            out += _varint(len(value)) + value
        else:
            out += _varint(value) if wire == 0 else value.to_bytes(8 if wire == 1 else 4, "little")
    return bytes(out)


def test_events_timed_by_a_thread_descriptor_are_refused(tmp_path: Path) -> None:
    # Chrome before 2020 timed events relative to a ThreadDescriptor (timestamp_delta_us):
    # refused, never read as time 0.
    packets = _packets(V8)
    k = next(i for i, p in enumerate(packets) if _field(p, 11) is not None)
    records = [(n, w, bytes(v) if isinstance(v, bytes | memoryview) else v)
               for n, w, v in _protobuf.fields(packets[k])]
    packets[k] = _encode([(n, w, v + b"\x08\x05" if n == 11 else v) for n, w, v in records])
    path = tmp_path / "old.pftrace"
    path.write_bytes(_trace(packets))
    with pytest.raises(ReaderError, match="relative to a thread descriptor"):
        read(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, V8, tmp_path / V8.name)
