"""Fast new surfaces: 16,000 Caliper runs, and the stack exports of a capped call graph.

Each case runs both sides of its row in fresh processes, in turn (A B A B ...), and keeps
each side's best wall and CPU (user + system) seconds; it prints both and their ratio on
stderr and records them in the notes. On a loaded machine read the CPU seconds: the wall
seconds of one side may include minutes of waiting for a core.

- ``fast-runs-16000`` / ``fast-stats-16000``: ``cctool runs`` and ``cctool stats
  --group-by variant`` over the 16,000 Caliper profiles of :mod:`benchmarks.bench_ensembles`
  (target 6 s), against a Python process that only reads every file (the floor). With
  ``CCTOOL_PEER_SRC=/path/to/an/older/checkout`` the same command from that source tree is
  timed too (the previous release's row).
- ``fast-export-folded-cc1plus`` / ``fast-export-speedscope-cc1plus``: ``cctool tree FILE
  --to folded|speedscope -o OUT`` on the 4.2 MB callgrind profile of cc1plus of
  :mod:`benchmarks.bench_callgraph_exports` (1,000,000 contexts, capped; target 10 s),
  against ``cctool tree FILE -o OUT.txt`` (the same read, drawn as text).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._harness import DATA, Measurement, case
from benchmarks.bench_ensembles import caliper_runs

RUNS = 16_000
ROUNDS = 3
CALLGRIND = DATA / "cc1plus-stl.callgrind"
PEER_ENV = "CCTOOL_PEER_SRC"
_READ_ALL = ("import os,sys\nd=sys.argv[1]\nfor n in sorted(os.listdir(d)):\n"
             "    p=os.path.join(d,n)\n    if n.endswith('.cali'):\n"
             "        with open(p,'rb') as f: f.read().decode()\n")


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one fresh process running ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: "
                           f"{err.decode(errors='replace')[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _sides(name: str, sides: dict[str, tuple[list[str], dict[str, str] | None]]) -> Measurement:
    """Time ``sides`` (label -> command, environment) in turn, best of :data:`ROUNDS`; the
    first side is the command of the row, the measurement's wall its best."""
    best: dict[str, list[float]] = {k: [float("inf")] * 3 for k in sides}
    for _ in range(ROUNDS):
        for label, (cmd, env) in sides.items():
            got = _run(cmd, env)
            best[label] = [min(a, b) for a, b in zip(best[label], got, strict=True)]
    first = next(iter(sides))
    notes: dict[str, object] = {"load": os.getloadavg()[0], "rounds": ROUNDS}
    for label, (wall, cpu, peak) in best.items():
        notes.update({f"{label}_wall_s": wall, f"{label}_cpu_s": cpu, f"{label}_peak_mb": peak})
        if label != first:
            notes[f"cpu_ratio_to_{label}"] = best[first][1] / cpu
            notes[f"wall_ratio_to_{label}"] = best[first][0] / wall
    text = "; ".join(f"{k} wall {w:.2f} s cpu {c:.2f} s peak {p:.0f} MB"
                     for k, (w, c, p) in best.items())
    ratios = ", ".join(f"{k} {v:.2f}x" for k, v in notes.items() if "ratio" in k)
    print(f"  {name}: {text}; {ratios}; load {notes['load']:.1f}", file=sys.stderr)
    return Measurement(wall_s=best[first][0], peak_rss_mb=best[first][2], notes=notes)


def _cctool(*args: str) -> list[str]:
    return [sys.executable, "-m", "cctool", *args]


def _ensemble(name: str, args: list[str]) -> Measurement:
    folder = str(caliper_runs(RUNS))
    sides: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "cctool": (_cctool(*args[:1], folder, *args[1:]), None),
        "read_files": ([sys.executable, "-c", _READ_ALL, folder], None),
    }
    peer = os.environ.get(PEER_ENV)
    if peer:  # run from the peer's tree: its source first on the path, not this checkout's
        env = {**os.environ, "PYTHONPATH": peer}
        cmd = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
               "from cctool.cli import main; sys.argv[0] = 'cctool'; main()", peer,
               *args[:1], folder, *args[1:]]
        sides["peer"] = (cmd, env)
    return _sides(name, sides)


def _runs16k() -> object:
    return caliper_runs(RUNS)


@case("fast-runs-16000", prepare=_runs16k, targets={"wall_s": 6.0})
def runs_16000() -> Measurement:
    """cctool runs over 16,000 Caliper profiles vs reading the files (and a peer tree)"""
    return _ensemble("fast-runs-16000", ["runs", "--to", "csv", "-o", os.devnull])


@case("fast-stats-16000", prepare=_runs16k, targets={"wall_s": 6.0})
def stats_16000() -> Measurement:
    """cctool stats --group-by variant over 16,000 Caliper profiles vs reading the files"""
    return _ensemble("fast-stats-16000", ["stats", "--group-by", "variant", "--to", "csv",
                                          "-o", os.devnull])


def _callgrind() -> Path:
    if not CALLGRIND.exists():
        from benchmarks.bench_callgraph_exports import regenerate

        regenerate(CALLGRIND)  # about 10 minutes under valgrind
    return CALLGRIND


def _export(name: str, fmt: str, suffix: str) -> Measurement:
    src = str(_callgrind())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"x.{suffix}"
        got = _sides(name, {
            "export": (_cctool("tree", src, "--to", fmt, "-o", str(out)), None),
            "text_tree": (_cctool("tree", src, "-o", str(Path(tmp) / "x.txt")), None),
        })
        got.notes["output_bytes"] = out.stat().st_size
        got.notes["input_bytes"] = Path(src).stat().st_size
    return got


@case("fast-export-folded-cc1plus", prepare=_callgrind, targets={"wall_s": 10.0})
def export_folded() -> Measurement:
    """cctool tree --to folded of a capped 1M-context call graph vs its text tree"""
    return _export("fast-export-folded-cc1plus", "folded", "folded")


@case("fast-export-speedscope-cc1plus", prepare=_callgrind, targets={"wall_s": 10.0})
def export_speedscope() -> Measurement:
    """cctool tree --to speedscope of a capped 1M-context call graph vs its text tree"""
    return _export("fast-export-speedscope-cc1plus", "speedscope", "speedscope.json")
