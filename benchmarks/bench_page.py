"""The interactive page at 200,000 nodes: its size, the time to write it and to open it.

``python -m benchmarks.bench_page [--nodes N]`` generates a synthetic HPCToolkit database
(``cctool.synth``, 2 ranks, 2 metrics, seed 1) under ``benchmarks/_data``, writes its page with
``cctool.render.html.to_html`` and opens it in headless Chromium (playwright, as the page
tests do; ``CCTOOL_CHROMIUM`` names the browser). It prints the page's size, the best of three
``to_html`` times, and the best of three loads: from navigation until the page's first view
is drawn (``body[data-ready]``). ``--against PAGE`` loads an older page of the same profile
in turn with the new one, so that both see the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "_data"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _db(nodes: int) -> Path:
    path = DATA / f"page-n{nodes}-r2-m2"
    if not (path / ".complete").exists():
        from cctool.synth import generate

        shutil.rmtree(path, ignore_errors=True)
        generate(path, nodes=nodes, ranks=2, metrics=2, seed=1)
        (path / ".complete").write_text("done\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--against", type=Path, default=None, metavar="PAGE",
                    help="also load this page (written by an earlier cctool), its loads "
                    "interleaved with the new page's so both see the same machine load")
    opts = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from cctool.readers import read
    from cctool.render.html import to_html

    gf = read(_db(opts.nodes))
    best_write, page = float("inf"), ""
    for _ in range(3):
        t0 = time.perf_counter()
        page = to_html(gf)
        best_write = min(best_write, time.perf_counter() - t0)
    out = DATA / f"page-n{opts.nodes}.html"
    out.write_text(page)
    pages = [out] + ([opts.against] if opts.against else [])
    loads: dict[Path, list[float]] = {p: [] for p in pages}
    exe = os.environ.get("CCTOOL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=ARGS)
        for _ in range(3):
            for path in pages:
                tab = browser.new_page(viewport={"width": 1400, "height": 850})
                t0 = time.perf_counter()
                tab.goto(path.resolve().as_uri())
                tab.wait_for_selector("body[data-ready]", timeout=60_000)
                loads[path].append(time.perf_counter() - t0)
                tab.close()
        browser.close()
    print("| page | nodes | page size | to_html (best of 3) | load until drawn (best of 3) "
          "| load avg |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in pages:
        size = path.stat().st_size / 1e6
        write = f"{best_write:.2f} s" if path == out else ""
        print(f"| {path.name} | {gf.num_nodes:,} | {size:.1f} MB | {write} | "
              f"{min(loads[path]):.2f} s | {os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    main()
