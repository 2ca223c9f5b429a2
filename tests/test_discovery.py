"""Folder discovery finds the same runs as sniffing every file did, at the cost of a few
sniffs for a folder of many repeated runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

import cctool.readers.discovery as discovery
import cctool.readers.sniffing as sniffing
from cctool.cli import cli
from cctool.ops.runs import SniffingBatch, SummaryBatch
from cctool.readers import _parts, expand_paths, is_profile, runs_to_sniff, sniff
from tests.conftest import json_rows

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).parent.parent.parent / "shared" / "data"


def _every_file(folder: Path, runs: bool) -> list[tuple[Path, ModuleType]]:
    """The discovery of before, as its specification: every file sniffed."""
    whole = sniff(folder) if folder.is_dir() else None
    if whole is not None and not (runs and hasattr(whole, "run_files")):
        return []
    files = (list(whole.run_files(folder)) if whole is not None else
             sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")))
    return [(f, mod) for f in files if (mod := sniff(f)) is not None]


def _one_run_before(folder: Path, fmt: str | None) -> tuple[list[Path], str] | None:
    found = _every_file(folder, runs=True)
    if not found or (fmt and any(mod.NAME != fmt for _, mod in found)):
        return None
    files, mods = [f for f, _ in found], [mod for _, mod in found]
    return (files, mods[0].NAME) if _parts.one_run(files, mods) else None


def _runs_before(folder: Path) -> list[Path]:
    if _one_run_before(folder, None) is not None:
        return [folder]
    mod = sniff(folder)
    if mod is not None:
        return list(mod.run_files(folder)) if hasattr(mod, "run_files") else [folder]
    return [f for f, _ in _every_file(folder, runs=False)] or [folder]


def _folders() -> list[Path]:
    shared = [SHARED / n for n in ("spotdb", "mpi_scaling_cali", "caliper-ordered-cali-mpi",
                                   "caliper-cpi-json", "rajaperf", "timemory")]
    return sorted(p for p in DATA.rglob("*") if p.is_dir()) + [p for p in shared if p.is_dir()]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Profiles of eight formats beside sources, READMEs and a sub-folder."""
    out = tmp_path_factory.mktemp("mixed")
    for rel in ("caliper/spot-np2.cali", "caliper/runtime-profile-np4.cali",
                "callgrind/callgrind.out.sample", "callgrind/sample.c", "callgrind/README.md",
                "folded/README.md", "caliper/totals.json", "cct", "pprof", "speedscope",
                "cprofile", "gprof2dot"):
        src = DATA / rel
        if src.is_dir():
            for f in sorted(p for p in src.iterdir() if p.is_file())[:3]:
                shutil.copy(f, out / f"{src.name}-{f.name}")
        else:
            shutil.copy(src, out / src.name)
    shutil.copytree(DATA / "callgrind" / "dumps", out / "dumps")
    (out / ".hidden.cali").write_bytes((DATA / "caliper" / "spot-np2.cali").read_bytes())
    return out


def test_a_mixed_folder_is_detected_as_before(mixed: Path) -> None:
    before = _runs_before(mixed)
    assert len(before) > 8  # most of the copies are profiles, the sources are not
    assert expand_paths([str(mixed)]) == [str(p) for p in before]
    assert discovery._profile_modules(mixed) == _every_file(mixed, runs=False)
    pairs = runs_to_sniff([str(mixed)])
    assert [p for p, unsure in pairs if not unsure or is_profile(p)] == [str(p) for p in before]
    assert sum(unsure for _, unsure in pairs) > 5  # left to the workers that read them


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: p.name)
def test_every_sample_folder_is_detected_as_before(folder: Path) -> None:
    assert expand_paths([str(folder)]) == [str(p) for p in _runs_before(folder)]
    for fmt in (None, "caliper", "callgrind"):
        got = discovery.one_run(folder, fmt)
        assert (got and (got[0], got[1].NAME)) == (_one_run_before(folder, fmt) or None)


def test_a_folder_of_repeated_runs_is_not_sniffed_file_by_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = (DATA / "caliper" / "spot-np2.cali").read_bytes()
    for i in range(40):
        (tmp_path / f"run{i:03d}.cali").write_bytes(run)
    sniffed: list[Path] = []

    def counting(p: Path) -> ModuleType | None:
        sniffed.append(p)
        return sniff(p)

    for module in (discovery, sniffing):
        monkeypatch.setattr(module, "sniff", counting)
    runs = expand_paths([str(tmp_path)])
    assert runs == [str(tmp_path / f"run{i:03d}.cali") for i in range(40)]
    assert len([p for p in sniffed if p.is_file()]) <= 2  # the first two decide


def _cli(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_workers_sniff_the_runs_they_read_with_the_same_result(mixed: Path) -> None:
    """The files past a plain folder's first profiles are sniffed on the workers; the run
    table is the one made in this process."""
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    here = _cli("runs", mixed, "--to", "json")
    assert here.exit_code == 0, here.stderr
    there = _cli("runs", mixed, "--to", "json", "--jobs", "2")
    assert there.exit_code == 0, there.stderr
    assert json_rows(there.stdout) == json_rows(here.stdout)
    assert len(json_rows(here.stdout)) == len(_runs_before(mixed))


def test_sniffing_batch_drops_what_no_reader_takes(mixed: Path) -> None:
    items = [(str(mixed / "sample.c"), True), (str(mixed / "spot-np2.cali"), True),
             (str(mixed / "callgrind.out.sample"), False)]
    got = SniffingBatch(SummaryBatch())(items)
    assert got[0] is None
    assert [s.path for s in got[1:] if s is not None] == [p for p, _ in items[1:]]


def test_an_error_while_listing_stops_the_starting_workers(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed", reason="needs pip install 'dask[distributed]'")
    (tmp_path / "notes.txt").write_text("no profile here\n")
    got = _cli("runs", tmp_path, "--jobs", "2")
    assert got.exit_code == 2
    assert "no profile cctool knows in this folder" in got.stderr
