"""What a Dask cluster can give ``stats --across ranks``: per-task overhead on many
single-thread workers, the client's serial share, and the speedup Amdahl's law then
expects on 64 and 1,000 workers.

A ``dask scheduler`` and ``--workers`` single-thread ``dask worker`` processes are started as
separate commands (as ``srun dask worker`` starts them) on loopback ports, in a scratch
directory; a v4 database of ``--ranks`` ranks is generated (``cctool.synth``, cached).

    python -m benchmarks.bench_dask --workers 16 --ranks 1024 --nodes 20000

Measured, in this order:

1. Per-task overhead: ``--noop`` empty tasks through cctool's own submission path
   (:meth:`Executor.map_reduce`, results merged as they arrive): wall time per task. The
   scheduler handles tasks one at a time, so this time is serial whatever the cluster size.
2. ``stats --across ranks`` of the database on the cluster, in one process as the command
   runs it, timed stage by stage on the client (open the database and cut ranges; the
   reduction; the merges of partials, done on the client as results arrive; the statistics
   and the table). The scheduler's task stream gives each task's time on its worker, and
   how busy each worker was between the first task's start and the last one's end.
3. The serial part ``S`` (client stages outside the reduction + merges + tasks x per-task
   overhead) and the parallel part ``P`` (the tasks' total time on the workers), from which
   Amdahl's expected time ``S + P / N`` and speedup ``(S + P) / (S + P / N)`` for N = 64 and
   1,000 workers. The ranges a database is cut into are set by its size
   (:func:`cctool.readers.hpctoolkit.in_parts.task_count`); the table says how many N can use.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("CCTOOL_BENCH_CACHE", Path(tempfile.gettempdir()) / "cctool-bench"))


def _start(home: Path, workers: int) -> tuple[list[subprocess.Popen[bytes]], str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    common: dict[str, Any] = {"cwd": home, "env": env, "start_new_session": True,
                              "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    file = home / "scheduler.json"
    file.unlink(missing_ok=True)
    procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host",
                               "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", file.name], **common)]
    while not file.exists():
        time.sleep(0.05)
    procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file",
                                   file.name, "--nthreads", "1", "--nworkers", str(workers),
                                   "--no-dashboard", "--memory-limit", "0"], **common))
    return procs, str(file)


def _noop(x: int) -> int:
    return x


def _add(a: int, b: int) -> int:
    return a + b


def overhead(scheduler: str, tasks: int, workers: int) -> float:
    """Seconds per task of empty tasks sent and merged as cctool sends and merges them
    (``tasks`` leaves and ``tasks - 1`` merge tasks)."""
    from cctool.distributed import Executor

    ex = Executor(scheduler=scheduler, min_workers=workers, timeout=120)
    with ex.started(("benchmarks.bench_dask",)) as running:
        running.map_reduce(_noop, list(range(workers * 2)), _add)  # warm the workers
        start = time.perf_counter()
        total = running.map_reduce(_noop, list(range(tasks)), _add)
        wall = time.perf_counter() - start
    assert total == tasks * (tasks - 1) // 2
    return wall / (2 * tasks - 1)


def across_ranks(scheduler: str, db: Path, workers: int) -> dict[str, Any]:
    """``stats --across ranks`` of ``db`` on the cluster, stage by stage."""
    from dask.distributed import Client

    from cctool.distributed import Executor
    from cctool.ops.stats import StatsOptions, rank_stats
    from cctool.readers.hpctoolkit import in_parts

    ex = Executor(scheduler=scheduler, min_workers=workers, timeout=120)
    with ex.started(("cctool.readers.hpctoolkit.in_parts",)) as running, \
            Client(json.loads(Path(scheduler).read_text())["address"]) as watcher:
        in_parts.aggregate_v4(db, "mean", running, sketch=True)  # warm: workers read the files
        stages: dict[str, float] = {}
        t0 = time.perf_counter()
        opened = in_parts.open_db(db)
        tasks = in_parts.task_count(opened)
        stages["open, cut ranges"] = time.perf_counter() - t0
        watcher.get_task_stream(start=time.time())  # start recording
        start_wall = time.time()
        t1 = time.perf_counter()
        agg = in_parts.aggregate_v4(db, "mean", running, sketch=True)
        reduce_and_finish = time.perf_counter() - t1
        stream = watcher.get_task_stream(start=start_wall)
        t2 = time.perf_counter()
        rank_stats(agg.frame, agg.partials, agg.ranks, StatsOptions())
        stages["statistics table"] = time.perf_counter() - t2
    # The tasks' work on one core with nothing else running: each range scanned in turn here.
    column = in_parts.column_of(opened, None)
    task = in_parts._Task(opened.scan, None, column)
    t3 = time.perf_counter()
    for span in in_parts.ranges(opened.scan, tasks):
        task(span)
    one_core = time.perf_counter() - t3
    parts = [task(span) for span in in_parts.ranges(opened.scan, 2)]
    t4 = time.perf_counter()
    parts[0].merge(parts[1])
    one_merge = time.perf_counter() - t4
    runs = [(s["worker"], s["startstops"]) for s in stream if "_call" in str(s["key"])]
    busy: dict[str, float] = {}
    first, last = float("inf"), 0.0
    task_time = 0.0
    for worker, startstops in runs:
        for ss in startstops:
            if ss["action"] != "compute":
                continue
            busy[worker] = busy.get(worker, 0.0) + ss["stop"] - ss["start"]
            task_time += ss["stop"] - ss["start"]
            first, last = min(first, ss["start"]), max(last, ss["stop"])
    span = max(last - first, 1e-9)
    return {"ranks": agg.ranks, "tasks": tasks, "reduce+finish": reduce_and_finish,
            "one_core": one_core, "one_merge": one_merge, "cells": opened.scan.profiles.size
            * opened.scan.parent.size,
            "stages": stages, "task_time": task_time,
            "workers_used": len(busy), "busy": sorted(b / span for b in busy.values()),
            "span": span}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--noop", type=int, default=2000)
    args = ap.parse_args(argv)
    from cctool.synth import generate

    db = CACHE / f"v4-{args.nodes}x{args.ranks}"
    if not (db / "profile.db").exists():
        generate(db, nodes=args.nodes, ranks=args.ranks, threads=1, metrics=2, seed=3, fmt="v4")
    home = Path(tempfile.mkdtemp(prefix="cctool-dask-"))
    from cctool.readers.hpctoolkit import in_parts

    procs, scheduler = _start(home, args.workers)
    try:
        per_task = overhead(scheduler, args.noop, args.workers)
        got = across_ranks(scheduler, db, args.workers)
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
    stages = sum(got["stages"].values())
    tasks, merge = got["tasks"], got["one_merge"]

    def expected(n: int, t: int, work: float) -> tuple[float, float]:
        """(serial, parallel) seconds of ``t`` tasks doing ``work`` on ``n`` workers."""
        serial = stages + (2 * t - 1) * per_task + math.ceil(math.log2(max(t, 2))) * merge
        return serial, (work + (t - 1) * merge) / min(n, t)

    serial, parallel = expected(1, tasks, got["one_core"])
    print(f"workers: {args.workers} single-thread, database: {args.nodes} nodes x "
          f"{got['ranks']} ranks, {tasks} tasks; load {os.getloadavg()[0]:.1f}")
    print(f"per-task overhead (scheduler + client, {args.noop} empty tasks and their "
          f"{args.noop - 1} merges): {per_task * 1e3:.2f} ms")
    print(f"stats --across ranks on the cluster: reduction + finish {got['reduce+finish']:.2f} "
          "s, " + ", ".join(f"{k} {v:.3f} s" for k, v in got["stages"].items()))
    print(f"the tasks' work on one core: {got['one_core']:.2f} s; one merge of two partials "
          f"{merge * 1e3:.1f} ms")
    print(f"tasks on the workers: {got['task_time']:.2f} s in all over {got['span']:.2f} s "
          f"(workers share {os.cpu_count()} cores); {got['workers_used']} of {args.workers} "
          f"workers ran tasks; busy fraction per worker min {got['busy'][0]:.2f} median "
          f"{got['busy'][len(got['busy']) // 2]:.2f} max {got['busy'][-1]:.2f}")
    print(f"serial part S = {serial:.3f} s (client stages {stages:.3f} s, {2 * tasks - 1} "
          f"tasks x overhead, the merge tree's depth x one merge), parallel part P = "
          f"{parallel:.2f} s: serial fraction {serial / (serial + parallel):.2%}")
    print("| workers | database | tasks | S | P / N | expected time | speedup over 1 worker |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    per_cell = got["one_core"] / got["cells"]
    for n in (args.workers, 64, 1000):
        rows = [("this one", tasks, got["one_core"])]
        if n * 2 > tasks:  # a database sized to the cluster: 2 ranges per worker
            cells = n * 2 * in_parts.CELLS_PER_TASK
            rows.append((f"{cells / 1e9:.2g}G cells", n * 2, per_cell * cells))
        for name, t, work in rows:
            s_n, p_n = expected(n, t, work)
            s_1, p_1 = expected(1, t, work)
            print(f"| {n} | {name} | {t} | {s_n:.3f} s | {p_n:.3f} s | {s_n + p_n:.3f} s | "
                  f"{(s_1 + p_1) / (s_n + p_n):.1f}x |")


if __name__ == "__main__":
    main()
