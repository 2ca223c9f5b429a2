"""Memory and time of reading large and compressed inputs.

``python -m benchmarks.bench_inputs [--mb 74]`` writes a viztracer-like Chrome trace of about
``--mb`` MB (nested complete events on 4 processes x 2 threads, 400 functions each calling from a
fixed set of 3, an ``args`` object on every 10th event) into ``benchmarks/_data``, then times
``cctool read`` on it (plain and gzipped) and on decompression bombs in fresh processes and
prints a table: seconds, peak RSS, and the peak RSS over the file size. The target (issue
33): a 74 MB Chrome trace reads in at most 3x its file size of memory.

A floor row gives a fresh process that imports what ``cctool read`` imports and reads
nothing: the part of every peak that does not depend on the input.
"""

from __future__ import annotations

import argparse
import gzip
import lzma
import os
import random
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).parent / "_data"


def write_trace(path: Path, megabytes: float, seed: int = 7) -> int:
    """A trace of about ``megabytes`` MB; returns its number of events."""
    rng = random.Random(seed)
    names = [f"pkg.module_{i % 37}.function_{i}" for i in range(400)]
    target = int(megabytes * 1e6)
    written, count = 0, 0
    with open(path, "w") as fh:
        fh.write('{"traceEvents":[\n')
        clock = {(p, t): 0.0 for p in range(4) for t in range(2)}
        while written < target:
            pid, tid = rng.randrange(4), rng.randrange(2)
            start = clock[(pid, tid)]
            lines, end = _call(rng, names, rng.randrange(20), pid, tid, start, depth=0)
            clock[(pid, tid)] = end + 1.0
            for line in lines:
                sep = ",\n" if count else ""
                fh.write(sep + line)
                written += len(line) + 2
                count += 1
        fh.write('\n],"displayTimeUnit":"ns"}\n')
    return count


def _call(rng: random.Random, names: list[str], fn: int, pid: int, tid: int, start: float,
          depth: int) -> tuple[list[str], float]:
    """One call of function ``fn`` and its callees, as viztracer writes them: children
    before parents. Each function calls from a fixed set of 3 (a program's call graph), so
    about 15,000 call paths repeat over the events."""
    lines: list[str] = []
    t = start + rng.random()
    for _ in range(rng.randrange(4) if depth < 6 else 0):
        callee = (fn * 13 + 7 * rng.randrange(3) + 1) % len(names)
        sub, t = _call(rng, names, callee, pid, tid, t, depth + 1)
        lines += sub
        t += rng.random()
    end = t + rng.random() * 10
    args = (f', "args": {{"n": {depth}, "note": "a {{brace}} and \\"quote\\""}}'
            if rng.randrange(10) == 0 else "")
    lines.append(f'{{"pid": {1000 + pid}, "tid": {2000 + tid}, "ts": {start:.3f}, '
                 f'"dur": {end - start:.3f}, "name": "{names[fn]}", "ph": "X", "cat": "FEE"'
                 f'{args}}}')
    return lines, end


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of a fresh process running ``argv``."""
    start = time.perf_counter()
    code = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         check=True).stdout.split()
    return time.perf_counter() - start, int(out[0]) / 1024, int(out[1])


HEADS = {
    "chrome": b'{"traceEvents":[{"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1}',
    "dhat": b'{"dhatFileVersion":2,"mode":"heap","verb":"Allocated","bklt":true,"bkacc":true,',
}


def bomb(path: Path, kind: str, megabytes: int, fmt: str = "chrome") -> None:
    """A profile's head followed by ``megabytes`` MB of blanks, compressed as a stream."""
    head = HEADS[fmt]
    chunk = b" " * (1 << 20)
    comp = (lzma.LZMACompressor() if kind == "xz"
            else __import__("zlib").compressobj(9, 8, 31))
    with open(path, "wb") as fh:
        fh.write(comp.compress(head))
        for _ in range(megabytes):
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=74.0, help="size of the trace (MB)")
    args = parser.parse_args()
    DATA.mkdir(exist_ok=True)
    trace = DATA / f"chrome-trace-{args.mb:g}mb.json"
    if not trace.exists():
        print(f"writing {trace} ...", file=sys.stderr)
        write_trace(trace, args.mb)
    packed = trace.with_suffix(".json.gz")
    if not packed.exists():
        with open(trace, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            while chunk := src.read(1 << 24):
                dst.write(chunk)
    bombs = []
    for fmt, kind, mb in (("chrome", "gzip", 1000), ("chrome", "xz", 10000),
                          ("dhat", "gzip", 1000)):
        path = DATA / f"bomb-{fmt}-{mb}mb.{kind}"
        if not path.exists():
            bomb(path, kind, mb, fmt)
        bombs.append(path)
    cctool = [sys.executable, "-m", "cctool"]
    small = Path(__file__).parent.parent / "tests" / "data" / "chrome-trace" / "viztracer.json"
    rows = [("floor: python -c 'import cctool.readers.traces.chrome'", 0,
             measure([sys.executable, "-c", "import cctool.readers.traces.chrome"])),
            ("floor: cctool read viztracer.json (141 events)", 0,
             measure([*cctool, "read", str(small)]))]
    for path in (trace, packed, *bombs):
        rows.append((f"cctool read {path.name}", path.stat().st_size,
                     measure([*cctool, "read", str(path)])))
    print(f"load {os.getloadavg()[0]:.1f}\n")
    print("| case | file | seconds | peak RSS | peak / file | exit |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, size, (secs, rss, rc) in rows:
        ratio = f"{rss * 2**20 / size:.2f}x" if size else ""
        print(f"| {name} | {size / 1e6:.1f} MB | {secs:.2f} s | {rss:.0f} MB | {ratio} | {rc} |")


if __name__ == "__main__":
    main()
