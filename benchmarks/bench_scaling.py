"""Benchmark: ``cctool scaling`` over 100 generated runs saved as ``.cct`` files.

Ten process counts (1, 2, 4, ..., 512) × ten trials, each run a 2,000-node tree with 16
ranks of values (36,000 metric rows per run, 3.2 M in all), so the run exercises reading,
path matching across runs, averaging of trials and the pivot. Prints seconds for the whole
command (a fresh interpreter, as a user runs it) and for the op alone.

    python benchmarks/bench_scaling.py [--runs 100] [--nodes 2000] [--ranks 16]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_run(rng: np.random.Generator, nodes: int, ranks: int, procs: int):
    """A random tree shared by every run (same seed for structure), values that shrink with
    ``procs`` the way a strong-scaling code's would, plus noise."""
    from cctool.graphframe import GraphFrame

    shape = np.random.default_rng(0)
    parent = np.concatenate([[-1], [int(shape.integers(max(0, i - 50), i)) for i in
                                    range(1, nodes)]])
    names = [f"f{int(shape.integers(0, 400))}" for _ in range(nodes)]
    base = shape.pareto(1.5, nodes) + 0.01
    vals = base[None, :] / procs * (1 + 0.1 * rng.standard_normal((ranks, nodes))) + 1e-3
    return GraphFrame.from_arrays(
        parent, {"name": names, "type": ["function"] * nodes},
        {"node": np.tile(np.arange(nodes), ranks), "rank": np.repeat(np.arange(ranks), nodes),
         "time": np.abs(vals).reshape(-1)},
        exclusive=["time"], metadata={"mpi.world.size": procs},
    )


def generate(folder: Path, runs: int, nodes: int, ranks: int) -> None:
    from cctool.saved import save

    rng = np.random.default_rng(1)
    for i in range(runs):
        procs = 2 ** (i % 10)
        save(make_run(rng, nodes, ranks, procs), folder / f"run{i:03d}-p{procs}.cct")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--ranks", type=int, default=16)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder, args.runs, args.nodes, args.ranks)
        cmd = [sys.executable, "-m", "cctool", "scaling", str(folder), "--efficiency",
               "--threshold", "0.001", "--to", "csv", "-o", str(folder / "out.csv")]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        cli_s = time.perf_counter() - t0

        from cctool.cli.scaling import load_runs
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
