"""The timeline page at scale: writing it, its size, and its first draw in headless Chromium.

``python -m benchmarks.bench_timeline_page [--case LANESxNODES]...`` generates HPCToolkit
databases with a trace.db by ``python -m cctool.synth --format v4 --trace`` under
``benchmarks/_data`` (each location runs every context with exclusive time once, so its
intervals are about 19% of the tree's nodes: 533,000 nodes give about 100,000 intervals per
location), writes the page with ``cctool timeline DB -o page.html`` (wall time and peak RSS
of the process, best of ``--repeat``), and opens it in headless Chromium (the system's
``chromium``, through playwright): the time from navigation to the first draw (the page's
``body[data-ready]``: parse, unpack, first frame, window sums and tree), the first frame
alone, and the mean redraw while zooming with the wheel. One line per case on stdout.

Cases are ``LANES x NODES`` of the synthetic tree, e.g. ``64x533000`` (64 x ~100k intervals).

``--trace 64x100k --trace 1024x1M`` measures instead the trace.db files of
:mod:`benchmarks.bench_trace_read` (10,000 nodes, each location's contexts run 38 or 380
times over: 6.4M and 1.02 billion intervals, 77 MB and 12.2 GB): generate them first with
``--generate-only`` (timed on its own line), then per trace the text view and a window's
tree (``cctool timeline DB --window 10s:12s``, ``cctool tree DB --window 10s:12s``), the page
(``cctool timeline DB -o page.html``: a line at a time, two passes), its size and its first
draw. ``--whole-text`` adds the text view of the whole run (15 minutes at 1,024 x 1M).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from benchmarks.bench_edges import measure

DATA = Path(__file__).resolve().parent / "_data"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
DEFAULT_CASES = ("64x533000", "256x100000")


def database(lanes: int, nodes: int) -> Path:
    path = DATA / f"timeline-r{lanes}-n{nodes}"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        shutil.rmtree(path, ignore_errors=True)
        generate(path, nodes=nodes, ranks=lanes, fmt="v4", trace=True, seed=0)
        (path / ".complete").write_text("done\n")
    return path


def intervals(db: Path) -> int:
    """Elements of the trace.db lines that start an interval (the last of a line ends it)."""
    import struct

    raw = (db / "trace.db").read_bytes()
    (sec,) = struct.unpack_from("<Q", raw, 0x18)
    at, n, stride = struct.unpack_from("<QIB", raw, sec)
    total = 0
    for i in range(n):
        _, _, start, end = struct.unpack_from("<IIQQ", raw, at + i * stride)
        total += (end - start) // 12 - 1
    return total


def first_draw(page: Path) -> tuple[float, float, float, int]:
    """(s to data-ready, first frame ms, mean zoom redraw ms, lanes drawn) in Chromium."""
    from playwright.sync_api import sync_playwright

    exe = os.environ.get("CCTOOL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1600, "height": 900})
        start = time.perf_counter()
        tab.goto(page.resolve().as_uri(), timeout=600_000)
        tab.wait_for_selector("body[data-ready]", timeout=600_000)
        ready = time.perf_counter() - start
        frame = tab.evaluate("window.cctoolTimeline.lastDraw.ms")
        lanes = tab.evaluate("window.cctoolTimeline.lastDraw.lanesDrawn")
        box = tab.locator("#lanes").bounding_box()
        assert box is not None
        tab.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2)
        draws = []
        for _ in range(12):
            tab.mouse.wheel(0, -300)
            tab.wait_for_timeout(30)
            draws.append(tab.evaluate("window.cctoolTimeline.lastDraw.ms"))
        browser.close()
    return ready, frame, sum(draws) / len(draws), lanes


def traces(names: list[str], repeat: int, generate_only: bool, whole_text: bool) -> None:
    """The trace.db cases (see the module docstring), one table row per measurement."""
    from benchmarks import bench_trace_read as reads

    cct = [sys.executable, "-m", "cctool"]
    print("| trace | step | time | peak RSS | size | load |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in names:
        db = DATA / f"trace-{name}"
        if not (db / ".complete").exists():
            start = time.perf_counter()
            reads._db(name)  # noqa: SLF001 - the one definition of these databases
            print(f"| {name} | generate (`python -m cctool.synth ... --trace`) "
                  f"| {time.perf_counter() - start:.1f} s | | "
                  f"{(db / 'trace.db').stat().st_size / 1e9:.2f} GB | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
        if generate_only:
            continue
        lines, count = reads.intervals(db)
        print(f"| {name} | {lines:,} lines, {count:,} intervals | | | | |", flush=True)
        page = DATA / f"trace-{name}.html"
        steps = [("`timeline --window 10s:12s` (text)",
                  [*cct, "timeline", str(db), "--window", "10s:12s", "-o", os.devnull]),
                 ("`tree --window 10s:12s`",
                  [*cct, "tree", str(db), "--window", "10s:12s", "-o", os.devnull])]
        if whole_text:
            steps.append(("`timeline` (text, whole run)",
                          [*cct, "timeline", str(db), "-o", os.devnull]))
        steps.append(("`timeline -o page.html`", [*cct, "timeline", str(db), "-o", str(page)]))
        for label, args in steps:
            wall, rss = measure(args, repeat)
            size = (f"{page.stat().st_size / 1e6:.1f} MB" if args[-1] == str(page) else "")
            print(f"| {name} | {label} | {wall:.1f} s | {rss:,.0f} MB | {size} "
                  f"| {os.getloadavg()[0]:.1f} |", flush=True)
        ready, frame, redraw, drawn = first_draw(page)
        print(f"| {name} | first draw in Chromium 1600 x 900 (first frame {frame:.0f} ms, "
              f"zoom redraw {redraw:.0f} ms, {drawn} lanes drawn) | {ready:.2f} s | | "
              f"| {os.getloadavg()[0]:.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", default=[], metavar="LANESxNODES")
    ap.add_argument("--trace", action="append", default=[], choices=["64x100k", "1024x1M"])
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--whole-text", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    opts = ap.parse_args()
    if opts.trace:
        traces(opts.trace, opts.repeat, opts.generate_only, opts.whole_text)
        return
    print("| case | intervals | write page | peak RSS | page size | first draw | first frame "
          "| zoom redraw | lanes | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in opts.case or DEFAULT_CASES:
        lanes, nodes = (int(x) for x in case.split("x"))
        db = database(lanes, nodes)
        page = DATA / f"timeline-r{lanes}-n{nodes}.html"
        wall, rss = measure([sys.executable, "-m", "cctool", "timeline", str(db), "-o",
                             str(page)], opts.repeat)
        ready, frame, redraw, drawn = first_draw(page)
        load = os.getloadavg()[0]
        print(f"| {lanes} x {nodes:,} nodes | {intervals(db):,} | {wall:.1f} s | {rss:,.0f} MB "
              f"| {page.stat().st_size / 1e6:.1f} MB | {ready:.2f} s | {frame:.0f} ms "
              f"| {redraw:.0f} ms | {drawn} | {load:.1f} |", flush=True)


if __name__ == "__main__":
    main()
