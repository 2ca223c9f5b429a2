"""Cases for the fixed costs: saved ``.cct`` files, per-rank algebra, whole-process reads and
the first run after an install (cold kernel cache).

Whole-process figures (a fresh ``cctool`` process, best of several) sit next to in-process
ones (the same work after imports), and each case records the ratio its target is about.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from benchmarks._harness import (
    DATA,
    Measurement,
    best_of,
    case,
    cctool_command,
    children_peak_rss_mb,
    peak_rss_mb,
    synth_db,
    timer,
)

SAVED = (35_000, 512, 2, 1)  # 35.8M rows: the saved-profile size
PER_RANK = (35_000, 512, 1, 1)  # 17.9M rows per side


def _db(size: tuple[int, int, int, int], seed: int = 1) -> Path:
    return synth_db(*size, seed=seed)


def _saved() -> Path:
    """The 35.8M-row database saved as ``.cct`` (made once by ``cctool read -o``)."""
    path = DATA / "saved-n35000-r512-t2-m1-s1.v2.cct"
    if not path.exists():
        subprocess.run([*cctool_command(), "read", str(_db(SAVED)), "-o", str(path)],
                       check=True, capture_output=True)
    return path


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def _python_imports() -> float:
    """A fresh interpreter importing what every command imports (Polars, NumPy, Rich): the
    whole-process floor of a command that does no work."""
    cmd = [sys.executable, "-c", "import polars, numpy, rich.console, click"]
    _run(cmd)
    return best_of(5, partial(_run, cmd))


@case("cct-tree-35k-512-2t", prepare=_saved, floor=_python_imports,
      targets={"wall_s": 0.3})
def cct_tree() -> Measurement:
    """cctool tree run.cct --depth 3 on a 35.8M-row saved profile: whole process, best of 5;
    in-process load + tree in the notes, and peak RSS against the bytes of the column used"""
    path = _saved()
    cmd = [*cctool_command(), "tree", str(path), "--depth", "3"]
    _run(cmd)  # page cache warm, as for the floor
    wall = best_of(5, partial(_run, cmd))
    rss = children_peak_rss_mb()
    from cctool.options import TreeOptions
    from cctool.render import tree_renderable
    from cctool.saved import load

    with timer() as t:
        gf = load(path)
        tree_renderable(gf, TreeOptions(depth=3))
    column_mb = gf.metrics.height * 8 / 1e6
    return Measurement(wall_s=wall, rows=gf.metrics.height, warm_s=t[0], peak_rss_mb=rss,
                       notes={"command": " ".join(cmd[1:]), "in_process_s": t[0],
                              "column_mb": column_mb, "rss_over_column": rss / column_mb,
                              "file_mb": path.stat().st_size / 1e6})


@case("cct-write-35k-512-2t", prepare=lambda: _db(SAVED))
def cct_write() -> Measurement:
    """what -o run.cct adds to cctool read DB (35.8M rows): whole processes, best of 3 each,
    run one after the other; in-process save time in the notes"""
    db = _db(SAVED)
    with tempfile.TemporaryDirectory(dir=DATA) as tmp:
        out = Path(tmp) / "run.cct"
        plain = [*cctool_command(), "read", str(db)]
        saving = [*plain, "-o", str(out)]
        _run(plain)
        pairs = []
        for _ in range(3):  # interleaved: both see the same machine load
            pairs.append((best_of(1, partial(_run, plain)), best_of(1, partial(_run, saving))))
            out.unlink()
        from cctool.readers import read
        from cctool.render.files import save

        gf = read(db)
        with timer() as t:
            save(gf, out)
        size = out.stat().st_size
    base, with_o = min(p[0] for p in pairs), min(p[1] for p in pairs)
    return Measurement(wall_s=with_o - base, rows=gf.metrics.height, warm_s=t[0],
                       peak_rss_mb=children_peak_rss_mb(),
                       notes={"read_s": base, "read_o_s": with_o, "in_process_save_s": t[0],
                              "file_mb": size / 1e6, "pairs": pairs})


def _doc(fn: partial[Measurement], doc: str) -> partial[Measurement]:
    fn.__doc__ = doc
    return fn


def _one_frame_mb(gf: object) -> float:
    return float(gf.metrics.estimated_size()) / 1e6  # type: ignore[attr-defined]


def _sub(right_seed: int) -> Measurement:
    """a - b keeping every rank: the first call in the process, and the memory it adds
    against one frame's (the result has the union's rows)."""
    from cctool.readers import read

    a, b = read(_db(PER_RANK, 1)), read(_db(PER_RANK, right_seed))
    one = _one_frame_mb(a)
    gc.collect()
    before = peak_rss_mb()
    now = _rss_mb()
    with timer() as first:
        d = a - b
    peak = peak_rss_mb()
    rows = d.metrics.height
    del d
    gc.collect()
    warm = best_of(1, lambda: a - b)
    extra = max(peak, before) - now
    return Measurement(wall_s=first[0], rows=rows, warm_s=warm, peak_rss_mb=peak,
                       notes={"one_frame_mb": one, "extra_mb": extra,
                              "extra_over_one_frame": extra / one, "result_rows": rows})


case("sub-per-rank-35k-512", prepare=lambda: [_db(PER_RANK, s) for s in (1, 2)],
     targets={"wall_s": 1.5})(_doc(partial(_sub, 2), "a - b keeping every rank, 17.9M rows "
                                "per side, two different programs (35.8M result rows)"))
case("sub-per-rank-same-35k-512", prepare=lambda: _db(PER_RANK, 1),
     targets={"wall_s": 1.5})(_doc(partial(_sub, 1), "a - b keeping every rank, 17.9M rows "
                                "per side, two reads of one database (17.9M result rows)"))


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0


# The least a command can do with a database: start Python, import NumPy, read every
# metric-db into one array. A whole-process time, as the case's own time is.
_FLOOR_SCRIPT = """
import sys
from pathlib import Path
import numpy as np
files = sorted(Path(sys.argv[1]).glob("*.metric-db"))
head = files[0].read_bytes()[:32]
count = int.from_bytes(head[24:28], "big") * int.from_bytes(head[28:32], "big")
block = np.empty((len(files), count), dtype=">f8")
for i, f in enumerate(files):
    block[i] = np.fromfile(f, dtype=">f8", offset=32)
"""


def _process_floor(path: Path) -> float:
    """A fresh interpreter reading the metric-db files with NumPy, warm page cache, best of 5."""
    cmd = [sys.executable, "-c", _FLOOR_SCRIPT, str(path)]
    _run(cmd)
    return best_of(5, partial(_run, cmd))


for _label, _size in (("10k-128", (10_000, 128, 1, 1)), ("35k-512", (35_000, 512, 1, 1)),
                      ("35k-512-3t3m", (35_000, 512, 3, 3))):
    def _read_cli(size: tuple[int, int, int, int] = _size) -> Measurement:
        from benchmarks.cases import _numpy_floor

        cmd = [*cctool_command(), "read", str(_db(size))]
        _run(cmd)
        wall = best_of(5, partial(_run, cmd))
        rss = children_peak_rss_mb()
        inner = _numpy_floor(_db(size))
        return Measurement(wall_s=wall, rows=size[0] * size[1] * size[2], peak_rss_mb=rss,
                           notes={"command": " ".join(cmd), "in_process_floor_s": inner,
                                  "ratio_to_in_process_floor": wall / inner})

    _read_cli.__doc__ = (f"cctool read DB in a new process against NumPy reading the files in a "
                         f"new process, best of 5 each ({_label})")
    case(f"read-cli-{_label}", prepare=partial(_db, _size),
         floor=partial(lambda z: _process_floor(_db(z)), _size),
         targets={"ratio_to_floor": 4.0})(_read_cli)


def _six(db: Path, other: Path) -> list[list[str]]:
    """The six large commands of a first session."""
    c = cctool_command()
    query = '[{"name": "main"}, "*", {"name": "MPI_.*"}, "*"]'
    return [[*c, "read", str(db)], [*c, "tree", str(db), "--depth", "6"],
            [*c, "query", str(db), query, "--to", "csv", "-o", os.devnull],
            [*c, "diff", str(db), str(other), "--depth", "6"], [*c, "imbalance", str(db)],
            [*c, "groupby", str(db), "--by", "name", "-o", os.devnull]]


@case("first-run-cold-cache", prepare=lambda: [_db(PER_RANK, s) for s in (1, 2)],
      targets={"wall_s": 1.0})
def first_run() -> Measurement:
    """the six large commands right after an install (empty kernel cache) against the same six
    with the cache ready: the extra seconds in total (35,000 x 512; each side the best of 3
    rounds, cold and warm rounds interleaved so both see the same machine load)"""
    cmds = _six(_db(PER_RANK, 1), _db(PER_RANK, 2))
    with tempfile.TemporaryDirectory() as ready, tempfile.TemporaryDirectory() as inline_cache:
        warm_env = {**os.environ, "NUMBA_CACHE_DIR": ready}
        warm_env.pop("CCTOOL_NO_BACKGROUND_COMPILE", None)
        subprocess.run([sys.executable, "-m", "cctool.kernels"], check=True,
                       capture_output=True, env=warm_env)
        rounds, started = [], []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as cache:
                env = {**warm_env, "NUMBA_CACHE_DIR": cache}
                cold = [_timed(c, env) for c in cmds]
                started.append(_wait_for_compile(Path(cache)))
            rounds.append((cold, [_timed(c, warm_env) for c in cmds]))
        inline_env = {**warm_env, "NUMBA_CACHE_DIR": inline_cache,
                      "CCTOOL_NO_BACKGROUND_COMPILE": "1"}
        inline = [_timed(c, inline_env) for c in cmds]
    cold_best = [min(r[0][i] for r in rounds) for i in range(len(cmds))]
    warm_best = [min(r[1][i] for r in rounds) for i in range(len(cmds))]
    return Measurement(wall_s=sum(cold_best) - sum(warm_best),
                       peak_rss_mb=children_peak_rss_mb(),
                       notes={"cold_s": cold_best, "warm_s": warm_best, "rounds": rounds,
                              "compile_started": started, "compile_inline_s": inline,
                              "inline_extra_s": sum(inline) - sum(warm_best)})


def _wait_for_compile(cache: Path) -> bool:
    """Whether the cold commands started a background compile; waits for it to end (at most
    10 minutes) so that it does not run beside the next commands."""
    locks = list(cache.glob("cctool-kernels-*.lock"))
    waited = time.perf_counter()
    while any(lock.exists() for lock in locks) and time.perf_counter() - waited < 600:
        time.sleep(0.5)
    return bool(locks) or any(cache.glob("cctool-kernels-*.ready"))


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start
