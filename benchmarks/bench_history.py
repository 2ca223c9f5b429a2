"""Performance history at scale: ``history show --path`` and ``history check`` on a store of
many runs of a large tree.

A synthetic tree of ``--nodes`` call paths (each node's parent drawn among the earlier ones,
names ``f<i>``) gets ``--runs`` runs, each written through the store's own writer
(:func:`cctool.history.store.append`, compaction included), with 1 % noise per path. Then, in
fresh processes, ``cctool history show STORE --path REGEX`` (a few paths over every run) and
the check of a new run against the last 256 runs of every path (:func:`cctool.history.check`),
best of three. Targets: show ≤ 1 s, check ≤ 5 s. The store is deleted afterwards::

    python -m benchmarks.bench_history --runs 10000 --nodes 35000 --dir /tmp
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

CHECK = """
import sys, time, numpy as np, polars as pl
from cctool.history.check import CheckOptions, check
from cctool.history.store import RunRecord
store = sys.argv[1]
paths = pl.read_parquet(sys.argv[2]); x = np.load(sys.argv[3])
vals = pl.DataFrame({"metric": "time", "key": paths["key"], "units": np.ones(len(x), np.int32),
                     "sum": x, "sumsq": x * x, "min": x, "max": x})
t = time.perf_counter()
r = check(store, RunRecord(vals, paths, {"commit": "new"}, {"time": "s"}), CheckOptions())
print(time.perf_counter() - t, r.tested, r.runs)
"""


def make(store: Path, runs: int, nodes: int) -> tuple[pl.DataFrame, np.ndarray]:
    from cctool.history.store import RunRecord, append
    from cctool.model.paths import path_keys

    rng = np.random.default_rng(0)
    parent = np.concatenate([[-1], (rng.random(nodes - 1) * np.arange(1, nodes)).astype(np.int64)])
    depth = np.zeros(nodes, dtype=np.int64)
    for i in range(1, nodes):  # parents come first
        depth[i] = depth[parent[i]] + 1
    names = pl.Series([f"f{i}" for i in range(nodes)])
    keys = path_keys(pl.DataFrame({"name": names, "depth": depth}), parent)
    paths = pl.DataFrame({"key": keys, "parent": np.where(parent >= 0, keys[parent], 0)
                          .astype(np.uint64), "name": names})
    base = rng.lognormal(0.0, 2.0, nodes)
    t = time.perf_counter()
    for r in range(runs):
        x = base * (1 + 0.01 * rng.standard_normal(nodes))
        vals = pl.DataFrame({"metric": "time", "key": keys, "units": np.ones(nodes, np.int32),
                             "sum": x, "sumsq": x * x, "min": x, "max": x})
        date = f"2026-01-01T00:00:{r % 60:02d}Z"
        append(store, RunRecord(vals, paths, {"commit": f"c{r:05d}", "date": date},
                                {"time": "s"}))
        if r % 500 == 499:
            print(f"  {r + 1} runs written, {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return paths, base * (1 + 0.01 * rng.standard_normal(nodes))


def best(cmd: list[str], times: int = 3) -> float:
    out = []
    for _ in range(times):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--nodes", type=int, default=35_000)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-history-", dir=a.dir))
    store = work / "store"
    try:
        t = time.perf_counter()
        paths, new = make(store, a.runs, a.nodes)
        written = time.perf_counter() - t
        size = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
        paths.write_parquet(work / "paths.parquet")
        np.save(work / "new.npy", new)
        show = best(["cctool", "history", "show", str(store), "--path", "/f1234$",
                     "--width", "120"])
        env_cmd = [sys.executable, "-c", CHECK, str(store), str(work / "paths.parquet"),
                   str(work / "new.npy")]
        checks = []
        for _ in range(3):
            t = time.perf_counter()
            out = subprocess.run(env_cmd, check=True, capture_output=True, text=True).stdout
            checks.append((time.perf_counter() - t, out.split()))
        wall, (inner, tested, runs) = min(checks, key=lambda c: c[0])
        load = os.getloadavg()[0]
        print("| case | runs | call paths | store | seconds | target |")
        print("| --- | --- | --- | --- | --- | --- |")
        print(f"| write (store.append, {a.runs} runs) | {a.runs} | {a.nodes} | "
              f"{size / 1e9:.2f} GB | {written:.0f} | |")
        print(f"| `cctool history show STORE --path '/f1234$'` (process) | {a.runs} | "
              f"{a.nodes} | | {show:.2f} | ≤ 1 |")
        print(f"| history check (process; in-process {float(inner):.2f} s; {tested} paths "
              f"tested over {runs} runs) | {a.runs} | {a.nodes} | | {wall:.2f} | ≤ 5 |")
        print(f"\n1-minute load average: {load:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
