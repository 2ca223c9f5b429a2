"""Time call path queries on a 35,000-node, 512-rank profile.

``python -m benchmarks.bench_query [PROFILE]`` prints the figures; without PROFILE it uses the
generated database the benchmark cases cache (``benchmarks/_data``), making it if needed.
:func:`time_query` splits the time into match, squash and no-squash; the ``query-*`` cases in
``benchmarks/cases.py`` time match and squash together.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cctool.graphframe import GraphFrame

SIZE = (35_000, 512)
# Wildcards on both sides: every path from main through anything to an MPI entry point and
# everything below it (about a third of the synthetic tree).
WILDCARDS = '[{"name": "main"}, "*", {"name": "MPI_.*"}, "*"]'
# The same shape with a metric condition, which aggregates 17.9M rows over the ranks first.
WITH_METRIC = ('MATCH (".", m)->("*")->(p)->("*") WHERE m."name" = "main" '
               'AND p."name" =~ "MPI_.*" AND p."time (inc)" > 1e6')


def _best(repeat: int, fn: Any) -> tuple[float, float, Any]:
    """(first call's seconds, best of ``repeat`` more, first result)."""
    start = time.perf_counter()
    result = fn()
    first = time.perf_counter() - start
    best = first
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return first, best, result


def time_query(gf: GraphFrame, text: str = WILDCARDS, repeat: int = 3) -> dict[str, Any]:
    """Seconds to match ``text`` on ``gf`` (first call and best warm call), to squash the
    result, and to drop the unmatched metrics instead, plus the node counts."""
    from cctool.ops.query import filter_graph, match_nodes

    m_first, m_best, ids = _best(repeat, lambda: match_nodes(gf, text))
    s_first, s_best, out = _best(max(repeat - 2, 0), lambda: filter_graph(gf, ids))
    _, n_best, _ = _best(max(repeat - 2, 0), lambda: filter_graph(gf, ids, squash=False))
    return {"match_first_s": m_first, "match_s": m_best, "squash_first_s": s_first,
            "squash_s": s_best, "no_squash_s": n_best, "matched": int(ids.size),
            "squashed_nodes": out.num_nodes, "nodes": gf.num_nodes, "rows": gf.metrics.height}


def load_profile(path: str | None = None) -> GraphFrame:
    """The profile at ``path``, or the cached generated 35,000 × 512 database."""
    from cctool.readers import read

    if path is None:
        from benchmarks._harness import synth_db

        path = str(synth_db(*SIZE))
    return read(path)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    gf = load_profile(args[0] if args else None)
    print(f"{gf!r}", file=sys.stderr)
    for label, text in (("wildcards", WILDCARDS), ("wildcards+metric", WITH_METRIC)):
        r = time_query(gf, text)
        print(f"{label:17} match {r['match_s']:.3f}s (first {r['match_first_s']:.3f}s)  "
              f"squash {r['squash_s']:.3f}s  no-squash {r['no_squash_s']:.3f}s  "
              f"matched {r['matched']} -> {r['squashed_nodes']} nodes")


if __name__ == "__main__":
    main()
