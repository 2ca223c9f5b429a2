"""Read time against rows: ``python -m benchmarks --curve [--quick]``.

Six generated HPCToolkit databases of one program (35,000 nodes, 3 metric kinds) with more
and more ranks and threads, from 1.1M to 53.8M metric rows. Each is read in a fresh process
(warm page cache): the first call, as a command pays it, and the best of three more. A
least-squares line through the first calls and its R² show whether the cost grows linearly.
Writes a table to stdout, ``curve.json``, ``curve.svg`` and ``curve.png`` (with Pillow) next
to the JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import ROOT, synth_db

NODES, METRICS = 35_000, 3
POINTS = [(32, 1), (128, 1), (256, 1), (512, 1), (512, 2), (512, 3)]  # (ranks, threads)


def main(out: Path, quick: bool = False) -> int:
    points = POINTS[:3] if quick else POINTS
    rows_out: list[dict[str, Any]] = []
    for ranks, threads in points:
        path = synth_db(NODES, ranks, threads, METRICS)
        rows = NODES * ranks * threads
        print(f"[{time.strftime('%H:%M:%S')}] curve: {rows / 1e6:.1f}M rows ({path.name})",
              file=sys.stderr)
        got = _child(path)
        got.update(rows=rows, ranks=ranks, threads=threads, path=str(path))
        rows_out.append(got)
    fit = _fit([r["rows"] / 1e6 for r in rows_out], [r["wall_s"] for r in rows_out])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"points": rows_out, "fit": fit}, indent=2) + "\n")
    _print(rows_out, fit)
    from cctool.render import plot

    cv = chart(rows_out, fit)
    svg, png = out.with_suffix(".svg"), out.with_suffix(".png")
    svg.write_text(plot.to_svg(cv))
    written = [out, svg]
    try:
        png.write_bytes(plot.to_png(cv))
        written.append(png)
    except Exception as exc:  # Pillow missing: the SVG is the plot
        print(f"no PNG: {exc}", file=sys.stderr)
    print("written: " + ", ".join(str(p) for p in written), file=sys.stderr)
    return 0


def _child(path: Path) -> dict[str, Any]:
    """Read ``path`` in a fresh process (after warming the page cache there first)."""
    code = (
        "import json, sys, time, gc\n"
        "import lxml.etree, numpy.ma\n"
        "from benchmarks._harness import peak_rss_mb\n"
        "from cctool.readers import read, reader_modules\n"
        "from pathlib import Path\n"
        "p = Path(sys.argv[1])\n"
        "for f in p.iterdir():\n"
        "    f.read_bytes()\n"  # the page cache, warm for every point alike
        "reader_modules()\n"
        "t = time.perf_counter(); gf = read(p); first = time.perf_counter() - t\n"
        "peak = peak_rss_mb(); n = gf.metrics.height; del gf; gc.collect()\n"
        "warm = []\n"
        "for _ in range(3):\n"
        "    t = time.perf_counter(); read(p); warm.append(time.perf_counter() - t)\n"
        "warm = min(warm)\n"
        "json.dump({'wall_s': first, 'warm_s': warm, 'peak_rss_mb': peak, 'read_rows': n},"
        " open(sys.argv[2], 'w'))\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        res = Path(tmp) / "r.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
        subprocess.run([sys.executable, "-c", code, str(path), str(res)], env=env, check=True)
        return dict(json.loads(res.read_text()))


def _fit(x: list[float], y: list[float]) -> dict[str, float]:
    """Least-squares line y = a + b x and its R²."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((v - mx) ** 2 for v in x)
    b = sum((u - mx) * (v - my) for u, v in zip(x, y, strict=True)) / sxx if sxx else 0.0
    a = my - b * mx
    ss_res = sum((v - a - b * u) ** 2 for u, v in zip(x, y, strict=True))
    ss_tot = sum((v - my) ** 2 for v in y)
    return {"intercept_s": a, "s_per_million_rows": b,
            "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


def _print(points: list[dict[str, Any]], fit: dict[str, float]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="read time against rows (35,000 nodes, 3 metric kinds, warm cache)")
    for head in ("rows", "ranks x threads", "first read s", "best later s", "M rows/s",
                 "s per M rows", "peak RSS MB"):
        table.add_column(head, justify="right")
    for p in points:
        m = p["rows"] / 1e6
        table.add_row(f"{p['rows']:,}", f"{p['ranks']} x {p['threads']}", f"{p['wall_s']:.3f}",
                      f"{p['warm_s']:.3f}", f"{m / p['wall_s']:.1f}", f"{p['wall_s'] / m:.3f}",
                      f"{p['peak_rss_mb']:,.0f}")
    console = Console(width=max(Console().width, 110))
    console.print(table)
    console.print(f"least squares: first read ≈ {fit['intercept_s']:.3f} s + "
                  f"{fit['s_per_million_rows']:.4f} s per million rows, R² = {fit['r2']:.4f}")


def chart(points: list[dict[str, Any]], fit: dict[str, float]) -> Any:
    """Points (first and second read) against millions of rows, and the fitted line."""
    from cctool.render.plot import Canvas, nice_ticks

    width, height, left, right, top, bottom = 760, 460, 80, 190, 50, 60
    xs = [p["rows"] / 1e6 for p in points]
    xt = nice_ticks(max(xs))
    yt = nice_ticks(max(max(p["wall_s"], p["warm_s"]) for p in points))
    pw, ph = width - left - right, height - top - bottom

    def xy(x: float, y: float) -> tuple[float, float]:
        return left + pw * x / (xt[-1] or 1), top + ph * (1 - y / (yt[-1] or 1))

    cv = Canvas(width, height)
    cv.text(left, top - 20, "cctool read time against rows (HPCToolkit XML, warm cache)", 14)
    for t in yt:
        x0, y = xy(0, t)
        cv.line(x0, y, left + pw, y, "#e5e5e5")
        cv.text(x0 - 8, y + 4, f"{t:g}", 11, "end")
    for t in xt:
        x, y0 = xy(t, 0)
        cv.line(x, y0, x, y0 + 5, "#444")
        cv.text(x, y0 + 20, f"{t:g}", 11, "middle")
    cv.line(left, top + ph, left + pw, top + ph, "#444")
    cv.line(left, top, left, top + ph, "#444")
    cv.text(left + pw / 2, height - 15, "metric rows (millions)", 12, "middle")
    cv.text(16, top + ph / 2, "s", 12)
    a, b = fit["intercept_s"], fit["s_per_million_rows"]
    cv.polyline([xy(0, max(a, 0.0)), xy(xt[-1], a + b * xt[-1])], "#888", 1.5, dash=True)
    series = (("first read", "wall_s", "#4e79a7"), ("best later read", "warm_s", "#f28e2b"))
    for k, (label, key, color) in enumerate(series):
        pts = [xy(x, p[key]) for x, p in zip(xs, points, strict=True)]
        cv.polyline(pts, color, 2.0)
        for x, y in pts:
            cv.dot(x, y, color, 3.5)
        ly = top + 20 * k
        cv.line(left + pw + 20, ly, left + pw + 44, ly, color, 2.0)
        cv.text(left + pw + 50, ly + 4, label, 12)
    ly = top + 40
    cv.line(left + pw + 20, ly, left + pw + 44, ly, "#888", 1.5, dash=True)
    cv.text(left + pw + 50, ly + 4, "least squares", 12)
    cv.text(left + pw + 20, ly + 24, f"{a:.2f} s + {b:.3f} s / M rows", 11)
    cv.text(left + pw + 20, ly + 40, f"R^2 = {fit['r2']:.4f}", 11)  # the bitmap font lacks ²
    return cv
