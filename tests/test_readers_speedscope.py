"""speedscope reader on files py-spy and pyinstrument wrote (tests/data/speedscope, README).

py-spy reported ``Samples: 66`` (0.005 s each, the last with an empty stack); pyinstrument's
text report of the same session gives ``<module>`` 0.693 s, ``middle`` 0.417 s and ``other``
0.276 s (rounded to ms).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.stacks import speedscope as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "speedscope"
PYSPY, PYINSTRUMENT = DATA / "pyspy.speedscope.json", DATA / "pyinstrument.speedscope.json"


def _values(gf, metric: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    frame = gf.nodes.select("name").with_columns(value=gf.node_values()[metric])
    return dict(frame.group_by("name").agg(pl.col("value").sum()).iter_rows())


def _root_total(gf, metric: str) -> float:  # type: ignore[no-untyped-def]
    return float(gf.node_values()[metric][gf.roots].sum())


def test_pyspy_sampled_profile() -> None:
    gf = reader.read(PYSPY)
    gf.validate()
    assert gf.metadata["format"] == "speedscope" and gf.metadata["exporter"] == "py-spy@0.4.3"
    assert gf.metadata["metric_units"] == {"time": "s", "samples": "count"}
    assert gf.default_metric == "time (inc)"
    assert _root_total(gf, "samples (inc)") == 66
    assert _root_total(gf, "time (inc)") == pytest.approx(0.33, rel=1e-9)
    samples = _values(gf, "samples (inc)")
    assert samples["[no stack]"] == 1 and samples["<module>"] == 65
    assert samples["middle"] + samples["other"] == 65
    # py-spy records the executing line in each frame; lines of one function are one node
    assert gf.nodes.filter(pl.col("name") == "leaf").height == 2  # under middle and genexpr
    assert gf.metadata["threads"] == ['Thread 10765 "MainThread"']


def test_pyinstrument_evented_profile_matches_its_text_report() -> None:
    gf = reader.read(PYINSTRUMENT)
    gf.validate()
    assert gf.metadata["metric_units"] == {"time": "s"}
    inc = _values(gf, "time (inc)")
    assert inc["<module>"] == pytest.approx(0.693, abs=5e-4)
    assert inc["middle"] == pytest.approx(0.417, abs=5e-4)
    assert inc["other"] == pytest.approx(0.276, abs=5e-4)
    assert _root_total(gf, "time (inc)") == pytest.approx(0.693, abs=5e-4)


def _evented(
    tmp_path: Path, events: list[tuple[str, float, int]], unit: str = "milliseconds"
) -> Path:
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "shared": {"frames": [{"name": "main"}, {"name": "f"}]},
           "profiles": [{"type": "evented", "name": "t", "unit": unit, "startValue": 0,
                         "endValue": 10, "events": [{"type": t, "at": a, "frame": f}
                                                    for t, a, f in events]}]}
    path = tmp_path / "e.speedscope.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def test_evented_exclusive_is_inclusive_minus_children(tmp_path: Path) -> None:
    path = _evented(tmp_path, [("O", 0, 0), ("O", 2, 1), ("C", 5, 1), ("O", 6, 1), ("C", 7, 1),
                               ("C", 9, 0)])
    gf = reader.read(path)
    rows = dict(zip(gf.nodes["name"], gf.node_values()["time"], strict=True))
    assert rows == {"main": 5, "f": 4} and _root_total(gf, "time (inc)") == 9
    assert gf.metadata["metric_units"] == {"time": "ms"}


def test_evented_broken_nesting(tmp_path: Path) -> None:
    path = _evented(tmp_path, [("O", 0, 0), ("O", 1, 1), ("C", 2, 0)])
    with pytest.raises(ReaderError, match="not open on top"):
        reader.read(path)
    path = _evented(tmp_path, [("O", 0, 0), ("O", 1, 1), ("C", 3, 1)])
    with pytest.warns(UserWarning, match="still open"):
        gf = reader.read(path)
    assert _root_total(gf, "time (inc)") == 10  # closed at endValue
    path = _evented(tmp_path, [("O", 5, 0), ("C", 1, 0)])
    with pytest.raises(ReaderError, match="backwards"):
        reader.read(path)


def test_refuses_mixed_or_unknown_units(tmp_path: Path) -> None:
    doc = orjson.loads(PYSPY.read_bytes())
    doc["profiles"].append({**doc["profiles"][0], "unit": "milliseconds"})
    path = tmp_path / "mixed.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(ReaderError, match="units"):
        reader.read(path)
    doc["profiles"] = [doc["profiles"][0], {**doc["profiles"][0]}]  # two threads, one unit
    path.write_bytes(orjson.dumps(doc))
    gf = reader.read(path)
    assert gf.num_threads == 2 and _root_total(gf, "samples (inc)") == 132


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert detect(PYSPY).NAME == "speedscope" and detect(PYINSTRUMENT).NAME == "speedscope"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "x.json"
    path.write_text('{"traceEvents": [], "profiles": []}')
    assert not reader.sniff(path)


@pytest.mark.filterwarnings("ignore:.*still open")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    for sample in (PYSPY, PYINSTRUMENT):
        check_damaged(reader, sample, tmp_path / sample.name)


def test_pyspy_threads_become_threads() -> None:
    # py-spy: 'Samples: 34' over three threads (10, 7 and 17 samples of 0.004 s)
    gf = reader.read(DATA / "pyspy-threads.speedscope.json")
    gf.validate()
    assert gf.num_ranks == 1 and gf.num_threads == 3
    assert _root_total(gf, "samples (inc)") == 34
    per_thread = gf.metrics.group_by("thread").agg(pl.col("samples").sum()).sort("thread")
    assert per_thread["samples"].to_list() == [10, 7, 17]
    assert gf.metadata["threads"][1] == 'Thread 20498 "Thread-1 (worker)"'
    assert _root_total(gf, "time (inc)") == pytest.approx(0.136, rel=1e-9)


def test_memray_profiles_are_metrics_of_one_run() -> None:
    """memray's `transform speedscope`: Memory (bytes) and Allocations over the same stacks."""
    gf = reader.read(Path(__file__).parent / "data" / "memray" / "memray.speedscope.json")
    gf.validate()
    assert gf.num_threads == 1
    assert gf.metadata["metric_units"] == {"memory": "B", "allocations": "count"}
    assert gf.metadata["exporter"].startswith("memray@")
    assert gf.default_metric == "memory (inc)"
