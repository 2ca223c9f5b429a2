"""Run cctool's benchmarks: ``python -m benchmarks [--quick] [--case NAME]... [--list]``.

Every case runs in a fresh child process, so its peak RSS is its own; its input is prepared
and its floor timed in other children first. The table goes to stdout, progress to stderr,
and all numbers to ``benchmarks/_out/results.json``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks._harness import CASES, OUT, ROOT, Case, Skip, peak_rss_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the quick cases")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="run only this case (glob patterns work; repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--json", type=Path, default=OUT / "results.json",
                        help="where to write the results (default benchmarks/_out/results.json)")
    parser.add_argument("--child", nargs=3, metavar=("NAME", "PHASE", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    import benchmarks.cases  # noqa: F401  (registers the cases)

    if args.child:
        return _child(*args.child)
    cases = _select(args.case, args.quick)
    if args.list:
        for c in cases:
            print(f"{c.name:16} {'quick' if c.quick else '     '}  {c.doc}")
        return 0
    if not cases:
        parser.error(f"no case matches {args.case}; see --list")
    results = []
    for c in cases:
        print(f"[{time.strftime('%H:%M:%S')}] {c.name}: {c.doc}", file=sys.stderr)
        results.append(_run(c))
    _print_table(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": _meta(), "results": results}, indent=2) + "\n")
    print(f"results written to {args.json}", file=sys.stderr)
    return 1 if any("error" in r for r in results) else 0


def _select(patterns: list[str], quick: bool) -> list[Case]:
    cases = list(CASES.values())
    if patterns:
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    return [c for c in cases if c.quick] if quick else cases


def _run(c: Case) -> dict[str, Any]:
    """Prepare, floor and run ``c``, each in a fresh process; one result row."""
    row: dict[str, Any] = {"case": c.name, "description": c.doc}
    for phase in ("prepare", "floor", "run"):
        if (phase == "prepare" and c.prepare is None) or (phase == "floor" and c.floor is None):
            continue
        got = _spawn(c.name, phase)
        if "skipped" in got or "error" in got:
            row.update(got)
            return row
        row.update(got)
    if row.get("rows") and row.get("wall_s"):
        row["rows_per_s"] = row["rows"] / row["wall_s"]
    if row.get("floor_s"):
        row["ratio_to_floor"] = row["wall_s"] / row["floor_s"]
    row["checks"] = _check(c, row)
    return row


def _spawn(name: str, phase: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks", "--child", name, phase, str(out)],
            env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            print(f"  {phase} failed: {tail}", file=sys.stderr)
            return {"error": f"{phase}: {tail}"}
        return dict(json.loads(out.read_text()))


def _child(name: str, phase: str, out: str) -> int:
    c = CASES[name]
    result: dict[str, Any]
    try:
        if phase == "prepare":
            assert c.prepare is not None
            c.prepare()
            result = {}
        elif phase == "floor":
            assert c.floor is not None
            result = {"floor_s": c.floor()}
        else:
            m = c.run()
            result = asdict(m)
            if m.peak_rss_mb is None:
                result["peak_rss_mb"] = peak_rss_mb()
    except Skip as exc:
        result = {"skipped": str(exc)}
    Path(out).write_text(json.dumps(result))
    return 0


def _check(c: Case, row: dict[str, Any]) -> dict[str, bool]:
    """Which of the case's targets the row meets."""
    checks = {}
    for key, limit in c.targets.items():
        value = row.get(key)
        if value is not None:
            checks[key] = value >= limit if key == "rows_per_s" else value <= limit
    return checks


def _print_table(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="cctool benchmarks")
    for head in ("case", "rows", "wall s", "warm s", "rows/s", "peak RSS MB", "floor s",
                 "ratio to floor"):
        table.add_column(head, justify="left" if head == "case" else "right", no_wrap=True)
    for r in results:
        if "skipped" in r or "error" in r:
            table.add_row(r["case"], f"[dim]{r.get('skipped') or r.get('error')}[/dim]")
            continue
        checks = r.get("checks", {})

        def mark(key: str, text: str, checks: dict[str, bool] = checks) -> str:
            if key not in checks:
                return text
            return f"[green]{text}[/green]" if checks[key] else f"[red]{text}[/red]"

        table.add_row(
            r["case"], _fmt(r.get("rows"), "{:,}"), _fmt(r.get("wall_s"), "{:.3f}"),
            _fmt(r.get("warm_s"), "{:.3f}"), mark("rows_per_s", _rate(r.get("rows_per_s"))),
            mark("peak_rss_mb", _fmt(r.get("peak_rss_mb"), "{:,.0f}")),
            _fmt(r.get("floor_s"), "{:.3f}"),
            mark("ratio_to_floor", _fmt(r.get("ratio_to_floor"), "{:.1f}x")))
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=120)  # a file or pipe: do not squeeze the numbers into 80 columns
    console.print(table)
    targets = [f"{c.name}: " + ", ".join(_target_text(k, v) for k, v in c.targets.items())
               for c in CASES.values() if c.targets and any(r["case"] == c.name for r in results)]
    if targets:
        console.print("targets (green met, red missed): " + "; ".join(targets))


def _target_text(key: str, limit: float) -> str:
    return {"ratio_to_floor": f"<= {limit:g}x floor", "rows_per_s": f">= {_rate(limit)} rows/s",
            "peak_rss_mb": f"peak RSS <= {limit:,.0f} MB"}.get(key, f"{key} {limit:g}")


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else spec.format(value)


def _rate(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value / 1e6:.1f}M" if value >= 1e6 else f"{value / 1e3:.0f}k"


def _meta() -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "python": platform.python_version(),
            "platform": platform.platform(), "cpus": os.cpu_count(), "commit": commit or None}


if __name__ == "__main__":
    sys.exit(main())
