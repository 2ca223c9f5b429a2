"""Detection by content: corpus files under a neutral name, callgrind-format files of other
tools, very long first lines, UTF-16 text, and files a folder leaves out (always named)."""

from __future__ import annotations

import codecs
import json
import os
import re
import shutil
import warnings
from pathlib import Path

import pytest

from cctool.errors import CctoolWarning
from cctool.readers import detect, expand_paths, read

DATA = Path(__file__).parent / "data"


def corpus_files() -> list[Path]:
    """Every single-file profile of the corpus that reads without ``--from``."""
    out = []
    for spec in sorted(DATA.glob("*/totals.json")):
        for entry in json.loads(spec.read_text())["files"]:
            path = spec.parent / entry["path"]
            if entry["from"] is None and path.is_file() and path not in out:
                out.append(path)
    return out


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_corpus_file_under_a_neutral_name_detects_the_same(path: Path, tmp_path: Path) -> None:
    neutral = tmp_path / "profile.dat"
    neutral.symlink_to(path.resolve())
    assert detect(neutral).NAME == detect(path).NAME


@pytest.mark.parametrize(("name", "creator"), [
    ("cachegrind.out.sample", "cachegrind"), ("yappi.callgrind", "yappi")])
def test_callgrind_format_of_other_tools_is_detected(name: str, creator: str,
                                                     tmp_path: Path) -> None:
    neutral = tmp_path / "out.txt"
    shutil.copy(DATA / "callgrind" / name, neutral)
    assert detect(neutral).NAME == "callgrind"


def test_a_folder_names_what_it_leaves_out(tmp_path: Path) -> None:
    for name in ("cachegrind.out.sample", "yappi.callgrind", "README.md"):
        shutil.copy(DATA / "callgrind" / name, tmp_path / name)
    with pytest.warns(CctoolWarning, match=r"left out 1 file that no reader takes \(README.md\)"):
        runs = expand_paths([str(tmp_path)])
    assert sorted(Path(p).name for p in runs) == ["cachegrind.out.sample", "yappi.callgrind"]


def _unreadable(path: Path) -> None:
    """A file whose reading fails: no permission, or (for root, whom permissions do not
    stop) a link to a file that fails to read."""
    if os.geteuid() != 0:
        path.write_text("x")
        path.chmod(0)
    else:
        path.symlink_to("/proc/self/mem")


def test_a_folder_with_an_unreadable_file_warns_and_names_it(tmp_path: Path) -> None:
    shutil.copy(DATA / "callgrind" / "callgrind.out.sample", tmp_path / "callgrind.out.sample")
    _unreadable(tmp_path / "callgrind.out.other")
    with pytest.warns(CctoolWarning, match=r"callgrind\.out\.other: cannot be read \(.+\); "
                      "left out"):
        gf = read(tmp_path)
    assert gf.metadata["format"] == "callgrind"


def test_a_folded_file_with_a_very_long_first_line_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "deep.txt"
    deep = ";".join(f"frame_{i}" for i in range(5000))  # about 55 kB
    path.write_text(f"{deep} 3\nmain;work 2\n")
    assert detect(path).NAME == "folded"
    gf = read(path)
    assert gf.metrics["samples"].sum() == 5


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8])
@pytest.mark.parametrize("source", ["folded/python.folded", "callgrind/callgrind.out.sample",
                                    "gprof/cycles.gprof.txt", "speedscope/pyspy.speedscope.json"])
def test_text_with_a_byte_order_mark_reads_the_same(source: str, bom: bytes,
                                                    tmp_path: Path) -> None:
    original = DATA / source
    text = original.read_text(encoding="utf-8")
    encoding = {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be",
                codecs.BOM_UTF8: "utf-8"}[bom]
    path = tmp_path / "profile.txt"
    path.write_bytes(bom + text.encode(encoding))
    assert detect(path).NAME == detect(original).NAME
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        a, b = read(original), read(path)
    assert a.metrics.drop("node").sum().rows() == b.metrics.drop("node").sum().rows()


@pytest.mark.parametrize(("name", "says"), [
    ("perf.data", "a perf.data file: cctool reads the text perf script writes"),
    ("memray.bin", "a memray capture file: `memray transform speedscope"),
    ("scalene.json", "scalene JSON: not read yet"),
])
def test_known_files_cctool_does_not_read_are_named(name: str, says: str) -> None:
    from cctool.errors import UnknownFormatError

    with pytest.raises(UnknownFormatError, match=re.escape(says)):
        detect(DATA / "unsupported" / name)
