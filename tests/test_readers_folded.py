"""Folded-stacks reader on tests/data/folded/python.folded (real samples, see its README).

Expected numbers were computed from the text with awk: ``awk '{s+=$NF} END {print s}'``
sums the counts (119 over 7 lines), and printing every ``;``-prefix of every stack through
``sort -u | wc -l`` counts the distinct call paths (32 nodes). The ``io`` lines hold 55 + 1
samples, the deepest stack has 22 frames.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import ReaderError
from cctool.readers import detect, read
from cctool.readers.stacks import folded as reader
from tests.reader_checks import check_damaged, shared_sample_paths

SAMPLE = Path(__file__).parent / "data" / "folded" / "python.folded"
ASYNC = SAMPLE.parent / "async-profiler.collapsed"
PERF = """\
perf-1234;_start;__libc_start_main;main;compute 40
perf-1234;_start;__libc_start_main;main;compute;memcpy_[k] 5
perf-1234;[unknown];do_syscall_64_[k] 3

perf-1234;_start;__libc_start_main;main 2
perf-1234;_start;__libc_start_main;main;compute 10
"""


def test_python_sample() -> None:
    gf = read(SAMPLE)
    assert gf.metadata["format"] == "folded" and gf.metadata["total_samples"] == 119
    assert (gf.exclusive, gf.inclusive, gf.default_metric) == (
        ("samples",),
        ("samples (inc)",),
        "samples (inc)",
    )
    assert gf.num_nodes == 32
    assert gf.nodes["name"][0] == "<module> (sampler.py:1)"
    values = gf.node_values()
    assert values["samples (inc)"][0] == 119 and gf.metrics["samples"].sum() == 119
    io = gf.nodes.filter(pl.col("name") == "io (sampler.py:32)")["node"].item()
    assert values["samples (inc)"][io] == 56
    assert int(gf.nodes["depth"].max()) == 21
    work = gf.nodes.filter(pl.col("name") == "work (sampler.py:20)")
    assert work.height == 2  # one under solve, one under io
    gf.validate()


def test_perf_style_stacks_merge(tmp_path: Path) -> None:
    path = tmp_path / "out.folded"
    path.write_text(PERF)
    assert reader.sniff(path)
    gf = reader.read(path)
    rows = gf.nodes.join(gf.metrics, on="node")
    compute = rows.filter(pl.col("name") == "compute").row(0, named=True)
    assert compute["samples"] == 50 and compute["samples (inc)"] == 55  # two lines add up
    assert set(gf.nodes["name"]) >= {"memcpy", "[unknown]", "do_syscall_64"}
    kinds = dict(zip(gf.nodes["name"], gf.nodes["type"], strict=True))
    assert (kinds["memcpy"], kinds["do_syscall_64"], kinds["main"]) == (
        "kernel", "kernel", "function")
    assert gf.node_values()["samples (inc)"][0] == 60
    gf.validate()


def test_async_profiler_frame_types_leave_the_name() -> None:
    # async-profiler's own collapsed file (README): 185 samples, 30 call paths; its
    # _[j]/_[i] suffixes become the frame's type (java), the name is the method's.
    gf = read(ASYNC)
    gf.validate()
    assert gf.metadata["format"] == "folded"
    assert gf.num_nodes == 30 and gf.node_values()["samples (inc)"][0] == 185
    names = gf.nodes["name"].to_list()
    assert not [n for n in names if n.endswith(tuple(reader.FRAME_TYPES))]
    rows = dict(zip(names, gf.nodes["type"], strict=True))
    assert rows["BusyClient.run"] == "java"
    assert rows["NioSocketImpl.beginRead"] == "java"  # inlined: still the method's frame
    assert rows["Java_sun_nio_ch_SocketDispatcher_read0"] == "function"  # native: no suffix
    read0 = gf.nodes.filter(pl.col("name") == "read")["node"].item()
    assert gf.node_values()["samples"][read0] == 143


def test_a_method_compiled_and_inlined_is_one_frame(tmp_path: Path) -> None:
    path = tmp_path / "mixed.collapsed"
    path.write_text("Main.run_[j];Work.step_[j] 3\nMain.run_[j];Work.step_[i] 2\n"
                    "Main.run_[j];Work.step_[0];write_[k] 1\n")
    gf = reader.read(path)
    gf.validate()
    assert gf.nodes.select("name", "type").rows() == [
        ("Main.run", "java"), ("Work.step", "java"), ("write", "kernel")]
    assert gf.node_values()["samples"].to_list() == [0, 5, 1]


def test_samples_without_a_stack_count_under_a_root(tmp_path: Path) -> None:
    # py-spy writes a bare count for samples in which the thread had no Python frame.
    path = tmp_path / "pyspy.folded"
    path.write_text(" 7\nmain (a.py:1);f (a.py:5) 3\n")
    assert reader.sniff(path)
    gf = reader.read(path)
    values = dict(zip(gf.nodes["name"], gf.node_values()["samples (inc)"], strict=True))
    assert values == {"[no stack]": 7, "main (a.py:1)": 3, "f (a.py:5)": 3}
    assert gf.metadata["total_samples"] == 10


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "x.folded"
    for text, message in (
        ("a;b 10 12\n", "two counts"),
        ("a;b 10\njust words\n", "line 2"),
        ("\n\n", "no stacks"),
    ):
        path.write_text(text)
        with pytest.raises(ReaderError, match=message):
            reader.read(path)


def test_sniff_is_strict(tmp_path: Path) -> None:
    assert reader.sniff(SAMPLE) and detect(SAMPLE).NAME == "folded"
    path = tmp_path / "t.txt"
    for text in (
        "main 10\nfoo 3\n",  # no stack separator anywhere: could be anything
        "a;b 10\nnot a stack line\n",
        "# comment;x 1\n",
        "a;b 10 20\n",
        "name,time\nmain;x,10\n",
    ):
        path.write_text(text)
        assert not reader.sniff(path), text
    path.write_bytes(b"a;b 1\n\xff\xfe 2\n")
    assert not reader.sniff(path)
    for path in shared_sample_paths():
        assert not reader.sniff(path), path


def test_damaged_file_fails_cleanly(tmp_path: Path) -> None:
    outcome = check_damaged(reader, SAMPLE, tmp_path / SAMPLE.name)
    assert outcome["read"] > 0  # most damage leaves valid folded lines
