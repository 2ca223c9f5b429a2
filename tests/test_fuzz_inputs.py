"""Damaged copies of every reader's samples: ``cctool read`` ends with a result (exit 0) or
one ``Error:`` line (exit 2), never a traceback; a text file cut in the middle of a line is
noticed (exit 2, or a warning that the intact file does not give).

The samples are those of ``tests/data/<format>/`` (real profilers' files). Each gets 30
mutants, half cut at a random offset and half with one to four random bytes changed; a
folder profile (a database, a folder of per-rank files) has its largest file damaged. The
mutants run round by round over all readers, in one process, within 20 s in all (a slow or
loaded machine does fewer rounds, at least 10).
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cctool.cli import cli
from tests.reader_checks import time_limit

DATA = Path(__file__).resolve().parent / "data"
# Rounds of mutants (one per reader each). 30 rounds are 15 cuts and 15 byte changes of every
# sample, some 1,300 damaged reads from a fixed seed, the same each run: three times the 10
# rounds a loaded machine must reach within CAP_SECONDS. More rounds would add more of the
# same two kinds of damage at other offsets, not another kind, at a quarter second each.
MUTANTS = 30
CAP_SECONDS = 20
# Folders that hold no profile of a reader, and files in reader folders that are the
# programs profiled, expected values or notes.
_NOT_READERS = {"junit", "unsupported"}
_NOT_SAMPLES = {"totals.json", "expected.json", "functions.json", "CMakeLists.txt", "go.mod",
                "page.html", "MANIFEST.md", "scorep.cfg", "README.md"}
_SOURCE = {".c", ".cpp", ".h", ".php", ".py", ".js", ".go", ".md", ".xsd"}
# A cut that leaves a valid, shorter file of the format: yappi ends its last line without a
# line end and writes no totals, so a cost line cut short is still a cost line.
_UNDETECTABLE_CUT = {"callgrind/yappi.callgrind"}


def _samples(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.iterdir())
            if p.name not in _NOT_SAMPLES and p.suffix not in _SOURCE]


def _size(p: Path) -> int:
    return p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.rglob("*")
                                                     if f.is_file())


def _victim(work: Path) -> Path:
    """The file to damage: the sample itself, or the largest file of a folder profile."""
    if work.is_file():
        return work
    return max((f for f in work.rglob("*") if f.is_file()), key=lambda f: f.stat().st_size)


def _copy(sample: Path, into: Path) -> Path:
    work = into / sample.parent.name / sample.name
    work.parent.mkdir(parents=True, exist_ok=True)
    if sample.is_dir():
        shutil.copytree(sample, work)
    else:
        shutil.copy(sample, work)
    return work


def _mutants(blob: bytes, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    for i in range(MUTANTS):
        if i % 2 == 0:
            cut = rng.randrange(len(blob))
            yield f"cut at {cut}", blob[:cut]
        else:
            damaged = bytearray(blob)
            where = [rng.randrange(len(blob)) for _ in range(rng.randint(1, 4))]
            for pos in where:
                damaged[pos] = rng.randrange(256)
            yield f"bytes {where} changed", bytes(damaged)


def _read(path: Path) -> Result:
    with time_limit(10):
        return CliRunner().invoke(cli, ["read", str(path)])


def _check(res: Result, what: str) -> None:
    raised = res.exception is not None and not isinstance(res.exception, SystemExit)
    assert not raised and res.exit_code in (0, 2), (
        f"{what}: exit {res.exit_code}, {res.exception!r}")
    assert "Traceback" not in res.stderr, (what, res.stderr)
    if res.exit_code == 2:
        errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, (what, res.stderr)


def test_damaged_samples_of_every_reader(tmp_path: Path) -> None:
    folders = [d for d in sorted(DATA.iterdir()) if d.is_dir() and d.name not in _NOT_READERS]
    # The smallest sample of each reader's folder keeps 50 mutants each within the cap.
    picked = [min(s, key=_size) for d in folders if (s := _samples(d))]
    assert len(picked) >= 30
    victims = []
    for sample in picked:
        work = _copy(sample, tmp_path)
        victim = _victim(work)
        victims.append((work, victim, _mutants(victim.read_bytes(), random.Random(41))))
    start, rounds = time.perf_counter(), 0
    while rounds < MUTANTS and time.perf_counter() - start < CAP_SECONDS:
        for work, victim, mutants in victims:
            label, blob = next(mutants)
            victim.write_bytes(blob)
            _check(_read(work), f"{work.relative_to(tmp_path)}: {label}")
        rounds += 1
    assert rounds >= 10, f"only {rounds} rounds of mutants in {CAP_SECONDS} s"


def _text_samples() -> Iterator[object]:
    for d in sorted(DATA.iterdir()):
        if not d.is_dir() or d.name in _NOT_READERS:
            continue
        for sample in _samples(d):
            victim = _victim(sample)
            try:
                text = victim.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue  # binary or compressed
            if text.count("\n") < 5 or len(text) > 1 << 19:
                continue  # no lines to cut; or large, where a smaller sample of the reader does
            name = f"{d.name}/{sample.name}"
            if name in _UNDETECTABLE_CUT:
                continue
            yield pytest.param(sample, id=name)


@pytest.mark.parametrize("sample", list(_text_samples()))
def test_a_line_cut_in_the_middle_is_noticed(sample: Path, tmp_path: Path) -> None:
    work = _copy(sample, tmp_path)
    victim = _victim(work)
    intact = _read(work)
    _check(intact, "intact")
    blob = victim.read_bytes()
    at = int(len(blob) * 0.6)  # the line that holds 60% of the file, cut half way through
    first, end = blob.rfind(b"\n", 0, at) + 1, blob.find(b"\n", at)
    if end < 0:
        end = len(blob)
    if end - first < 2:
        pytest.skip("no line with text at 60% of the file")
    victim.write_bytes(blob[:first + (end - first) // 2])
    res = _read(work)
    _check(res, "cut")
    new = set(res.stderr.splitlines()) - set(intact.stderr.splitlines())
    assert res.exit_code == 2 or any(line.startswith("warning:") for line in new), res.stderr
