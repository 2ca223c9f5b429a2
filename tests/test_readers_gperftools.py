"""gperftools' binary CPU profile: the file kept in tests/data (totals in test_corpus_totals)
and, for names, a profile written here by a program linked with libprofiler."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning, ReaderError
from cctool.readers import detect
from cctool.readers.stacks import gperftools as reader
from tests.reader_checks import check_damaged, shared_sample_paths

DATA = Path(__file__).parent / "data" / "gperftools"
PROFILE = DATA / "work.prof"
LIBPROFILER = Path("/usr/lib/x86_64-linux-gnu/libprofiler.so")
NEEDS_LIBPROFILER = pytest.mark.skipif(
    shutil.which("gcc") is None or not LIBPROFILER.exists(),
    reason="needs gcc and gperftools' libprofiler (libgoogle-perftools-dev)")


def _profiled_run(tmp_path: Path) -> tuple[Path, Path]:
    """work.c built against libprofiler and run once: (the program, the profile it wrote)."""
    exe = tmp_path / "work_prof"
    subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", str(exe),
                    str(DATA / "work.c"), "-Wl,--no-as-needed", "-lprofiler",
                    "-Wl,--as-needed"], check=True)
    prof = tmp_path / "cpu.prof"
    env = {**os.environ, "CPUPROFILE": str(prof), "CPUPROFILE_FREQUENCY": "1000"}
    subprocess.run([str(exe), "1"], check=True, env=env)
    return exe, prof


@pytest.mark.filterwarnings("ignore::UserWarning")  # where the binary that ran is gone
def test_header_period_and_samples() -> None:
    gf = reader.read(PROFILE)
    gf.validate()
    assert gf.metadata["period_us"] == 1000
    assert gf.metadata["metric_units"] == {"time": "us", "samples": "count"}


@NEEDS_LIBPROFILER
def test_names_from_the_binaries_that_ran(tmp_path: Path) -> None:
    exe, prof = _profiled_run(tmp_path)
    gf = reader.read(prof)
    names = set(gf.nodes["name"].to_list())
    assert {"main", "middle", "leaf", "worker"} <= names
    main = gf.nodes.filter(pl.col("name") == "main")
    assert main["module"][0] == str(exe)
    # a call names its caller: leaf is only ever under middle or other
    parents = gf.nodes.join(gf.nodes.select(pl.col("node").alias("parent"),
                                            pl.col("name").alias("caller")), on="parent")
    assert set(parents.filter(pl.col("name") == "leaf")["caller"]) <= {"middle", "other"}
    exe.touch()  # rebuilt after the run: its symbols are not trusted
    os.utime(exe, (prof.stat().st_mtime + 10, prof.stat().st_mtime + 10))
    with pytest.warns(CctoolWarning, match="changed after the profile was written"):
        again = reader.read(prof)
    assert "main" not in set(again.nodes["name"].to_list())


def test_sniff_is_strict() -> None:
    assert detect(PROFILE).NAME == "gperftools"
    for sample in shared_sample_paths():
        assert not reader.sniff(sample), sample


def test_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "cut.prof"
    path.write_bytes(PROFILE.read_bytes()[:200])
    with pytest.raises(ReaderError, match="ends before its end record|overruns the file"):
        reader.read(path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_damaged_files_fail_cleanly(tmp_path: Path) -> None:
    check_damaged(reader, PROFILE, tmp_path / "x.prof")


def test_contention_profile_in_pprofs_units() -> None:
    """pprof's test file: contentions = count x sampling period, delay = cycles x period /
    cycles per second (totals in test_corpus_totals, from pprof's own parse)."""
    from cctool.readers.stacks import contention

    with pytest.warns(CctoolWarning, match="could not be named"):
        gf = contention.read(DATA / "cppbench.contention")
    gf.validate()
    assert gf.metadata["sampling_period"] == 100
    assert gf.metadata["metric_units"] == {"delay": "s", "contentions": "count"}
    assert detect(DATA / "cppbench.contention").NAME == "contention"
    for sample in shared_sample_paths():
        assert not contention.sniff(sample), sample


def test_legacy_go_cpu_profiles() -> None:
    """Go's legacy CPU profile is gperftools' layout (pprof's test files, no memory map)."""
    for name in ("go.crc32.cpu", "gobench.cpu"):
        assert detect(DATA / name).NAME == "gperftools"
        with pytest.warns(CctoolWarning, match="could not be named"):
            gf = reader.read(DATA / name)
        assert gf.metadata["period_us"] == 10000


@NEEDS_LIBPROFILER
def test_a_note_names_the_files_that_named_addresses(tmp_path: Path) -> None:
    exe, prof = _profiled_run(tmp_path)
    from cctool.errors import CctoolNote

    with pytest.warns(CctoolNote, match=f"named from this machine's .*{exe}"):
        reader.read(prof)
