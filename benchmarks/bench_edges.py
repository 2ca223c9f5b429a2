"""Whole-process figures of the edges: a v4 read against the XML read of the same cells,
query, tree to a file, runs against stats, a 100,000-frame stack and trace, a tiny profile.

``python -m benchmarks.bench_edges [--runs FOLDER]`` generates what it needs under
``benchmarks/_data`` (the two 35,000 x 512 databases, about 1.2 GB, the deep stack and trace) and
prints one line per command: the best wall time of three runs, its peak RSS and the 1-minute
load average. ``--runs`` names a folder of many Caliper profiles for ``runs``/``stats``.
``tree --agg mean`` of 35,000 contexts x 8,192 ranks (a 7 GB database, about 5 minutes to
generate; run once) is measured too unless ``--no-big``.

``python -m benchmarks.bench_edges --ulimit-sweep [LO:HI:STEP]`` measures nothing: it runs
``tree --stream``, ``tree --agg mean`` and ``read`` of a 20,000-node x 256-rank x 2-thread v4
database under ``ulimit -v`` from LO to HI MB (default 400:1000:25), prints each exit code
and error line, and exits 1 if any run ended otherwise than with 0 or 2 and one error line
(an abort is 134, a Python traceback is a defect too).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "_data"
QUERY = '[{"name": "main"}, "*", {"name": "MPI_.*"}, "*"]'
TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "folded" / "python.folded"


def _db(fmt: str, ranks: int = 512) -> Path:
    path = DATA / f"edges-{fmt}-n35000-r{ranks}-m2"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        shutil.rmtree(path, ignore_errors=True)
        generate(path, nodes=35_000, ranks=ranks, metrics=2, seed=1, fmt=fmt)
        (path / ".complete").write_text("done\n")
    return path


def _deep() -> Path:
    path = DATA / "deep-100k.folded"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        frames = ";".join(f"f{i}" for i in range(100_000))
        path.write_text(f"main;{frames} 5\nmain;g 3\n")
    return path


def _deep_trace() -> Path:
    """A Chrome trace of one chain of 100,000 nested frames (B at ts=i, E at ts=200000-i)."""
    path = DATA / "deep-100k.trace.json"
    if not path.exists():
        import orjson

        DATA.mkdir(parents=True, exist_ok=True)
        n = 100_000
        events = [{"name": f"f{i}", "ph": "B", "ts": i, "pid": 1, "tid": 1} for i in range(n)]
        events += [{"name": f"f{i}", "ph": "E", "ts": 2 * n - i, "pid": 1, "tid": 1}
                   for i in reversed(range(n))]
        path.write_bytes(orjson.dumps({"traceEvents": events}))
    return path


def _sweep_db() -> Path:
    path = DATA / "ulimit-v4-n20000-r256-t2"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        shutil.rmtree(path, ignore_errors=True)
        generate(path, nodes=20_000, ranks=256, threads=2, seed=0, fmt="v4")
        (path / ".complete").write_text("done\n")
    return path


def ulimit_sweep(spec: str) -> int:
    """Run the sweep ``--ulimit-sweep`` names; 1 if a run aborted or printed a traceback."""
    import resource

    lo, hi, step = (int(x) for x in spec.split(":"))
    db = str(_sweep_db())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bad = 0
    for name, args in (("tree --stream", ["tree", db, "--stream"]),
                       ("tree --agg mean", ["tree", db, "--agg", "mean"]), ("read", ["read", db])):
        for mb in range(lo, hi + 1, step):
            def limit(mb: int = mb) -> None:
                resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))

            res = subprocess.run([sys.executable, "-m", "cctool", *args, "-o", os.devnull],
                                 env=env, preexec_fn=limit, capture_output=True, text=True,
                                 check=False)
            said = [line for line in res.stderr.splitlines() if not line.startswith("note: ")]
            ok = res.returncode == 0 or (res.returncode == 2 and len(said) == 1)
            bad += not ok
            print(f"{name:16s} {mb:5d} MB  exit {res.returncode:4d}  {'' if ok else 'DEFECT '}"
                  f"{said[-1][:90] if said else ''}", flush=True)
    return 1 if bad else 0


def measure(args: list[str], repeat: int = 3) -> tuple[float, float]:
    """(best wall seconds, its peak RSS in MB) of ``args`` as a new process."""
    best = (float("inf"), 0.0)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for _ in range(repeat):
        res = subprocess.run(["/usr/bin/time", "-f", "%e %M", *args], env=env, check=False,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall, rss = res.stderr.strip().splitlines()[-1].split()
        if float(wall) < best[0]:
            best = (float(wall), int(rss) / 1000)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, help="a folder of many Caliper profiles")
    ap.add_argument("--no-big", action="store_true",
                    help="skip the 35,000 x 8,192 database (7 GB on disk)")
    ap.add_argument("--ulimit-sweep", nargs="?", const="400:1000:25", metavar="LO:HI:STEP",
                    help="only check the runs under ulimit -v from LO to HI MB (no timings)")
    opts = ap.parse_args()
    if opts.ulimit_sweep:
        sys.exit(ulimit_sweep(opts.ulimit_sweep))
    cct = [sys.executable, "-m", "cctool"]
    v4, xml, deep = _db("v4"), _db("xml"), _deep()
    cases = [
        ("read v4", [*cct, "read", str(v4)]), ("read xml", [*cct, "read", str(xml)]),
        ("tree --agg mean v4", [*cct, "tree", str(v4), "--agg", "mean"]),
        ("tree --agg mean xml", [*cct, "tree", str(xml), "--agg", "mean"]),
        ("imbalance v4", [*cct, "imbalance", str(v4)]),
        ("imbalance xml", [*cct, "imbalance", str(xml)]),
        ("query xml", [*cct, "query", str(xml), QUERY, "--to", "csv", "-o", os.devnull]),
        ("tree xml to a file", [*cct, "tree", str(xml)]),
        ("tree deep", [*cct, "tree", str(deep), "--from", "folded"]),
        ("hot-path deep", [*cct, "hot-path", str(deep), "--from", "folded"]),
        ("diff deep", [*cct, "diff", str(deep), str(deep), "--from", "folded"]),
        ("groupby deep", [*cct, "groupby", str(deep), "--from", "folded", "--by", "name"]),
        ("tree deep trace", [*cct, "tree", str(_deep_trace())]),
        ("timeline deep trace", [*cct, "timeline", str(_deep_trace()), "--to", "json"]),
        ("import polars, numpy", [sys.executable, "-c", "import polars, numpy"]),
        ("tree tiny", [*cct, "tree", str(TINY)]),
    ]
    if opts.runs:
        cases += [("runs", [*cct, "runs", str(opts.runs)]),
                  ("stats", [*cct, "stats", str(opts.runs)])]
    if not opts.no_big:
        cases.append(("tree --agg mean v4 x8192",
                      [*cct, "tree", str(_db("v4", 8192)), "--agg", "mean"]))
    for name, args in cases:
        wall, rss = measure(args, 1 if name.endswith("x8192") else 3)
        load = os.getloadavg()[0]
        print(f"{name:24s} {wall:7.2f} s {rss:8.0f} MB   load {load:.1f}", flush=True)


if __name__ == "__main__":
    main()
