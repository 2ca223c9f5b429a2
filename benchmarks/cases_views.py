"""Cases for the views (issue 24): building bottom-up, flat and peek on 35,000 nodes x 512
ranks, and the terminal viewer's time to its first screen.

The view cases read the database untimed and time the view alone, in process, best of three
(the read is the ``read-*`` cases' subject). The viewer cases time from the model's
construction (the top-down view built) to the first screen Textual draws, headless.
"""

from __future__ import annotations

import asyncio
import re
import time
from functools import partial

import numpy as np

from benchmarks._harness import Measurement, Skip, best_of, case, peak_rss_mb, synth_db, timer

SIZE = (35_000, 512)


def _db() -> object:
    return synth_db(*SIZE)


def _frame() -> object:
    from cctool.readers import read

    return read(synth_db(*SIZE))


def _view(kind: str, agg: str = "sum") -> Measurement:
    from cctool.ops.views import ViewOptions, compute

    gf = _frame()
    pattern = None
    if kind == "peek":  # the function with the most contexts: the largest merge
        bu = compute(gf, "bottom-up", depth=1)  # type: ignore[arg-type]
        top = bu.rows.sort("contexts", descending=True)
        pattern = "^" + re.escape(str(top["name"][0])) + "$"
    opts = ViewOptions(agg=agg)
    run = partial(compute, gf, kind, opts, pattern=pattern)  # type: ignore[arg-type]
    view = run()
    wall = best_of(3, run)
    return Measurement(wall_s=wall, rows=gf.metrics.height,  # type: ignore[attr-defined]
                       peak_rss_mb=peak_rss_mb(),
                       notes={"view_rows": view.size, "nodes": gf.num_nodes,  # type: ignore[attr-defined]
                              "agg": agg, "pattern": pattern})


def _register(kind: str, agg: str) -> None:
    def run() -> Measurement:
        return _view(kind, agg)

    run.__doc__ = (f"the {kind} view of 35,000 nodes x 512 ranks (17.9M rows), --agg {agg}: "
                   "in process after an untimed read, best of 3")
    suffix = "" if agg == "sum" else f"-{agg}"
    case(f"view-{kind}-35k-512{suffix}", prepare=_db)(run)


for _kind in ("bottom-up", "flat", "peek"):
    for _agg in ("sum", "max"):
        _register(_kind, _agg)


def _first_screen(gf: object) -> tuple[float, float]:
    """(model + first screen, model alone) seconds for ``gf`` in a 120 x 40 headless app."""
    try:
        from cctool.render.tui.app import ViewerApp
    except ImportError:
        raise Skip("Textual is not installed (pip install 'cctool[tui]')") from None
    from cctool.ops.views import ViewOptions
    from cctool.render.tui.model import ViewModel

    out: list[float] = []

    async def main() -> None:
        start = time.perf_counter()
        model = ViewModel(gf, ViewOptions())  # type: ignore[arg-type]
        built = time.perf_counter()
        app = ViewerApp(model, "bench")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()  # mounted, laid out and drawn once
            out.append(time.perf_counter() - start)
        out.append(built - start)

    asyncio.run(main())
    return out[0], out[1]


@case("viewer-first-screen-35k-512", prepare=_db)
def viewer_35k() -> Measurement:
    """cctool view on 35,000 nodes x 512 ranks: top-down view built + first screen drawn
    (headless Textual, 120 x 40), best of 3; the read before it is not timed"""
    gf = _frame()
    runs = [_first_screen(gf) for _ in range(3)]
    best = min(runs)
    return Measurement(wall_s=best[0], rows=gf.metrics.height,  # type: ignore[attr-defined]
                       peak_rss_mb=peak_rss_mb(), notes={"model_s": best[1]})


@case("viewer-first-screen-1m")
def viewer_1m() -> Measurement:
    """cctool view on a 1,000,000-node random tree (one rank): view built + first screen,
    then a hot path, a search and the bottom-up view switch, each to its redrawn screen"""
    from cctool.model.frame import GraphFrame

    rng = np.random.default_rng(0)
    n = 1_000_000
    parent = np.concatenate([[-1], (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)])
    names = np.char.add("f", (np.arange(n) % 5000).astype(str))
    gf = GraphFrame.from_arrays(parent, {"name": names, "type": ["function"] * n},
                                {"node": np.arange(n), "time": rng.random(n)},
                                exclusive=["time"])
    first, model = _first_screen(gf)
    keys = _keys(gf)
    return Measurement(wall_s=first, rows=n, peak_rss_mb=peak_rss_mb(),
                       notes={"model_s": model, **keys})


def _keys(gf: object) -> dict[str, float]:
    from cctool.ops.views import ViewOptions
    from cctool.render.tui.app import ViewerApp
    from cctool.render.tui.model import ViewModel

    out: dict[str, float] = {}

    async def main() -> None:
        app = ViewerApp(ViewModel(gf, ViewOptions()), "bench")  # type: ignore[arg-type]
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for label, keys in (("hot_path_s", ["h"]), ("down_s", ["down"]),
                                ("search_s", ["slash", *"^f4999$", "enter"]),
                                ("end_s", ["end"]), ("bottom_up_s", ["v"]),
                                ("flat_s", ["v"])):
                with timer() as t:
                    await pilot.press(*keys)
                    await pilot.pause()
                out[label] = t[0]

    asyncio.run(main())
    return out
