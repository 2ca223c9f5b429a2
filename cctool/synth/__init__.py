"""Synthetic HPCToolkit XML databases for examples, tests and benchmarks.

``python -m cctool.synth OUT_DIR --nodes N --ranks R --threads T --metrics M --seed S`` writes
``experiment.xml`` and one ``*.metric-db`` per rank and thread in the layout hpcprof-mpi writes.
The output is a pure function of the arguments (same arguments, same bytes).

The program is an MPI solver. ``main`` calls set-up routines and, in a time-step loop, solver
routines whose loops, statements and calls reach down to compute kernels; MPI calls descend
through libmpi internals into the network library. A static program (procedures with bodies,
a call DAG) is built first and its calling context tree unrolled under a node budget, so a
procedure shows the same loops and lines in every context. With T > 1 the worker threads run
OpenMP outlined kernels under ``<thread root>``.

The tree has exactly N procedure frames, loops and statements (the nodes cctool reads), plus
call sites. Values follow hpcrun's sampling: samples land on statements (CPUTIME in usec,
Poisson counts of a 1 ms period); a scope's exclusive value is the sum of the statements it
encloses (through loops, not calls); call sites carry inclusive values only; inclusive values
are subtree sums. Statement weights are log-normal (heavy-tailed); a few hot statements are
imbalanced across ranks and the MPI wait statements absorb the difference.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cctool.synth._program import build_program
from cctool.synth._tree import Layout, Unroller, flatten
from cctool.synth._values import Sampler, columns
from cctool.synth._xml import METRIC_KINDS, write_xml

__all__ = ["METRIC_KINDS", "SynthResult", "generate", "main"]

MAGIC = b"HPCPROF-metricdb__00.10b"
BLOCK = 32  # locations per random stream, fixed so the output does not depend on chunking


@dataclass(frozen=True)
class SynthResult:
    """What :func:`generate` wrote."""

    path: Path
    nodes: int  # procedure frames, loops and statements: the nodes cctool reads
    elements: int  # rows of each metric-db: every XML scope including call sites and the root
    files: int
    max_depth: int


def generate(out_dir: str | Path, nodes: int = 1000, ranks: int = 4, threads: int = 1,
             metrics: int = 1, seed: int = 0, program: str = "flowsim",
             fmt: str = "xml", trace: bool = False, visits: int = 1) -> SynthResult:
    """Write a synthetic HPCToolkit XML database into ``out_dir``.

    Args:
        out_dir: folder to write (created; old ``experiment.xml``/``*.metric-db`` removed).
        nodes: procedure frames, loops and statements in the tree (exact).
        ranks: MPI ranks.
        threads: threads per rank (workers run OpenMP outlined kernels).
        metrics: metric kinds, each an (I)/(E) pair: CPUTIME (usec), PAPI_TOT_CYC, PAPI_TOT_INS.
        seed: random seed; the same arguments give the same bytes.
        program: program name (file names and the header).
        fmt: ``xml`` (experiment.xml + metric-db files) or ``v4`` (meta.db + profile.db,
            the sparse format hpcprof writes since 2022).
        trace: with ``v4``, also a ``trace.db`` whose lines add up to profile.db's CPUTIME
            per location and context exactly (each context runs once, in preorder).
        visits: with ``trace``, each line runs its contexts this many times over (in
            preorder each time, the time split evenly): intervals per location = visits x
            the contexts with exclusive time.

    Returns:
        What was written, with the tree's node count and depth.
    """
    if trace and fmt != "v4":
        raise ValueError("a trace.db is written with the v4 format only")
    if visits < 1:
        raise ValueError("visits must be at least 1")
    if not 1 <= metrics <= len(METRIC_KINDS):
        raise ValueError(f"metrics must be 1 to {len(METRIC_KINDS)}, not {metrics}")
    if ranks < 1 or threads < 1 or seed < 0:
        raise ValueError("ranks and threads must be at least 1, the seed at least 0")
    if not program.replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"program name {program!r} must be letters, digits, '_' and '.'")
    rng = random.Random(seed)
    prog, root, worker = build_program(rng, program, nodes, threads)
    need = root.min + (worker.min if worker else 0)
    if nodes < need:
        raise ValueError(f"nodes must be at least {need}")
    unroll = Unroller(random.Random(rng.random()), prog.module(prog.binary))
    # Worker threads get a fifth of the nodes for their own tree.
    spare = 0 if worker is None else max(worker.min, min(round(0.2 * nodes), nodes - root.min))
    tops, used = [], 0
    for proc, budget, role in ((root, nodes - spare, 0), (worker, spare, 1)):
        if proc is not None:
            top, got = unroll.frame(proc, budget, role)
            tops.append(top)
            used += got
    unroll.fill(nodes - used, prog)
    lay = flatten(tops)

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "v4":
        from cctool.synth._v4 import write_v4

        files = write_v4(folder, prog, lay, Sampler(lay, ranks, threads, seed), metrics,
                         trace, visits)
        return SynthResult(folder, lay.nodes, lay.end.size, files, lay.max_depth)
    for old in [*folder.glob("*.metric-db"), folder / "experiment.xml"]:
        old.unlink(missing_ok=True)
    sums = _write_metric_dbs(folder, lay, Sampler(lay, ranks, threads, seed), program, metrics)
    write_xml(folder / "experiment.xml", prog, lay, sums, metrics)
    return SynthResult(folder, lay.nodes, lay.end.size, ranks * threads, lay.max_depth)


def _write_metric_dbs(folder: Path, lay: Layout, sampler: Sampler, program: str,
                      metrics: int) -> np.ndarray:
    """Write one metric-db per location; return the sums over locations per row and column."""
    nrows, ncols, threads = lay.end.size, 2 * metrics, sampler.threads
    head = MAGIC + nrows.to_bytes(4, "big") + ncols.to_bytes(4, "big")
    sums = np.zeros((nrows, ncols), dtype=np.int64)
    nloc = sampler.ranks * threads
    for block_no, start in enumerate(range(0, nloc, BLOCK)):
        locs = np.arange(start, min(start + BLOCK, nloc))
        out = np.empty((locs.size, nrows, ncols), dtype=">f8")  # the files' layout, big-endian
        for k, vals in enumerate(sampler.block(locs, block_no, metrics)):
            for j, col in enumerate(columns(vals, lay)):
                out[:, :, 2 * k + j] = col
                sums[:, 2 * k + j] += col.sum(axis=0)
        for i, loc in enumerate(locs.tolist()):
            rank, thread = divmod(loc, threads)
            host, pid = 0xA8C00400 + rank // 36, 150_000 + rank  # 36 ranks per host
            name = f"1.{program}-{rank:06d}-{thread:03d}-{host:08x}-{pid}-0.metric-db"
            with open(folder / name, "wb") as fh:
                fh.write(head)
                out[i].tofile(fh)
    return sums


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cctool.synth",
        description="Write a synthetic HPCToolkit XML database (experiment.xml + *.metric-db).")
    parser.add_argument("out_dir", type=Path, help="folder to write")
    parser.add_argument("--nodes", type=int, default=1000, help="tree nodes (default 1000)")
    parser.add_argument("--ranks", type=int, default=4, help="MPI ranks (default 4)")
    parser.add_argument("--threads", type=int, default=1, help="threads per rank (default 1)")
    parser.add_argument("--metrics", type=int, default=1,
                        help="metric kinds: 1 CPUTIME, 2 +PAPI_TOT_CYC, 3 +PAPI_TOT_INS")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--program", default="flowsim", help="program name (default flowsim)")
    parser.add_argument("--format", dest="fmt", choices=("xml", "v4"), default="xml",
                        help="xml: experiment.xml + *.metric-db (default); v4: meta.db + "
                        "profile.db")
    parser.add_argument("--trace", action="store_true",
                        help="with --format v4, also write trace.db (time-centric lines)")
    parser.add_argument("--visits", type=int, default=1,
                        help="with --trace, run each context this many times per line "
                        "(intervals per location = visits x contexts with time; default 1)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        res = generate(args.out_dir, args.nodes, args.ranks, args.threads, args.metrics,
                       args.seed, args.program, args.fmt, args.trace, args.visits)
    except ValueError as exc:
        parser.error(str(exc))
    what = "profiles in profile.db" if args.fmt == "v4" else "metric-db files"
    print(f"wrote {res.path}: {res.nodes} nodes, depth {res.max_depth}, {res.files} {what} "
          f"in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0
