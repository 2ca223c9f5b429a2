"""Chrome trace-event reader on files viztracer, Node and CMake wrote (tests/data/chrome-trace).

The tracers print no totals; the expected values (README) are the tracers' own durations:
viztracer's outermost event lasts 517999.901 us, and elsewhere the union of each thread's
event intervals, computed without nesting: 386207.601 us over viztracer's 3 threads, 7861 us
for Node, 9589 us for CMake's 282 B/E pairs.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers.traces import chrome as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "chrome-trace"
VIZ, VIZ_THREADS = DATA / "viztracer.json", DATA / "viztracer-threads.json"
NODE, CMAKE = DATA / "node_trace.json", DATA / "cmake-profile.json"


def _root_total(gf, metric: str = "time (inc)") -> float:  # type: ignore[no-untyped-def]
    return float(gf.node_values()[metric][gf.roots].sum())


def _row(gf, name: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    values = gf.node_values()
    node = gf.nodes.filter(pl.col("name").str.starts_with(name))["node"][0]
    return {m: float(values[m][node]) for m in gf.metric_columns}


def test_viztracer_complete_events() -> None:
    gf = reader.read(VIZ)
    gf.validate()
    assert gf.metadata["metric_units"] == {"time": "us", "calls": "count"}
    assert gf.default_metric == "time (inc)"
    assert _root_total(gf) == pytest.approx(517999.901, rel=1e-9)
    assert _root_total(gf, "calls (inc)") == 141
    assert gf.nodes["name"][0] == "builtins.exec"
    main = _row(gf, "main (")
    children = sum(_row(gf, n)["time (inc)"] for n in ("middle (", "other ("))
    assert main["time"] == pytest.approx(main["time (inc)"] - children, rel=1e-12)
    [loc] = gf.metadata["locations"]
    assert (loc["thread_name"], loc["process_name"]) == ("MainThread", "MainProcess")


def test_threads_become_threads_of_one_rank() -> None:
    gf = reader.read(VIZ_THREADS)
    gf.validate()
    assert gf.num_ranks == 1 and gf.num_threads == 3
    assert [loc["thread_name"] for loc in gf.metadata["locations"]] == [
        "MainThread", "Thread-1 (worker)", "Thread-2 (worker)"]
    assert _root_total(gf) == pytest.approx(386207.601, rel=1e-9)
    assert _root_total(gf, "calls (inc)") == 120


def test_node_begin_end_pairs_and_complete_events() -> None:
    gf = reader.read(NODE)
    gf.validate()
    assert _root_total(gf) == 7861 and _root_total(gf, "calls (inc)") == 19
    cleanup = _row(gf, "RunCleanup")  # a B/E pair with a nested B/E pair
    assert cleanup["time (inc)"] > cleanup["time"] >= 0


def test_cmake_array_form_and_missing_closing_bracket(tmp_path: Path) -> None:
    gf = reader.read(CMAKE)
    gf.validate()
    assert _root_total(gf) == 9589 and _root_total(gf, "calls (inc)") == 282
    assert gf.nodes.filter(pl.col("name") == "count_to").height == 1
    cut = tmp_path / "trace.json"
    cut.write_bytes(CMAKE.read_bytes().rstrip()[:-1] + b",\n")  # the ] the format lets go
    assert detect(cut).NAME == "chrome-trace"
    assert _root_total(reader.read(cut)) == 9589


def _trace(tmp_path: Path, events: list[dict[str, object]]) -> Path:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    return path


def test_nesting_problems_are_reported(tmp_path: Path) -> None:
    x = {"ph": "X", "pid": 1, "tid": 1}
    path = _trace(tmp_path, [{**x, "name": "a", "ts": 0, "dur": 10},
                             {**x, "name": "b", "ts": 5, "dur": 10}])
    with pytest.warns(UserWarning, match="overlap their parent"):
        gf = reader.read(path)
    assert _root_total(gf) == 10  # b is cut at a's end
    b = {"pid": 1, "tid": 2, "ts": 0}
    path = _trace(tmp_path, [{**b, "ph": "B", "name": "open"}, {**b, "ph": "E", "ts": 1},
                             {**b, "ph": "E", "ts": 2}, {**b, "ph": "B", "name": "x", "ts": 3},
                             {**b, "ph": "X", "name": "y", "ts": 4, "dur": 2}])
    with pytest.warns(UserWarning) as caught:
        gf = reader.read(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "without an open B" in messages and "never closed" in messages
    assert _root_total(gf) == 1 + 3  # 'x' closed at the thread's last timestamp (6)


def test_pids_and_tids_map_to_ranks_and_threads(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": "w", "pid": pid, "tid": tid, "ts": 0, "dur": 1 + pid}
              for pid in (7, 3) for tid in (50, 9)]
    gf = reader.read(_trace(tmp_path, events))
    locs = {(d["pid"], d["tid"]): (d["rank"], d["thread"]) for d in gf.metadata["locations"]}
    assert locs == {(3, 9): (0, 0), (3, 50): (0, 1), (7, 9): (1, 0), (7, 50): (1, 1)}
    assert _root_total(gf) == 2 * 4 + 2 * 8


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    for events, message in (
        ([{"ph": "X", "name": "a", "ts": 0, "dur": "x"}], "no valid dur"),
        ([{"ph": "X", "name": "a", "dur": 1}], "no numeric ts"),
        ([{"ph": "I", "name": "a", "ts": 1}], "no complete"),
        (["x"], "not an object"),
    ):
        with pytest.raises(ReaderError, match=message):
            reader.read(_trace(tmp_path, events))


def test_sniff_is_strict(tmp_path: Path) -> None:
    for path in (VIZ, VIZ_THREADS, NODE, CMAKE):
        assert detect(path).NAME == "chrome-trace", path
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "x.json"
    path.write_text('[{"name": "main", "frame": {"name": "main"}, "metrics": {}}]')
    assert not reader.sniff(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    for sample in (CMAKE, NODE):
        check_damaged(reader, sample, tmp_path / sample.name)


def _paths(gf) -> dict[tuple[str, ...], int]:  # type: ignore[no-untyped-def]
    names, parent = gf.nodes["name"].to_list(), gf.parent_array
    calls = gf.node_values()["calls"]
    out = {}
    for node in range(gf.num_nodes):
        path, up = [], node
        while up >= 0:
            path.append(names[up])
            up = parent[up]
        out[tuple(reversed(path))] = int(calls[node])
    return out


def test_cmake_nesting_is_the_begin_end_stack() -> None:
    # CMake's events are B/E only: the stack of open B events is the true nesting; nesting
    # by time must give the same call paths, even where microsecond timestamps tie.
    truth: dict[tuple[str, ...], int] = {}
    stack: list[str] = []
    for ev in orjson.loads(CMAKE.read_bytes()):
        if ev["ph"] == "B":
            stack.append(ev["name"])
            truth[tuple(stack)] = truth.get(tuple(stack), 0) + 1
        else:
            stack.pop()
    assert _paths(reader.read(CMAKE)) == truth


def test_equal_intervals_nest_outer_first(tmp_path: Path) -> None:
    b = {"pid": 1, "tid": 1}
    events = [{**b, "ph": "B", "name": "outer", "ts": 5},
              {**b, "ph": "B", "name": "inner", "ts": 5},
              {**b, "ph": "E", "ts": 9}, {**b, "ph": "E", "ts": 9},
              # X events are written when they end: the inner one first
              {**b, "ph": "X", "name": "x-inner", "ts": 20, "dur": 3},
              {**b, "ph": "X", "name": "x-outer", "ts": 20, "dur": 3}]
    assert set(_paths(reader.read(_trace(tmp_path, events)))) == {
        ("outer",), ("outer", "inner"), ("x-outer",), ("x-outer", "x-inner")}


def test_a_trace_cut_before_its_last_dur_closes_it_at_the_end(tmp_path: Path) -> None:
    """viztracer.json with the dur of its outermost event (builtins.exec, written last)
    left out: the event is closed at the trace's last timestamp, the end of the latest
    inner event, with a warning."""
    doc = orjson.loads(VIZ.read_bytes())
    last = doc["traceEvents"][-1]
    assert last["name"] == "builtins.exec"
    del last["dur"]
    end = max(e["ts"] + e["dur"] for e in doc["traceEvents"] if "dur" in e)
    path = tmp_path / "cut.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.warns(CctoolWarning, match="1 complete events without a dur"):
        gf = reader.read(path)
    gf.validate()
    assert _root_total(gf) == pytest.approx(end - last["ts"], abs=1e-6)
    inner = reader.read(VIZ)
    assert gf.num_nodes == inner.num_nodes


def test_ids_past_64_bits_are_read(tmp_path: Path) -> None:
    """An integer past 64 bits in the events' args (ids in DevTools traces): the C JSON
    parser overflows, the exact one reads on from there; the totals do not change."""
    text = NODE.read_bytes()
    at = text.index(b'"ph"')
    path = tmp_path / "big.json"
    path.write_bytes(text[:at] + b'"id": 340282366920938463463374607431768211457, ' + text[at:])
    gf = reader.read(path)
    gf.validate()
    assert _root_total(gf) == _root_total(reader.read(NODE))
    assert gf.metrics.equals(reader.read(NODE).metrics)
