"""Run cctool's benchmarks: ``python -m benchmarks [--quick] [--case NAME]... [--list]``.

Every case runs in a fresh child process, so its peak RSS is its own; its input is prepared
and its floor timed in other children first. Where Hatchet is installed (the ``bench`` extra)
and the case has a Hatchet twin, Hatchet does the same work in a last, capped child, so the
ratio compares runs on the same machine minutes apart. The table goes to stdout, progress to
stderr, and all numbers to ``benchmarks/_out/results.json``. ``--curve`` measures read time
against rows instead (:mod:`benchmarks.curve`). ``--profile`` runs the selected cases once
under cProfile instead of timing them, writes ``benchmarks/_out/profiles/CASE.pstats`` and
prints each profile's call tree as ``cctool tree`` draws it (cProfile's overhead inflates
Python-level loops; the shape, not the seconds, is what to read).
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

from benchmarks import _harness, _hatchet
from benchmarks._harness import CASES, OUT, ROOT, Case, Skip, peak_rss_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the quick cases")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="run only this case (glob patterns work; repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--json", type=Path, default=None,
                        help="where to write the results (default benchmarks/_out/results.json,"
                        " or curve.json with --curve)")
    parser.add_argument("--no-hatchet", action="store_true",
                        help="skip the Hatchet runs (default: run them where Hatchet is installed)")
    parser.add_argument("--hatchet-cap", type=float, default=_hatchet.CAP_S, metavar="S",
                        help=f"stop a Hatchet run after S seconds (default {_hatchet.CAP_S:.0f})")
    parser.add_argument("--hatchet-memory", type=float, default=_hatchet.MEMORY_GB, metavar="GB",
                        help="stop a Hatchet run above this much memory "
                        f"(default {_hatchet.MEMORY_GB:.0f})")
    parser.add_argument("--curve", action="store_true",
                        help="read time against rows, 1M to 53.8M rows: table, SVG and PNG plot "
                        "in benchmarks/_out/")
    parser.add_argument("--profile", action="store_true",
                        help="run the selected cases once under cProfile: pstats files in "
                        "benchmarks/_out/profiles/ and their call trees on stdout")
    parser.add_argument("--child", nargs=3, metavar=("NAME", "PHASE", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    import benchmarks.cases  # noqa: F401  (registers the cases)
    import benchmarks.cases_ensembles  # noqa: F401
    import benchmarks.cases_fast_faces  # noqa: F401
    import benchmarks.cases_fast_machine  # noqa: F401
    import benchmarks.cases_fast_runs  # noqa: F401
    import benchmarks.cases_fast_timeline  # noqa: F401
    import benchmarks.cases_fast_v4  # noqa: F401
    import benchmarks.cases_fast_views  # noqa: F401
    import benchmarks.cases_speed  # noqa: F401
    import benchmarks.cases_views  # noqa: F401

    if args.child:
        return _child(*args.child)
    if args.curve:
        from benchmarks import curve

        return curve.main(args.json or OUT / "curve.json", quick=args.quick)
    if sys.dont_write_bytecode:
        # Every fresh process would compile all of cctool, Click, Rich and Polars' Python
        # from source: start-up figures come out 0.05 to 0.3 s worse than a user sees.
        print("warning: PYTHONDONTWRITEBYTECODE is set, so start-up times include compiling "
              "every module; unset it for figures a user sees", file=sys.stderr)
    args.json = args.json or OUT / "results.json"
    cases = _select(args.case, args.quick)
    if args.list:
        for c in cases:
            print(f"{c.name:24} {'quick' if c.quick else '     '}  {c.doc}")
        return 0
    if not cases:
        parser.error(f"no case matches {args.case}; see --list")
    if args.profile:
        return _profile_cases(cases)
    results: list[dict[str, Any]] = []
    hatchet = None if args.no_hatchet else {"cap": args.hatchet_cap, "memory": args.hatchet_memory,
                                            "failed": {}}
    for c in cases:
        print(f"[{time.strftime('%H:%M:%S')}] {c.name}: {c.doc}", file=sys.stderr)
        results.append(_run(c, hatchet))
        # Write as we go: a long run stopped half-way keeps what it measured.
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": _meta(), "results": results}, indent=2) + "\n")
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


def _run(c: Case, hatchet: dict[str, Any] | None = None) -> dict[str, Any]:
    """Prepare, floor and run ``c``, each in a fresh process, then its Hatchet twin if
    ``hatchet`` (limits, and the inputs Hatchet already failed on) is given; one result row."""
    # Other work on a shared machine slows every figure: keep the load next to them.
    row: dict[str, Any] = {"case": c.name, "description": c.doc,
                           "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg")
                           else None}
    for phase in ("prepare", "floor", "run"):
        if (phase == "prepare" and c.prepare is None) or (phase == "floor" and c.floor is None):
            continue
        got = _spawn(c.name, phase)
        if "skipped" in got or "error" in got:
            row.update(got)
            return row
        row.update(got)
    for line in row.get("notes", {}).get("printed", []):  # a case's own lines: both sides
        print(f"  {line}", file=sys.stderr)
    if row.get("rows") and row.get("wall_s"):
        row["rows_per_s"] = row["rows"] / row["wall_s"]
    peer = (row.get("notes") or {}).get("peer_s")
    if peer and not row.get("floor_s"):  # a case that timed its peer itself, interleaved
        row["floor_s"] = peer
    if row.get("floor_s"):
        row["ratio_to_floor"] = row["wall_s"] / row["floor_s"]
    row["checks"] = _check(c, row)
    if hatchet is not None and c.hatchet is not None:
        row.update(_run_hatchet(c, hatchet))
        if row.get("hatchet_s") and row.get("wall_s"):
            row["hatchet_ratio"] = row["hatchet_s"] / row["wall_s"]
    return row


def _run_hatchet(c: Case, limits: dict[str, Any]) -> dict[str, Any]:
    failed = limits["failed"]
    earlier = next((failed[i] for i in c.hatchet_inputs if i in failed), None)
    if earlier is not None:
        return {"hatchet_error": "not run", "hatchet_where": earlier}
    print(f"  hatchet (cap {limits['cap']:.0f} s, {limits['memory']:.0f} GB)", file=sys.stderr)
    got = _spawn(c.name, "hatchet", limits)
    if "skipped" in got:
        return {"hatchet_error": "n/a", "hatchet_where": got["skipped"]}
    if "error" in got:
        return {"hatchet_error": "failed", "hatchet_where": got["error"]}
    if str(got.get("hatchet_error", "")).startswith("failed: "):
        return {**got, "hatchet_error": "failed", "hatchet_where": got["hatchet_error"][8:]}
    if "hatchet_error" in got and got["hatchet_error"].startswith(("did not", "stopped")):
        if str(got.get("hatchet_where", "")).startswith("untimed: read") or c.name.startswith(
                "read-"):
            for i in c.hatchet_inputs:  # the read itself failed: do not repeat it
                failed[i] = f"Hatchet could not read {i} in {c.name}: {got['hatchet_error']}"
        print(f"  hatchet {got['hatchet_error']}: {got.get('hatchet_where')}", file=sys.stderr)
    return got


def _spawn(name: str, phase: str, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
        cmd = [sys.executable, "-m", "benchmarks", "--child", name, phase, str(out)]
        if limits is not None:
            return _hatchet.run_capped(cmd, env, out, limits["cap"], limits["memory"])
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            print(f"  {phase} failed: {tail}", file=sys.stderr)
            return {"error": f"{phase}: {tail}"}
        return dict(json.loads(out.read_text()))


def _profile_cases(cases: list[Case]) -> int:
    """Run each case once under cProfile (fresh process) and print its call tree."""
    folder = OUT / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    failed = False
    for c in cases:
        print(f"[{time.strftime('%H:%M:%S')}] profiling {c.name}: {c.doc}", file=sys.stderr)
        if c.prepare is not None and "error" in _spawn(c.name, "prepare"):
            failed = True
            continue
        got = _spawn(c.name, "profile")
        if "error" in got or "skipped" in got:
            failed = failed or "error" in got
            continue
        pstats = Path(got["pstats"])
        print(f"\n{c.name}: {pstats.relative_to(ROOT.parent)}"
              f" ({got['wall_s']:.2f} s under cProfile)")
        # The case's own tree view of its profile: cctool reading what profiling cctool wrote.
        tree = [sys.executable, "-m", "cctool", "tree", str(pstats), "--depth", "14",
                "--threshold", "0.02", "--color", "never"]
        sys.stdout.flush()
        subprocess.run(tree, check=False)
    return 1 if failed else 0


def _profile_child(c: Case) -> dict[str, Any]:
    """Profile one run of ``c``: in this process, or inside the cctool command it starts
    (the last one it starts, when it starts several)."""
    import cProfile

    folder = OUT / "profiles"
    own, cli = folder / f"{c.name}.pstats", folder / f"{c.name}.cli.pstats"
    cli.unlink(missing_ok=True)
    os.environ[_harness.PROFILE_ENV] = str(cli)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    c.run()
    profiler.disable()
    wall = time.perf_counter() - start
    if cli.exists():  # the work ran in a cctool command: its profile is the one to read
        cli.replace(own)
    else:
        profiler.dump_stats(str(own))
    return {"pstats": str(own), "wall_s": wall}


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
        elif phase == "profile":
            result = _profile_child(c)
        elif phase == "hatchet":
            assert c.hatchet is not None
            _hatchet.install_where_handler()
            result = c.hatchet()
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
                 "ratio to floor", "Hatchet s", "Hatchet / cctool"):
        table.add_column(head, justify="left" if head == "case" else "right", no_wrap=True)
    stops = []
    for r in results:
        if "skipped" in r or "error" in r:
            table.add_row(r["case"], f"[dim]{r.get('skipped') or r.get('error')}[/dim]")
            continue
        checks = r.get("checks", {})

        def mark(key: str, text: str, checks: dict[str, bool] = checks) -> str:
            if key not in checks:
                return text
            return f"[green]{text}[/green]" if checks[key] else f"[red]{text}[/red]"

        hatchet_s, ratio = _fmt(r.get("hatchet_s"), "{:.3f}"), _fmt(r.get("hatchet_ratio"),
                                                                   "{:.1f}x")
        if "hatchet_error" in r:
            hatchet_s, ratio = _hatchet_short(r["hatchet_error"]), ""
            stops.append(f"{r['case']}: Hatchet {r['hatchet_error']}: {r.get('hatchet_where')}")
        table.add_row(
            r["case"], _fmt(r.get("rows"), "{:,}"), mark("wall_s", _fmt(r.get("wall_s"), "{:.3f}")),
            _fmt(r.get("warm_s"), "{:.3f}"), mark("rows_per_s", _rate(r.get("rows_per_s"))),
            mark("peak_rss_mb", _fmt(r.get("peak_rss_mb"), "{:,.0f}")),
            _fmt(r.get("floor_s"), "{:.3f}"),
            mark("ratio_to_floor", _fmt(r.get("ratio_to_floor"), "{:.1f}x")), hatchet_s, ratio)
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=160)  # a file or pipe: do not squeeze the numbers into 80 columns
    console.print(table)
    for line in stops:
        console.print(line, highlight=False)
    targets = [f"{c.name}: " + ", ".join(_target_text(k, v) for k, v in c.targets.items())
               for c in CASES.values() if c.targets and any(r["case"] == c.name for r in results)]
    if targets:
        console.print("targets (green met, red missed): " + "; ".join(targets))


def _target_text(key: str, limit: float) -> str:
    return {"ratio_to_floor": f"<= {limit:g}x floor", "rows_per_s": f">= {_rate(limit)} rows/s",
            "peak_rss_mb": f"peak RSS <= {limit:,.0f} MB",
            "wall_s": f"<= {limit:g} s"}.get(key, f"{key} {limit:g}")


def _hatchet_short(error: str) -> str:
    """The table cell for a Hatchet run without a time; the details go below the table."""
    if error.startswith("did not finish"):
        return "> " + error.split("within ")[1].replace(" ", "")
    if error.startswith("stopped at"):
        return "> " + error.split("limit ")[1].rstrip(")").replace(" ", "")
    return "error" if error.startswith("failed") else error


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
            "platform": platform.platform(), "cpus": os.cpu_count(), "commit": commit or None,
            "bytecode_cache": not sys.dont_write_bytecode}


if __name__ == "__main__":
    sys.exit(main())
