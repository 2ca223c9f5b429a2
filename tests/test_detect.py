"""Every file of the corpus is detected by its content alone: renamed to ``profile.dat``, as
UTF-8, as UTF-16 (little- and big-endian) with a byte-order mark when it is text, and
compressed with gzip, xz, zstd and bz2 (what ``cctool`` meets when a user renames, converts
or packs a profile)."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cctool.errors import CctoolError
from cctool.readers import _input, detect
from tests.test_readers_detect_content import corpus_files


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return bytes(zstandard.ZstdCompressor().compress(data))


def _utf16(bom: bytes, codec: str) -> Callable[[bytes], bytes]:
    return lambda data: bom + data.decode("utf-8").encode(codec)


VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "utf-8": lambda data: data,
    "utf-16-le": _utf16(codecs.BOM_UTF16_LE, "utf-16-le"),
    "utf-16-be": _utf16(codecs.BOM_UTF16_BE, "utf-16-be"),
    # the fastest levels: detection reads the same stream whatever the level
    "gzip": lambda data: gzip.compress(data, compresslevel=1, mtime=0),
    "xz": lambda data: lzma.compress(data, preset=0),
    "zstd": _zstd,
    "bz2": lambda data: bz2.compress(data, compresslevel=1),
}


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_file_is_detected_renamed_recoded_and_compressed(
        path: Path, tmp_path: Path) -> None:
    fmt = detect(path).NAME
    content = _input.read_bytes(path)  # decompressed
    text = _is_text(content)
    for variant, make in VARIANTS.items():
        if variant.startswith("utf-16") and not text:
            continue
        neutral = tmp_path / variant / "profile.dat"
        neutral.parent.mkdir()
        # a binary file as its profiler wrote it (pprof's is gzip-compressed), then packed
        neutral.write_bytes(make(content if text or variant != "utf-8" else path.read_bytes()))
        assert detect(neutral).NAME == fmt, variant


def test_a_zstd_file_without_zstandard_names_the_extra(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "profile.dat"
    path.write_bytes(_zstd(b"main;work 3\n"))
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setitem(sys.modules, "compression", None)
    with pytest.raises(CctoolError, match=r"pip install 'cctool\[zstd\]'"):
        detect(path)
