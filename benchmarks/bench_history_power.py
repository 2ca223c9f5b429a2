"""What ``history check`` can detect, by simulation: the share of checks that report a new
regression, for a change of a given size under a given noise and history length.

Each simulated check is :func:`cctool.history.check.judge` (the detector the command runs,
with its default options: alpha 0.05 with Holm over every path's three tests, --min-change
1 %, --recent 20) on a matrix of ``--paths`` call paths whose every run is the path's level
times ``1 + noise × ε`` (ε standard normal unless said otherwise), the last column being the
new run. Tables printed (Markdown):

1. one new run slower by ``change`` on one path (the pull request's run), for 10, 20 and 60
   recorded runs: the share of checks naming that path;
2. a step: the last 10 recorded runs and the new run slower (a step at run 50 of 60);
3. no change at all: the share of checks that trip anywhere (the false-alarm rate), with
   normal noise and with heavier-tailed noise (Student t with 3 degrees of freedom, and a
   log-normal right tail), scaled to the same median absolute deviation as 1 % normal
   noise.

Run::

    python -m benchmarks.bench_history_power --seeds 200 --paths 100
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from cctool.history.check import CheckOptions, judge

Noise = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]
MAD_T3 = 0.7649  # median absolute deviation of Student's t with 3 degrees of freedom
MAD_NORMAL = 0.6745


def normal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_normal(shape)


def student3(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_t(3, shape) * MAD_NORMAL / MAD_T3


def lognormal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Right-skewed: a log-normal with σ = 1, centred on its median, scaled to the normal's
    median absolute deviation (found numerically once)."""
    x = rng.lognormal(0.0, 1.0, shape) - 1.0
    return x * MAD_NORMAL / 0.5993


def rate(paths: int, runs: int, noise: float, change: float, last: int, seeds: int,
         draw: Noise = normal) -> float:
    """Share of ``seeds`` checks reporting a new regression: on path 0 when ``change``, on
    any path otherwise. ``last``: the runs at the end (the new one included) that are
    changed."""
    opts = CheckOptions()
    hits = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        level = 100.0 * (1 + rng.random((paths, 1)))
        x = level * (1 + noise * draw(rng, (paths, runs + 1)))
        if change:
            x[0, -last:] *= 1 + change
        v = judge(x, opts)
        hits += bool(v.new[0]) if change else bool(v.new.any())
    return hits / seeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--paths", type=int, default=100)
    a = ap.parse_args()
    t0 = time.perf_counter()
    changes = (0.02, 0.05, 0.10, 0.15, 0.20, 0.30)
    print(f"One new run slower on one of {a.paths} call paths: share of {a.seeds} checks "
          "that name it\n")
    print("| noise | recorded runs | " + " | ".join(f"+{c:.0%}" for c in changes) + " |")
    print("| ---: | ---: | " + " | ".join("---:" for _ in changes) + " |")
    for noise in (0.01, 0.02, 0.05):
        for runs in (10, 20, 60):
            cells = [f"{rate(a.paths, runs, noise, c, 1, a.seeds):.0%}" for c in changes]
            print(f"| {noise:.0%} | {runs} | " + " | ".join(cells) + " |")
    print(f"\nA step at run 50 of 60 (the last 10 recorded runs and the new one slower), "
          f"{a.paths} paths\n")
    print("| noise | " + " | ".join(f"+{c:.0%}" for c in changes) + " |")
    print("| ---: | " + " | ".join("---:" for _ in changes) + " |")
    for noise in (0.01, 0.02, 0.05):
        cells = [f"{rate(a.paths, 60, noise, c, 11, a.seeds):.0%}" for c in changes]
        print(f"| {noise:.0%} | " + " | ".join(cells) + " |")
    print(f"\nNo change: share of {a.seeds} checks of {a.paths} paths that trip "
          "(1 % noise)\n")
    print("| noise | 10 runs | 20 runs | 60 runs | 255 runs |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, draw in (("normal", normal), ("Student t, 3 d.f.", student3),
                       ("log-normal (right tail)", lognormal)):
        cells = [f"{rate(a.paths, runs, 0.01, 0.0, 1, a.seeds, draw):.1%}"
                 for runs in (10, 20, 60, 255)]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
