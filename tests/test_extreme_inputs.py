"""Damaged and extreme inputs: each ends in a result or in one line on stderr with exit 2,
in bounded time and memory; never a traceback, a kill or a hang."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from cctool.options import Spans, parse_selection, selection_mask
from cctool.readers import read
from cctool.render.files import save

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def run(*args: str, limit_as: int | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``cctool args`` in a new process (under an address-space limit when asked)."""
    def limit() -> None:
        if limit_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    return subprocess.run([sys.executable, "-m", "cctool", *args], capture_output=True,
                          text=True, env=ENV, timeout=timeout, check=False, preexec_fn=limit)


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """``cctool args`` in this process (Click's runner), as :func:`run` gives it: for runs
    that need no limit, signal or separate process (each new one imports Polars again)."""
    from click.testing import CliRunner

    from cctool.cli import cli

    res = CliRunner().invoke(cli, list(args))
    return subprocess.CompletedProcess(args, res.exit_code, res.stdout, res.stderr)


def one_line(res: subprocess.CompletedProcess[str], *words: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], res.stderr


# --------------------------------------------------------------------------- --rank ranges


def test_a_wide_range_is_kept_as_its_bounds() -> None:
    sel = parse_selection("0-99999999999,5,100000000000-100000000010")  # kept, not expanded
    assert sel == Spans(((0, 100000000010),))
    assert parse_selection("0-3,8") == (0, 1, 2, 3, 8)
    assert parse_selection("7") == 7
    import numpy as np

    values = np.array([0, 5, 99999999999, 100000000011], dtype=np.int64)
    assert selection_mask(values, Spans(((1, 10), (99999999999, 99999999999)))).tolist() == [
        False, True, True, False]


def test_rank_range_of_a_hundred_billion(data) -> None:
    """``--rank 0-99999999999`` selects every rank of the run (in bounded memory: 2 GB of
    address space), the same numbers as no selection; past the run's ranks is an error."""
    db = str(data("hpctoolkit-allgather-database"))
    every = invoke("tree", db, "--to", "json", "--depth", "3")
    wide = run("tree", db, "--to", "json", "--depth", "3", "--rank", "0-99999999999",
               limit_as=2 << 30)
    assert wide.returncode == 0, wide.stderr
    assert _rows(wide.stdout) == _rows(every.stdout)
    past = run("tree", db, "--rank", "10-99999999999", limit_as=2 << 30)
    one_line(past, "no data for ranks 10-99999999999", "the profile has ranks 0-9")


def _rows(text: str) -> list[object]:
    import orjson

    return orjson.loads(text)["rows"]


# --------------------------------------------------------------------------- damaged .cct


@pytest.fixture(scope="module")
def cct(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = Path(__file__).resolve().parent / "data" / "hpctoolkit" / "prof2-profile-db"
    path = tmp_path_factory.mktemp("cct") / "ok.cct"
    save(read(here), path)
    return path


def test_damaged_cct_files_exit_2_naming_the_section(cct: Path, tmp_path: Path) -> None:
    """4 random byte changes past the header: the checksums name the damaged section (a
    change that only hits the padding between sections changes no value)."""
    from polars.testing import assert_frame_equal

    from cctool import saved
    from cctool.errors import SavedFormatError

    blob = cct.read_bytes()
    start = len(saved.MAGIC) + saved._PREAMBLE.size + 8
    body = start + saved._PREAMBLE.unpack(blob[len(saved.MAGIC):start - 8])[1]
    intact = saved.loads(blob)
    rng = random.Random(41)
    named = set()
    for _ in range(50):
        bad = bytearray(blob)
        for at in rng.sample(range(body, len(blob)), 4):
            bad[at] ^= rng.randrange(1, 256)
        try:
            gf = saved.loads(bytes(bad), name="bad.cct")
        except SavedFormatError as exc:
            named.add(str(exc).split("damaged: the ")[1].split(" fails")[0])
            continue
        assert_frame_equal(gf.metrics, intact.metrics)
        assert_frame_equal(gf.nodes, intact.nodes)
    assert named and named <= {"nodes table", "metrics table", "'node' column",
                               "'rank' column", "'thread' column", "'REALTIME' column",
                               "'REALTIME (inc)' column"}, named
    header = orjson.loads(blob[start:body])
    time_at = next(e[2] for e in header["metrics"]["raw"] if e[0] == "REALTIME")
    bad = bytearray(blob)
    bad[body + time_at + 8] ^= 0x01  # the second value of the REALTIME column
    (tmp_path / "bad.cct").write_bytes(bytes(bad))
    one_line(invoke("tree", str(tmp_path / "bad.cct")), "bad.cct",
             "the 'REALTIME' column fails its checksum")
    head = bytearray(blob)
    head[start + 10] ^= 0x20
    (tmp_path / "head.cct").write_bytes(bytes(head))
    one_line(invoke("tree", str(tmp_path / "head.cct")), "the header fails its checksum")


# --------------------------------------------------------------------------- a deep trace


# Runs a command and prints, last on stderr, the peak resident kB of that one child: a
# process's RUSAGE_CHILDREN is the largest of every child it has waited for, so the test's own
# would count whatever ran before in the same worker.
_PEAK_OF_ONE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
                "sys.exit(r.returncode)")


def measured(*args: str, timeout: float = 120) -> tuple[int, str, str, float, int]:
    """(exit code, stdout, stderr, seconds, peak resident kB) of ``cctool args``, the peak
    that of this command alone."""
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _PEAK_OF_ONE, sys.executable, "-m", "cctool",
                          *args], capture_output=True, text=True, env=ENV, timeout=timeout,
                         check=False)
    seconds = time.perf_counter() - t
    err, _, peak = res.stderr.rstrip("\n").rpartition("\n")
    return res.returncode, res.stdout, err, seconds, int(peak)


def _chain_trace(path: Path, n: int) -> Path:
    """B events f0..f(n-1) at ts=i, E events at ts=2n-i: one chain of n nested frames."""
    events = [{"name": f"f{i}", "ph": "B", "ts": i, "pid": 1, "tid": 1} for i in range(n)]
    events += [{"name": f"f{i}", "ph": "E", "ts": 2 * n - i, "pid": 1, "tid": 1}
               for i in reversed(range(n))]
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    return path


def test_timeline_page_of_a_trace_10000_frames_deep(tmp_path: Path) -> None:
    """The page's heaviest paths on a deep chain use the compiled kernel (its NumPy twin
    walks every row up the chain: past a minute here); the page is written in bounded time."""
    trace = _chain_trace(tmp_path / "deep.json", 10_000)
    code, _, err, seconds, _ = measured("timeline", str(trace), "-o", str(tmp_path / "p.html"),
                                        timeout=300)
    assert code == 0, err
    page = (tmp_path / "p.html").read_text()
    assert "deep.json" in page and seconds < 120


def test_timeline_of_a_trace_100000_frames_deep(tmp_path: Path) -> None:
    """B events f0..f99999 at ts=i, E events at ts=200000-i: one chain of 100,000 nested
    frames. The text timeline stays under 1 GB (the tree of the same file, about 200 MB, is
    the floor); its time is a benchmark's (``bench_edges``), the timeout only catches a walk
    that went quadratic."""
    trace = _chain_trace(tmp_path / "deep.json", 100_000)
    code, out, err, _, peak_kb = measured("timeline", str(trace), "--to", "json", timeout=300)
    assert code == 0, err
    assert peak_kb <= 1 << 20, peak_kb
    rows = orjson.loads(out)["rows"]
    # The root spans the whole run, 200 ms; each frame owns 1 us before its child starts
    # and 1 us after it ends.
    first = rows[0]
    assert first["path"] == "f0"
    assert first["time (inc) [s]"] == pytest.approx(0.2)
    assert first["time [s]"] == pytest.approx(2e-6)


# --------------------------------------------------------------------------- damaged OTF2


@pytest.mark.parametrize("seed", [1, 6])
def test_a_damaged_otf2_definition_file_is_one_line(tmp_path: Path, seed: int) -> None:
    """The bindings print a traceback for an exception inside their record callbacks (an
    undefined reference, a broken string); cctool's line says why, and nothing else shows."""
    pytest.importorskip("otf2")
    import shutil

    archive = tmp_path / "pp"
    shutil.copytree(Path(__file__).resolve().parent / "data" / "otf2" / "ping-pong", archive)
    defs = archive / "traces.def"
    blob = bytearray(defs.read_bytes())
    rng = random.Random(seed)
    for at in rng.sample(range(len(blob)), 4):
        blob[at] ^= rng.randrange(1, 256)
    defs.write_bytes(bytes(blob))
    one_line(run("timeline", str(archive)), "traces.otf2", "damaged records")


# --------------------------------------------------------------------------- Caliper threads


def test_caliper_threads_without_thread_ids_name_the_rank_and_the_service(
        tmp_path: Path) -> None:
    """Caliper's threads.cali (two pthreads beside the master) with the pthread service's
    attribute renamed, as a run without that service records it: the profile reads, the
    timeline says which rank's records overlap and how to record thread ids."""
    real = Path(__file__).resolve().parent / "data" / "caliper-trace" / "threads.cali"
    text = real.read_text()
    assert "data=pthread.id," in text
    bare = tmp_path / "nothreads.cali"
    bare.write_text(text.replace("data=pthread.id,", "data=x.tid,")
                    .replace("data=event.set#pthread.id,", "data=event.set#x.tid,"))
    assert invoke("tree", str(bare)).returncode == 0
    one_line(invoke("timeline", str(bare)), str(bare), "rank 0: records overlap",
             "pthread service", "CALI_SERVICES_ENABLE")
    assert invoke("timeline", str(real)).returncode == 0


# --------------------------------------------------------------------------- ulimit -v

_PEAK = """
import atexit, os
def _peak():
    with open("/proc/self/status") as fh, open(os.environ["PEAK_FILE"], "w") as out:
        out.write(next(l for l in fh if l.startswith("VmPeak:")).split()[1])
atexit.register(_peak)
from cctool.cli import main
main()
"""


def _vm_peak(tmp_path: Path, *args: str) -> tuple[int, str, int]:
    """(exit code, stdout, peak address space in bytes) of ``cctool args``."""
    peak = tmp_path / "peak"
    res = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True,
                         text=True, env={**ENV, "PEAK_FILE": str(peak)}, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stderr
    return res.returncode, res.stdout, int(peak.read_text()) * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_the_budget_under_ulimit_v_counts_the_address_space(tmp_path: Path) -> None:
    """Under an address-space limit half way between what start-up maps and what the whole
    read maps, the budget (half of what the limit leaves past the address space mapped at
    start-up) chooses the streamed read, with the whole read's values; under lower limits
    each run gives the same values or one line that says which limit ran out. The limits
    come from the peaks measured here, so they hold on any machine and under any load."""
    from cctool.synth import generate

    db = str(generate(tmp_path / "db", nodes=5000, ranks=1024, threads=2, metrics=1, seed=3,
                      fmt="v4").path)
    tiny = str(generate(tmp_path / "tiny", nodes=10, ranks=1, threads=1, metrics=1, seed=3,
                        fmt="v4").path)
    args = ("tree", db, "--depth", "3", "--to", "json")
    _, whole, whole_peak = _vm_peak(tmp_path, *args, "--no-stream")
    _, _, start_peak = _vm_peak(tmp_path, "tree", tiny, "--depth", "3", "--to", "json")
    if whole_peak - start_peak < 100 << 20:  # 240 MB here (10M cells)
        pytest.skip(f"the whole read maps {whole_peak >> 20} MB, start-up "
                    f"{start_peak >> 20} MB: too close for limits between them")
    limit = (whole_peak + start_peak) // 2  # the whole read cannot fit under it
    between = run(*args, limit_as=limit)
    assert between.returncode == 0, between.stderr
    assert "reading it in parts" in between.stderr and "ulimit -v" in between.stderr
    parts = _rows(between.stdout)
    # The read in parts differs from the whole read only in the last bits of sums.
    for got, want in zip(parts, _rows(whole), strict=True):
        assert got.keys() == want.keys()  # type: ignore[attr-defined]
        for key, value in want.items():  # type: ignore[attr-defined]
            exact = not isinstance(value, float)  # names, depths, the root's null parent
            assert got[key] == (value if exact else pytest.approx(value, rel=1e-12)), key
    # Lower, the parts shrink with the room the limit leaves, so a limit may still give the
    # result (the same bits: parts of whole ranks merge in one order); whatever the limit, it
    # is the result or one line.
    for lower in ((start_peak + limit) // 2, start_peak + (40 << 20)):
        below = run(*args, "--stream", limit_as=lower)
        assert below.returncode in (0, 2) and "Traceback" not in below.stderr, below.stderr
        if below.returncode == 0:
            assert _rows(below.stdout) == parts
            continue
        said = [line for line in below.stderr.splitlines() if not line.startswith("note: ")]
        assert len(said) == 1 and "out of memory" in said[0] and "ulimit -v" in said[0], said
    # Which limits run out depends on what the machine maps at start-up; a failed allocation
    # is also injected into every command in test_cli_exit_codes.


# --------------------------------------------------------------------------- diff's budget


def test_diff_of_two_databases_past_the_cgroup_budget_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """diff reads both profiles whole: past the budget (here half of a cgroup v2 limit of
    the job, in files laid out as the kernel does) it says so before reading, instead of
    being killed by the kernel. Making a real memory cgroup needs a hierarchy of our own,
    which this test does not assume."""
    from click.testing import CliRunner

    from cctool import memlimit
    from cctool.cli import cli
    from cctool.synth import generate

    a = str(generate(tmp_path / "a", nodes=300, ranks=4, threads=1, metrics=1, seed=2,
                     fmt="v4").path)
    b = str(generate(tmp_path / "b", nodes=300, ranks=4, threads=1, metrics=1, seed=3,
                     fmt="v4").path)
    ok = CliRunner().invoke(cli, ["diff", a, b, "--to", "json"])
    assert ok.exit_code == 0, ok.output
    root = tmp_path / "cgroup"
    (root / "job").mkdir(parents=True)
    (root / "job" / "memory.max").write_text("65536\n")
    proc = tmp_path / "proc-cgroup"
    proc.write_text("0::/job\n")
    real = memlimit.smallest
    monkeypatch.setattr(memlimit, "smallest", lambda: real(root, proc))
    monkeypatch.delenv("CCTOOL_MEMORY_BUDGET", raising=False)
    for extra in ([], ["--to", "folded"]):
        res = CliRunner().invoke(cli, ["diff", a, b, *extra])
        assert res.exit_code == 2 and not res.stdout, res.output
        said = res.stderr.strip().splitlines()
        assert len(said) == 1, said
        for word in (a, b, "diff reads its profiles whole", "cgroup v2 memory limit",
                     "--across ranks"):
            assert word in said[0], said
