"""Benchmark cases of ensembles (see :mod:`benchmarks.bench_ensembles` for the inputs):
16,000 Caliper profiles in-process and on 1 or 2 local Dask workers, a diff of two 100-run
ensembles, and a v4 and an XML database aggregated over their ranks."""

from __future__ import annotations

import os
import subprocess
import time

from benchmarks._harness import Measurement, case, children_peak_rss_mb
from benchmarks.bench_ensembles import bench_v4, bench_xml, caliper_runs, cctool

RUNS = 16_000


def _cli(args: list[str], ok: tuple[int, ...] = (0,)) -> Measurement:
    start = time.perf_counter()
    res = subprocess.run(cctool(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if res.returncode not in ok:
        raise RuntimeError(res.stderr.decode(errors="replace")[-500:])
    return Measurement(wall_s=wall, peak_rss_mb=children_peak_rss_mb(),
                       notes={"command": "cctool " + " ".join(args)})


def _runs16k() -> object:
    return caliper_runs(RUNS)


@case("ensemble-runs-16000", prepare=_runs16k, targets={"wall_s": 15.0})
def runs_16000() -> Measurement:
    """cctool runs over 16,000 Caliper profiles, in-process"""
    return _cli(["runs", str(caliper_runs(RUNS)), "--to", "csv", "-o", os.devnull])


def _stats(jobs: int | None) -> Measurement:
    extra = ["--jobs", str(jobs)] if jobs else []
    return _cli(["stats", str(caliper_runs(RUNS)), "--group-by", "variant", "--to", "csv", "-o",
                 os.devnull, *extra])


@case("ensemble-stats-16000", prepare=_runs16k, targets={"wall_s": 15.0})
def stats_16000() -> Measurement:
    """cctool stats --group-by variant over 16,000 Caliper profiles, in-process"""
    return _stats(None)


@case("ensemble-stats-16000-jobs1", prepare=_runs16k)
def stats_16000_jobs1() -> Measurement:
    """cctool stats over 16,000 Caliper profiles on 1 local Dask worker process"""
    return _stats(1)


@case("ensemble-stats-16000-jobs2", prepare=_runs16k)
def stats_16000_jobs2() -> Measurement:
    """cctool stats over 16,000 Caliper profiles on 2 local Dask worker processes"""
    return _stats(2)


def _diff_inputs() -> object:
    return (caliper_runs(100, 20_000, tag="-a"), caliper_runs(100, 20_000, slow="Lcals_K03"))


@case("ensemble-diff-100-100", prepare=_diff_inputs, targets={"wall_s": 10.0})
def diff_100() -> Measurement:
    """cctool diff of two 100-run Caliper ensembles with a --fail-if gate"""
    a, b = _diff_inputs()  # type: ignore[misc]
    return _cli(["diff", str(a), str(b), "--fail-if", "time (inc) > 5%", "--to", "json", "-o",
                 os.devnull], ok=(0, 1))


@case("v4-in-parts-35k-512")
def v4_35k_512() -> Measurement:
    """cctool tree --agg mean, imbalance and stats --across ranks on a v4 database read in
    parts, 35,000 contexts x 512 ranks x 2 metrics (wall: the three together)"""
    got = bench_v4(35_000, 512, 2, None)
    wall = got["tree_mean_s"] + got["imbalance_s"] + got["stats_across_ranks_s"]
    peak = max(got[k] for k in got if k.endswith("_peak_rss_mb"))
    return Measurement(wall_s=wall, peak_rss_mb=peak, notes=got)


@case("xml-in-parts-35k-512")
def xml_35k_512() -> Measurement:
    """cctool tree --agg mean, imbalance and stats --across ranks on an XML database (one
    metric-db per rank) read in parts, 35,000 nodes x 512 ranks x 2 metrics (wall: the three
    together; notes: the whole read and NumPy's read of the files too)"""
    got = bench_xml(35_000, 512, 2, None)
    wall = got["tree_mean_s"] + got["imbalance_s"] + got["stats_across_ranks_s"]
    peak = max(got[k] for k in got if k.endswith("_peak_rss_mb") and not k.startswith("whole"))
    return Measurement(wall_s=wall, peak_rss_mb=peak, notes=got)
