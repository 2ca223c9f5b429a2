"""Benchmarks of ensembles: 16,000 Caliper profiles (run table and per-path statistics,
in-process and on 1 or 2 local Dask workers), a diff of two 100-run ensembles, and a v4
database aggregated over its ranks within bounded memory.

The Caliper profiles are written by Caliper itself: ``ensemble_program/kernels.c`` (66
regions in six groups, shaped like the RAJA Performance Suite) is built against Caliper and
run once per profile with ``CALI_CONFIG=spot(output=...)``. Building needs Caliper's headers
and library: ``CALIPER_DIR`` (default ``/usr/local``) or ``pkg-config caliper``.

    python -m benchmarks.bench_ensembles caliper --runs 16000   # make the profiles (cached)
    python -m benchmarks.bench_ensembles stats [--jobs N]        # time runs + stats
    python -m benchmarks.bench_ensembles diff                    # two 100-run ensembles
    python -m benchmarks.bench_ensembles v4 --nodes 35000 --ranks 8192

Figures measured on the shared 2-core development machine (other jobs running; load average
at the end of each command in brackets), each command in a fresh process:

- ``cctool stats DIR --group-by variant`` over 16,000 profiles: 114.8 s in-process [1.5],
  105.0 s with ``--jobs 1`` [4.2], 51.5 s with ``--jobs 2`` [4.0] (2.04x); ``cctool runs``
  95.5 s. Reading each ``.cali`` into a GraphFrame costs about 6 ms; the 15 s target needs a
  leaner Caliper path than the reader's full GraphFrame.
- ``cctool diff A B --fail-if 'time (inc) > 5%'`` on two 100-run ensembles: 2.07 s; it
  reports exactly the slowed kernel (Lcals_K03, +50.9 %, p < 1e-4).
- ``cctool stats DB --across ranks`` on 35,000 contexts x 8,192 profiles x 2 metrics
  (profile.db 7.2 GB): 147.7 s, peak RSS 0.81 GB in-process; 163.9 s with ``--jobs 2``
  (client 0.68 GB); NumPy reads the profile.db in 18.2 s (``/usr/bin/time`` on each).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parent / "_data"
PROGRAM = Path(__file__).resolve().parent / "ensemble_program" / "kernels.c"
VARIANTS = ("Base_Seq", "Lambda_Seq", "RAJA_Seq", "Base_OpenMP")


def build_program() -> Path:
    """Compile the Caliper-annotated program once (cached next to the data)."""
    exe = DATA / "bin" / "kernels"
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    root = Path(os.environ.get("CALIPER_DIR", "/usr/local"))
    flags = [f"-I{root / 'include'}", f"-L{root / 'lib'}", f"-Wl,-rpath,{root / 'lib'}"]
    try:
        pc = subprocess.run(["pkg-config", "--cflags", "--libs", "caliper"], check=True,
                            capture_output=True, text=True).stdout.split()
        flags = pc or flags
    except (OSError, subprocess.CalledProcessError):
        pass
    subprocess.run(["cc", "-O1", "-o", str(exe), str(PROGRAM), *flags, "-lcaliper"], check=True)
    return exe


def caliper_runs(runs: int = 16_000, scale: int = 2_000, slow: str = "", tag: str = "") -> Path:
    """``runs`` Caliper spot profiles (``variant`` cycles over four values), made once."""
    folder = DATA / f"caliper-runs{runs}-s{scale}{'-' + slow if slow else ''}{tag}"
    if (folder / ".complete").exists():
        return folder
    exe = build_program()
    folder.mkdir(parents=True, exist_ok=True)

    def one(i: int) -> None:
        out = folder / f"run{i:05d}.cali"
        if not out.exists():
            env = {**os.environ, "CALI_CONFIG": f"spot(output={out})"}
            subprocess.run([str(exe), str(scale), VARIANTS[i % len(VARIANTS)], slow], env=env,
                           check=True, stdout=subprocess.DEVNULL)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, range(runs)))
    (folder / ".complete").write_text(f"{runs}\n")
    return folder


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def cctool(*args: str) -> list[str]:
    return [sys.executable, "-m", "cctool", *args]


def bench_stats(folder: Path, jobs: int | None) -> dict[str, float]:
    """Seconds of ``cctool runs`` and ``cctool stats --group-by variant`` (fresh processes)."""
    extra = ["--jobs", str(jobs)] if jobs else []
    return {
        "runs": _time(cctool("runs", str(folder), "--to", "csv", "-o", os.devnull, *extra)),
        "stats": _time(cctool("stats", str(folder), "--group-by", "variant", "--to", "csv",
                              "-o", os.devnull, *extra)),
    }


def bench_diff(runs: int = 100) -> float:
    """Seconds of ``cctool diff A/ B/ --fail-if`` on two ``runs``-run ensembles, B with one
    kernel 1.5x slower."""
    a = caliper_runs(runs, 20_000, tag="-a")
    b = caliper_runs(runs, 20_000, slow="Lcals_K03")
    cmd = cctool("diff", str(a), str(b), "--fail-if", "time (inc) > 5%", "--to", "json",
                 "-o", os.devnull)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL)  # exit 1: the gate trips, as it should
    return time.perf_counter() - start


def bench_v4(nodes: int, ranks: int, metrics: int, jobs: int | None) -> dict[str, float]:
    """Seconds and peak memory of ``stats --across ranks`` on a generated v4 database, and
    seconds NumPy needs to read its profile.db."""
    import numpy as np

    path = DATA / f"v4-n{nodes}-r{ranks}-m{metrics}"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        shutil.rmtree(path, ignore_errors=True)
        generate(path, nodes=nodes, ranks=ranks, metrics=metrics, seed=1, fmt="v4")
        (path / ".complete").write_text("done\n")
    start = time.perf_counter()
    np.fromfile(path / "profile.db", dtype=np.uint8).sum()
    floor = time.perf_counter() - start
    extra = ["--jobs", str(jobs)] if jobs else []
    cmd = ["/usr/bin/time", "-f", "%M", *cctool("stats", str(path), "--across", "ranks",
                                                 "--to", "csv", "-o", os.devnull, *extra)]
    start = time.perf_counter()
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "peak_rss_mb_main": int(res.stderr.split()[-1]) / 1000,
            "numpy_read_profile_db_s": floor,
            "profile_db_gb": (path / "profile.db").stat().st_size / 1e9}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("caliper", "stats", "diff", "v4"))
    ap.add_argument("--runs", type=int, default=16_000)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--nodes", type=int, default=35_000)
    ap.add_argument("--ranks", type=int, default=8192)
    ap.add_argument("--metrics", type=int, default=2)
    args = ap.parse_args()
    if args.what == "caliper":
        print(caliper_runs(args.runs))
    elif args.what == "stats":
        print(bench_stats(caliper_runs(args.runs), args.jobs))
    elif args.what == "diff":
        print({"diff_s": bench_diff()})
    else:
        print(bench_v4(args.nodes, args.ranks, args.metrics, args.jobs))


if __name__ == "__main__":
    main()
