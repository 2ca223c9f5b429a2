"""Compressed inputs (gzip, xz, zstd, bz2) read like the plain file, whatever their name,
and a decompression bomb is refused with one line (exit 2) instead of filling memory."""

from __future__ import annotations

import bz2
import gzip
import lzma
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import CctoolWarning
from cctool.readers import _input, detect, read

DATA = Path(__file__).parent / "data"

zstandard = pytest.importorskip("zstandard")  # the zstd extra; CI installs it


def _zstd(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor(level=3).compress(data))


COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress, "xz": lzma.compress, "zstd": _zstd, "bz2": bz2.compress}

# One file of every text/JSON/binary format that reads as a single file.
SAMPLES = [
    "callgrind/callgrind.out.sample", "callgrind/cachegrind.out.sample",
    "chrome-trace/viztracer.json", "speedscope/pyspy.speedscope.json",
    "folded/python.folded", "austin/austin-wall.austin", "gprof/cycles.gprof.txt",
    "gprof2dot/cprofile-py311.dot", "cprofile/cprofile-py311.pstats", "cct/cpi-v1.cct",
    "caliper/runtime-profile-np1.cali", "pprof/cpu.pb.gz",
]


def _sums(path: Path) -> list[tuple[float, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CctoolWarning)
        gf = read(path)
    return gf.metrics.drop("node", "rank", "thread").sum().rows()


@pytest.mark.parametrize("kind", list(COMPRESS))
@pytest.mark.parametrize("sample", SAMPLES)
def test_a_compressed_file_reads_like_the_plain_one(sample: str, kind: str,
                                                    tmp_path: Path) -> None:
    original = DATA / sample
    raw = original.read_bytes()
    if sample.endswith(".gz"):
        raw = gzip.decompress(raw)
    path = tmp_path / "profile.dat"  # a neutral name: the content tells the compression
    path.write_bytes(COMPRESS[kind](raw))
    if sample.endswith(".cct"):
        return  # saved .cct files are not compressed inputs (they hold their own blocks)
    assert detect(path).NAME == detect(original).NAME
    if kind == "gzip" or sample == SAMPLES[0]:  # every reader once, every codec once
        assert _sums(path) == _sums(original)


_PADDING: dict[tuple[str, int], bytes] = {}


def _bomb(kind: str, head: bytes, size: int) -> bytes:
    """``head`` followed by ``size`` bytes of JSON/text whitespace: two compressed streams
    (members, frames) one after the other, as every one of these formats allows; the
    padding's stream is made once per kind and size."""
    if (kind, size) not in _PADDING:
        chunk = b" " * (1 << 20)
        comp: Any = {"gzip": lambda: zlib.compressobj(9, 8, 31), "xz": lzma.LZMACompressor,
                     "bz2": lambda: bz2.BZ2Compressor(9),
                     "zstd": lambda: zstandard.ZstdCompressor(level=19).compressobj()}[kind]()
        _PADDING[(kind, size)] = b"".join(
            [comp.compress(chunk) for _ in range(size >> 20)]) + comp.flush()
    return COMPRESS[kind](head) + _PADDING[(kind, size)]


HEADS = {
    "dhat": b'{"dhatFileVersion":2,"mode":"heap","verb":"Allocated","bklt":true,"bkacc":true,',
    "chrome-trace": b'{"traceEvents":[{"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1}',
    "callgrind": b"# callgrind format\nversion: 1\nevents: Ir\nfn=main\n1 1\n",
    "folded": b"main;work 1\n",
}


@pytest.mark.parametrize("kind", ["gzip", "xz", "zstd", "bz2"])
@pytest.mark.parametrize("fmt", list(HEADS))
def test_a_decompression_bomb_is_refused_in_one_line(fmt: str, kind: str,
                                                     tmp_path: Path) -> None:
    path = tmp_path / "bomb.dat"
    path.write_bytes(_bomb(kind, HEADS[fmt], 24 << 20))  # inflates 200-4000x to 24 MB
    assert path.stat().st_size < 200_000
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "inflates past 16.0 MB" in lines[0], res.stderr
    assert "CCTOOL_MAX_INFLATE" in lines[0] and "bomb.dat" in lines[0]


def test_the_limit_can_be_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "trace.json.gz"
    path.write_bytes(_bomb("gzip", HEADS["chrome-trace"] + b"]}", 20 << 20))
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 2 and "inflates past" in res.stderr
    assert "(--max-inflate RATIO or CCTOOL_MAX_INFLATE=RATIO)" in res.stderr
    res = CliRunner().invoke(cli, ["--max-inflate", "2000", "tree", str(path)])
    assert res.exit_code == 0, res.stderr
    res = CliRunner().invoke(cli, ["tree", str(path)])  # the option held for one command
    assert res.exit_code == 2
    monkeypatch.setenv(_input.ENV, "2000")
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 0, res.stderr
    monkeypatch.setenv(_input.ENV, "lots")
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 2 and "CCTOOL_MAX_INFLATE='lots'" in res.stderr


def test_a_broken_compressed_file_is_a_reader_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.json.xz"
    path.write_bytes(lzma.compress((DATA / "chrome-trace" / "viztracer.json").read_bytes())[:-64])
    res = CliRunner().invoke(cli, ["tree", str(path)])
    assert res.exit_code == 2
    assert "chrome-trace" in res.stderr and "broken xz stream" in res.stderr


def test_a_folder_of_compressed_parts_is_one_run(tmp_path: Path) -> None:
    """callgrind's per-thread files, each gzipped: still the threads of one run."""
    plain = DATA / "callgrind" / "separate-threads"
    for f in plain.iterdir():
        (tmp_path / f"{f.name}.gz").write_bytes(gzip.compress(f.read_bytes()))
    with pytest.warns(CctoolWarning, match=r"left out 1 file .*callgrind\.out\.\d+\.gz"):
        gf = read(tmp_path)  # valgrind's empty callgrind.out.<pid> is no profile
    assert gf.num_threads == 3
    assert _sums(tmp_path) == _sums(plain)


@pytest.mark.parametrize("kind", ["gzip", "xz", "zstd"])
def test_a_pprof_bomb_named_with_from_is_refused(kind: str, tmp_path: Path) -> None:
    """A valid profile.proto start (sample types), then blanks: the cap stops the read."""
    path = tmp_path / "cpu.pb.gz"
    raw = gzip.decompress((DATA / "pprof" / "cpu.pb.gz").read_bytes())
    path.write_bytes(_bomb(kind, raw[:200], 24 << 20))
    res = CliRunner().invoke(cli, ["tree", "--from", "pprof", str(path)])
    assert res.exit_code == 2 and "inflates past 16.0 MB" in res.stderr, res.stderr
