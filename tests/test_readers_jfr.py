"""Java Flight Recorder JSON reader on recordings of OpenJDK 17 printed by its jfr tool
(tests/data/jfr; the sample total, jfr summary's, is checked in test_corpus_totals)."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect
from cctool.readers.stacks import jfr as reader
from tests.reader_checks import shared_sample_paths

DATA = Path(__file__).parent / "data" / "jfr"
SAMPLES, ALL, BINARY = (DATA / "work.jfr.json.xz", DATA / "all.jfr.json.xz",
                        DATA / "work.jfr")


def _inclusive(gf, name: str) -> list[float]:  # type: ignore[no-untyped-def]
    node = gf.nodes.filter(pl.col("name") == name)["node"]
    return gf.node_values(["samples (inc)"])["samples (inc)"].gather(node).to_list()


def test_samples_become_method_call_paths() -> None:
    gf = reader.read(SAMPLES)
    gf.validate()
    assert _inclusive(gf, "Work.main") == [57]
    assert sorted(_inclusive(gf, "Work.leaf")) == [22, 35]
    main = gf.nodes.filter(pl.col("name") == "Work.main").row(0, named=True)
    assert main["parent"] is None and main["module"] == ""
    assert gf.metadata["locations"][0]["name"] == "main"


def test_the_whole_recording_reads_the_same_samples() -> None:
    whole, samples = reader.read(ALL), reader.read(SAMPLES)
    assert whole.metrics.equals(samples.metrics)
    assert whole.nodes.equals(samples.nodes)


def test_a_truncated_stack_starts_at_a_marker(tmp_path: Path) -> None:
    doc = json.loads(lzma.decompress(SAMPLES.read_bytes()))
    event = doc["recording"]["events"][-1]
    event["values"]["stackTrace"]["truncated"] = True
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(doc))
    gf = reader.read(path)
    gf.validate()
    assert "[truncated]" in gf.nodes.filter(pl.col("parent").is_null())["name"].to_list()


def test_sniff_and_refusals(tmp_path: Path) -> None:
    assert detect(SAMPLES).NAME == "jfr" and detect(ALL).NAME == "jfr"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"recording": {"events": [{"type": "jdk.CPULoad"}]}}))
    with pytest.raises(ReaderError, match="no execution or native method samples"):
        reader.read(path)


@pytest.mark.skipif(shutil.which("jfr") is None, reason="the JDK's jfr tool is not on PATH")
def test_the_binary_recording_reads_through_the_jfr_tool() -> None:
    binary, samples = reader.read(BINARY), reader.read(SAMPLES)
    assert binary.metrics.equals(samples.metrics) and binary.nodes.equals(samples.nodes)


@pytest.mark.skipif(shutil.which("jfr") is None, reason="the JDK's jfr tool is not on PATH")
def test_async_profilers_recording() -> None:
    # async-profiler's jfr output (README): jfr summary counts 880 jdk.ExecutionSample.
    gf = reader.read(DATA / "async-profiler-cpu.jfr")
    gf.validate()
    assert float(gf.node_values()["samples (inc)"][gf.roots].sum()) == 880
    assert gf.num_threads == 10
    assert any(n.endswith("CpuController.matrixFast") for n in gf.nodes["name"].to_list())


def test_a_binary_recording_without_the_jfr_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    assert detect(BINARY).NAME == "jfr"
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ReaderError, match="needs the JDK's jfr tool on PATH"):
        reader.read(BINARY)
