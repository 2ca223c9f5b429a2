"""Benchmark: ``cctool scaling`` over 100 generated runs saved as ``.cct`` files.

Ten process counts (1, 2, 4, ..., 512) × ten trials, each run a 2,000-node tree with 16
ranks of values (32,000 metric rows per run, 3.2 M in all), so the run exercises reading,
path matching across runs, averaging of trials and the pivot. Prints seconds for the whole
command (a fresh interpreter, as a user runs it) and for reading and the op alone.

    python benchmarks/bench_scaling.py [--runs 100] [--nodes 2000] [--ranks 16]

:func:`ensemble` caches the runs under ``benchmarks/_data`` for the case registry too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "_data"


def make_run(rng: np.random.Generator, nodes: int, ranks: int, procs: int) -> Any:
    """One run: a random tree shared by all runs (fixed seed), with values that shrink with
    ``procs`` as a strong-scaling code's would, plus noise per rank."""
    from cctool.graphframe import GraphFrame

    shape = np.random.default_rng(0)
    lo = np.maximum(0, np.arange(1, nodes) - 50)
    parent = np.concatenate([[-1], shape.integers(lo, np.arange(1, nodes))])
    names = [f"f{i}" for i in shape.integers(0, 400, nodes)]
    base = shape.pareto(1.5, nodes) + 0.01
    vals = base[None, :] / procs * (1 + 0.1 * rng.standard_normal((ranks, nodes))) + 1e-3
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["function"] * nodes},
        {"node": np.tile(np.arange(nodes), ranks), "rank": np.repeat(np.arange(ranks), nodes),
         "time": np.abs(vals).reshape(-1)},
        exclusive=["time"], metadata={"mpi.world.size": procs},
    )


def ensemble(runs: int = 100, nodes: int = 2000, ranks: int = 16) -> Path:
    """The folder of ``runs`` saved runs, generated once and cached by its parameters."""
    from cctool.render.files import save

    folder = DATA / f"scaling-runs{runs}-n{nodes}-r{ranks}"
    done = folder / ".complete"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(1)
        for i in range(runs):
            procs = 2 ** (i % 10)
            save(make_run(rng, nodes, ranks, procs), folder / f"run{i:03d}-p{procs}.cct")
        done.write_text(f"{runs} {nodes} {ranks}\n")
    return folder


def command(folder: Path, out: Path) -> list[str]:
    """The measured command: strong efficiency of every path, as CSV into ``out``."""
    return [sys.executable, "-m", "cctool", "scaling", str(folder), "--efficiency",
            "--threshold", "0.001", "--to", "csv", "-o", str(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--ranks", type=int, default=16)
    args = ap.parse_args()
    folder = ensemble(args.runs, args.nodes, args.ranks)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run(command(folder, Path(tmp) / "out.csv"), check=True,
                       stderr=subprocess.DEVNULL)
        cli_s = time.perf_counter() - t0

    from cctool.ensemble import load_runs
    from cctool.ops.scaling import ScalingOptions, scaling

    t0 = time.perf_counter()
    loaded = load_runs((str(folder),), None)
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = scaling(loaded, ScalingOptions(view="efficiency"))
    op_s = time.perf_counter() - t0
    print(f"scaling: {args.runs} runs x {args.nodes} nodes x {args.ranks} ranks -> "
          f"{res.table.height} rows x {len(res.run_columns)} keys")
    print(f"  cctool scaling (CLI, fresh process): {cli_s:.2f} s")
    print(f"  read {args.runs} .cct files: {read_s:.2f} s; scaling op: {op_s:.2f} s")


if __name__ == "__main__":
    main()
