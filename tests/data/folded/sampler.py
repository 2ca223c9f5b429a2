"""Sample this process's main thread every millisecond of CPU time (SIGPROF) while a small
workload runs, and print the samples as folded stacks in py-spy's frame style."""

import collections
import signal
import sys
from pathlib import Path

counts: collections.Counter[str] = collections.Counter()


def on_sample(signum, frame):
    stack = []
    while frame is not None:
        code = frame.f_code
        stack.append(f"{code.co_name} ({Path(code.co_filename).name}:{code.co_firstlineno})")
        frame = frame.f_back
    counts[";".join(reversed(stack))] += 1


def work(n):
    return sum(i * 0.5 for i in range(n))


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def solve():
    return work(1_000_000) + fib(24)


def io():
    return work(2_000_000)


def main():
    for _ in range(3):
        solve()
    io()


signal.signal(signal.SIGPROF, on_sample)
signal.setitimer(signal.ITIMER_PROF, 0.0005, 0.0005)
main()
signal.setitimer(signal.ITIMER_PROF, 0, 0)
for stack, n in sorted(counts.items()):
    sys.stdout.write(f"{stack} {n}\n")
