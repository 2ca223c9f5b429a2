"""Every example people copy runs and shows something: each ``cctool`` command in the README's
and the site's (docs/) ```sh blocks and in every command's ``--help`` Example block is
executed on real profiles, and must exit 0 (1 for a regression gate that trips) and print
something non-trivial: non-empty output on stdout or in the files it writes, not an
all-zero tree, not "no nodes matched".

The examples name placeholder inputs; they map to real profiles as follows (@ is
../shared/data, which examples may also name as it is; tests/ is this folder's data):

    db/, hpctoolkit-db/, base/, fast-run/    @hpctoolkit-cpi-database
    new/, slow-run/, build/profile/           @hpctoolkit-allgather-database
    run.cct, base.cct, baseline.cct, db.cct   the cpi database saved as .cct
    new.cct                                   the allgather database saved as .cct
    huge-v4-db/                               @hpctoolkit-cpi-v4-database
    runs/ (runs/*.cali)                       @mpi_scaling_cali
    rajaperf/, nightly/                       @rajaperf (nightly/: @rajaperf/lassen)
    baseline-runs/, base-runs/, trials/       five RAJAPerf trials of one configuration
    new-runs/                                 five more trials of it
    dhat-run/, np1/ np2/ np4/                 tests/data/dhat/np4, .../np1 ...
    cali/np*/                                 tests/data/caliper-data/np*
    run.pstats                                tests/data/cprofile/imports.pstats
    callgrind.out.hot                         tests/data/source/callgrind.out.hot
    trace.json                                tests/data/chrome-trace/viztracer-threads.json
    trace-db/                                 tests/data/caliper-trace/np4 (4 ranks' events)
    run1.cali, run2.cali                      @mpi_scaling_cali/27_cores.cali, 64_cores.cali
    timeseries.cali                           tests/data/caliper-timeseries/timeseries.cali

Commands of other tools in the same line (``flamegraph.pl``, ``go tool pprof``, ``mpiexec``)
are not run; the cctool part before them is. Lines that are not cctool commands (installing,
benchmarks, shell setup) are not examples of cctool's output and are skipped, and so are
those that need a Dask cluster (``--scheduler``) or a terminal (``cctool view``, a full-screen
viewer tested through Textual's pilot in test_tui.py).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import COMMANDS, cli
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "data"
TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
CPI, ALLGATHER = "hpctoolkit-cpi-database", "hpctoolkit-allgather-database"

# Placeholder -> (where, name): "@" shared data, "tests" tests/data, "made" the fixture's folder.
PLACES: dict[str, tuple[str, str]] = {
    "db/": ("@", CPI), "hpctoolkit-db/": ("@", CPI), "base/": ("@", CPI),
    "fast-run/": ("@", CPI), "new/": ("@", ALLGATHER), "slow-run/": ("@", ALLGATHER),
    "build/profile/": ("@", ALLGATHER), "huge-v4-db/": ("@", "hpctoolkit-cpi-v4-database"),
    "runs/": ("@", "mpi_scaling_cali"), "runs/*.cali": ("@", "mpi_scaling_cali/*.cali"),
    "rajaperf/": ("@", "rajaperf"), "rajaperf/lassen/": ("@", "rajaperf/lassen"),
    "nightly/": ("@", "rajaperf/lassen"),
    "run.cct": ("made", "cpi.cct"), "base.cct": ("made", "cpi.cct"),
    "baseline.cct": ("made", "cpi.cct"), "db.cct": ("made", "cpi.cct"),
    "new.cct": ("made", "allgather.cct"),
    "baseline-runs/": ("made", "A"), "base-runs/": ("made", "A"), "new-runs/": ("made", "B"),
    "trials/*.cali": ("made", "A/*.cali"), "trials/": ("made", "A"), "perf-history/": ("made", "H"),
    "dhat-run/": ("tests", "dhat/np4"), "np1/": ("tests", "dhat/np1"),
    "np2/": ("tests", "dhat/np2"), "np4/": ("tests", "dhat/np4"),
    "cali/np*/": ("tests", "caliper-data/np*"),
    "run.pstats": ("tests", "cprofile/imports.pstats"),
    "callgrind.out.hot": ("tests", "source/callgrind.out.hot"),
    "trace.json": ("tests", "chrome-trace/viztracer-threads.json"),
    "trace-db/": ("tests", "caliper-trace/np4"),
    "run1.cali": ("@", "mpi_scaling_cali/27_cores.cali"),
    "run2.cali": ("@", "mpi_scaling_cali/64_cores.cali"),
    "timeseries.cali": ("tests", "caliper-timeseries/timeseries.cali"),
}
HELP_LINES = 90  # at Click's default width of 80 columns


def _join(lines: list[str]) -> Iterator[str]:
    """Whole commands: backslash continuations joined, and lines inside an open quote."""
    buf = ""
    for line in lines:
        buf = f"{buf} {line.strip()}" if buf else line.strip()
        if buf.endswith("\\"):
            buf = buf[:-1].rstrip()
            continue
        try:
            shlex.split(buf, comments=True)
        except ValueError:  # a quote continues on the next line
            continue
        if buf:
            yield buf
        buf = ""


def _sh_examples(text: str) -> list[str]:
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)
    return [c for b in blocks for c in _join(b.splitlines()) if c.startswith("cctool ")]


def readme_examples() -> list[str]:
    return _sh_examples((ROOT / "README.md").read_text())


def docs_examples() -> list[tuple[str, str]]:
    """The site's ```sh examples, each page by its path; one already run from the README is
    not run twice."""
    seen = set(readme_examples())
    out = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for c in _sh_examples(page.read_text()):
            if c not in seen:
                seen.add(c)
                out.append((str(page.relative_to(ROOT)), c))
    return out


def help_examples() -> list[tuple[str, str]]:
    out = []
    for name in ["", *sorted(COMMANDS)]:
        text = CliRunner().invoke(cli, [*([name] if name else []), "--help"]).stdout
        block = re.search(r"^\s*Example:\n(.*?)(?:\n\s*\n|\Z)", text, flags=re.S | re.M)
        assert block, f"cctool {name} --help has no Example block"
        out += [(name or "cctool", c) for c in _join(block.group(1).splitlines())
                if c.startswith("cctool ")]
    return out


# Examples that need a running Dask cluster (an address, a scheduler file, a batch job's
# variables) cannot run here; the distributed tests start a local one instead.
CLUSTER = ("--scheduler",)


def _first_of_each(examples: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The examples without those that run the very same command as one before them (the
    same words once comments and spacing are left out: a README line shown again in a
    guide or in a --help Example block)."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for source, command in examples:
        words = tuple(shlex.split(command, comments=True))
        if words not in seen:
            seen.add(words)
            out.append((source, command))
    return out


EXAMPLES = _first_of_each(
    [(s, c) for s, c in [("README", c) for c in readme_examples()] + docs_examples()
     + help_examples()
     if not any(k in c for k in CLUSTER) and not c.startswith("cctool view ")])
# Options that need an optional extra, which `pip install -e '.[test]'` does not bring:
# their examples skip (with the reason) where it is not installed.
EXTRAS = {"--plot": ("matplotlib", "plot")}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Saved .cct profiles and folders of trials the placeholders map to."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    root = tmp_path_factory.mktemp("examples")
    for name, out in ((CPI, "cpi.cct"), (ALLGATHER, "allgather.cct")):
        res = CliRunner().invoke(cli, ["read", str(SHARED_DATA / name), "-o", str(root / out)])
        assert res.exit_code == 0, res.stderr
    for side, numbers in (("A", range(1, 6)), ("B", range(6, 11))):
        (root / side).mkdir()
        for i in numbers:
            shutil.copy(SHARED_DATA / TRIALS / str(i) / "Base_CUDA-block_128.cali",
                        root / side / f"trial{i}.cali")
    from cctool.api import history_add

    for i in range(1, 6):  # a history store of five recorded runs
        history_add(root / "H", [str(root / "A" / f"trial{i}.cali")], keys={"commit": f"c{i}"})
    return root


def _place(token: str, made: Path) -> list[str]:
    if token.startswith("../shared/data/"):
        return [str(SHARED_DATA / token.removeprefix("../shared/data/"))]
    if token.startswith("tests/data/"):  # the site's tutorials name this folder's data
        return [str(HERE / token.removeprefix("tests/data/"))]
    if token not in PLACES:
        return [token]
    where, name = PLACES[token]
    base = {"@": SHARED_DATA, "tests": HERE, "made": made}[where]
    if "*" in name:
        found = sorted(str(p) for p in base.glob(name))
        assert found, f"{token}: nothing matches {base / name}"
        return found
    return [str(base / name)]


def _segments(command: str) -> list[tuple[list[str], str | None]]:
    """The cctool commands of a line, each with where its stdout goes: '|' (the next one),
    a file ('>'), or None; the rest of the line after another tool is left out."""
    tokens = shlex.split(command, comments=True)
    out: list[tuple[list[str], str | None]] = []
    current: list[str] = []
    it = iter(tokens)
    for tok in it:
        if tok in ("|", "&&"):
            out.append((current, "|" if tok == "|" else None))
            current = []
        elif tok == ">":
            out.append((current, next(it)))
            current = []
        else:
            current.append(tok)
    out.append((current, None))
    kept = []
    for args, to in out:
        if not args or args[0] != "cctool":
            break
        kept.append((args, to))
    return kept


@pytest.mark.parametrize("source,command", EXAMPLES, ids=[f"{s}: {c[:60]}" for s, c in EXAMPLES])
def test_example_runs_and_shows_something(source: str, command: str, made: Path,
                                          tmp_path: Path, monkeypatch) -> None:
    for option, (module, extra) in EXTRAS.items():
        if option in shlex.split(command, comments=True):
            pytest.importorskip(module, reason=f"{option} needs the {extra} extra "
                                f"(pip install -e '.[{extra}]')")
    monkeypatch.chdir(tmp_path)
    piped: bytes | None = None
    for args, to in _segments(command):
        argv = [a for tok in args[1:] for a in _place(tok, made)]
        res = CliRunner().invoke(cli, argv, input=piped, catch_exceptions=False)
        assert res.exit_code in (0, 1), f"{command}\n{res.stderr}"
        if res.exit_code == 1:
            assert "gate failed" in res.stderr, f"{command}\n{res.stderr}"
        piped = res.stdout_bytes if to == "|" else None
        if to not in (None, "|"):  # a redirect: into the test's folder, whatever the path
            Path(Path(to).name).write_bytes(res.stdout_bytes)
        text = res.stdout + res.stderr
        for empty in ("every value shown is 0", "no nodes matched", "nothing to show"):
            assert empty not in text, f"{command}: {empty}"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert res.stdout_bytes.strip() or files, f"{command}: no output"
    for p in files:
        assert p.stat().st_size > 0, f"{command}: {p.name} is empty"
    shown = res.stdout if res.stdout.strip() else files[0].read_bytes().decode(errors="replace")
    assert re.search(r"[1-9]", shown), f"{command}: only zeros\n{shown[:2000]}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_is_concise(name: str) -> None:
    """The essentials and an Example block: not a manual (the README is)."""
    lines = CliRunner().invoke(cli, [name, "--help"]).stdout.splitlines()
    assert len(lines) <= HELP_LINES, f"cctool {name} --help has {len(lines)} lines"


def test_examples_were_found() -> None:
    sources = {s for s, _ in EXAMPLES}
    assert "README" in sources and {"tree", "diff", "query", "scaling"} <= sources
