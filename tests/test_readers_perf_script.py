"""perf script reader on files perf wrote (tests/data/perf-script; totals from `perf report
--stdio`, checked in test_corpus_totals): processes and threads, call chains, events."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers.stacks import perf_script as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "perf-script"


def _paths(gf) -> dict[tuple[str, ...], float]:  # type: ignore[no-untyped-def]
    """Inclusive samples of every call path, summed over ranks and threads."""
    names = gf.nodes["name"].to_list()
    parent = gf.nodes["parent"].to_list()
    inc = gf.metrics.group_by("node").agg(pl.col("samples (inc)").sum())
    out = {}
    for node, value in inc.iter_rows():
        path, p = [], node
        while p is not None:
            path.append(names[p])
            p = parent[p]
        out[tuple(reversed(path))] = value
    return out


def test_processes_become_ranks_and_threads_threads() -> None:
    gf = reader.read(DATA / "perf-fp.txt")
    gf.validate()
    assert gf.num_ranks == 2 and gf.num_threads == 2
    locs = gf.metadata["locations"]
    assert [(d["rank"], d["thread"]) for d in locs] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [d["pid"] for d in locs] == sorted(d["pid"] for d in locs)
    assert all(d["tid"] == d["pid"] for d in locs if d["thread"] == 0)  # main threads first
    assert {d["comm"] for d in locs} == {"work"}
    assert gf.metadata["metric_units"] == {"cpu-clock": "ns", "samples": "count"}
    assert gf.default_metric == "cpu-clock (inc)"


def test_dwarf_call_chains_nest_from_the_root() -> None:
    paths = _paths(reader.read(DATA / "perf-dwarf.txt"))
    worker = ("clone3", "start_thread", "worker", "middle", "leaf")
    assert paths[worker] > 0
    assert paths[("_start", "__libc_start_main_impl", "__libc_start_call_main", "main")] == 30
    # frames keep their object: the inlined libc frame is marked as perf marks it
    gf = reader.read(DATA / "perf-dwarf.txt")
    mods = dict(zip(gf.nodes["name"].to_list(), gf.nodes["module"].to_list(), strict=True))
    assert mods["leaf"].endswith("/work") and mods["__libc_start_main_impl"] == "inlined"


def test_default_fields_give_threads_of_one_rank_and_say_so() -> None:
    with pytest.warns(CctoolWarning, match=r"perf script -F \+pid"):
        gf = reader.read(DATA / "perf-dwarf-default.txt")
    assert gf.num_ranks == 1 and gf.num_threads == 2
    assert _paths(gf) == _paths(reader.read(DATA / "perf-dwarf.txt"))


def test_several_events_keep_their_own_samples_and_periods() -> None:
    gf = reader.read(DATA / "perf-two-events.txt")
    assert gf.metadata["events"] == ["cpu-clock", "task-clock"]
    assert {"samples cpu-clock", "samples task-clock"} <= set(gf.metric_columns)


def test_event_modifiers_keep_the_unit() -> None:
    for name, event in (("perf-default.txt", "cpu-clock:pppH"), ("perf-mod.txt", "cpu-clock:u")):
        gf = reader.read(DATA / name)
        gf.validate()
        assert gf.metadata["events"] == [event]
        assert gf.default_metric == "cpu-clock (inc)"
        assert gf.metadata["metric_units"]["cpu-clock"] == "ns"


def test_the_time_event_is_the_default_metric() -> None:
    gf = reader.read(DATA / "perf-faults.txt")
    assert gf.metadata["events"] == ["page-faults", "cpu-clock"]
    assert gf.default_metric == "cpu-clock (inc)"


@pytest.mark.parametrize(("events", "metrics"), [
    (["cpu-clock:pppH"], ["cpu-clock"]),
    (["cpu/cycles/u", "page-faults:k"], ["cycles", "page-faults"]),
    (["cpu/event=0x3c,umask=0x0/"], ["cpu/event=0x3c,umask=0x0/"]),
    (["sched:sched_switch"], ["sched:sched_switch"]),
    (["cpu-clock:u", "cpu-clock:k"], ["cpu-clock:u", "cpu-clock:k"]),
])
def test_event_names(events: list[str], metrics: list[str]) -> None:
    assert reader.event_metrics(events) == metrics


@pytest.mark.parametrize("mid_line", [True, False])
def test_a_file_cut_short_leaves_out_its_last_sample(tmp_path: Path, mid_line: bool) -> None:
    """Cut in the middle of a frame line, and after a whole frame line: the partial call
    chain of the last sample would have made its innermost frames a root."""
    blob = (DATA / "perf-default.txt").read_bytes()
    first = blob.index(b"\n\t", 14000) + 1  # the innermost frame of a call chain
    start = blob.index(b"\n\t", first) + 1  # its caller
    cut = start + 10 if mid_line else blob.index(b"\n", start) + 1
    path = tmp_path / "perf.txt"
    path.write_bytes(blob[:cut])
    with pytest.warns(CctoolWarning, match="cut short; its last sample is left out"):
        gf = reader.read(path)
    gf.validate()
    roots = set(gf.nodes.filter(pl.col("parent").is_null())["name"])
    whole = reader.read(DATA / "perf-default.txt")
    assert roots <= set(whole.nodes.filter(pl.col("parent").is_null())["name"])


def test_samples_without_a_call_chain() -> None:
    gf = reader.read(DATA / "perf-flat.txt")
    assert gf.nodes["name"].to_list() == ["leaf"]


def test_sniff_is_strict(tmp_path: Path) -> None:
    for path in DATA.glob("perf-*.txt"):
        assert detect(path).NAME == "perf-script", path
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "x.txt"
    path.write_text("main;work 12\nmain 3\n")
    assert not reader.sniff(path)


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text((DATA / "perf-fp.txt").read_text() + "\nthis is not perf output\n")
    with pytest.raises(ReaderError, match="not a perf script sample header"):
        reader.read(path)


def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, DATA / "perf-dwarf.txt", tmp_path / "perf.txt")


@pytest.mark.parametrize(("line", "fields"), [
    ("work  8777/8777   1507.841941:    1001001 cpu-clock: ",
     ("work", "8777", "8777", "1001001", "cpu-clock")),
    ("kworker/0:1 H 12 [001] 5.000001: 1 sched:sched_switch: prev_comm=a",
     ("kworker/0:1 H", None, "12", "1", "sched:sched_switch")),
    ("Web Content 4242/4250 [003] 77.5: 250000 cycles:u: ",
     ("Web Content", "4242", "4250", "250000", "cycles:u")),
])
def test_header_fields(line: str, fields: tuple[str | None, ...]) -> None:
    """Headers as perf prints them: comm with spaces, pid/tid or tid, [cpu], tracepoint
    and modifier event names (which hold colons)."""
    m = reader._HEADER.match(line)
    assert m is not None
    assert (m["comm"], m["pid"], m["tid"], m["period"], m["event"]) == fields
