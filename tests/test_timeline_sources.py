"""Timelines of traces written by the real tools, checked against the tools' own sums, and
``--window`` on the commands that read a profile.

- tests/data/caliper-trace: Caliper event traces (``CALI_CONFIG=event-trace``) of an MPI run
  at 1 and 4 ranks, one ``.cali`` per rank; ``totals.json`` is ``cali-query``'s sum of
  ``time.duration.ns`` per region path and rank.
- tests/data/pyspy-trace: ``py-spy record --format chrometrace`` of a program with three
  threads; ``totals.json`` holds py-spy's sample count and each thread's outermost B/E span.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.errors import WindowError
from cctool.model.timeline import NS_PER_S, fold, parse_window
from cctool.ops.timeline import PATH_SEPARATOR, call_paths
from cctool.readers import read
from cctool.readers.timelines import read_profile, read_timeline, read_window

DATA = Path(__file__).parent / "data"
CALI = DATA / "caliper-trace"
PYSPY = DATA / "pyspy-trace" / "threads.json"
OUTSIDE = "<outside regions>"


def _per_path(gf, metric: str = "time") -> dict[tuple[str, int, int], float]:  # type: ignore[no-untyped-def]
    paths = call_paths(gf)
    m = gf.metrics.filter(pl.col(metric) != 0)
    return {(paths[n], r, t): v for n, r, t, v in
            m.select("node", "rank", "thread", metric).iter_rows()}


def _close(a: dict, b: dict, slack: float) -> None:  # type: ignore[type-arg]
    assert set(a) == set(b)
    worst = max(abs(a[k] - b[k]) for k in a)
    assert worst <= slack, worst


@pytest.mark.parametrize("run", ["np1", "np4"])
def test_caliper_trace_totals_are_cali_query_sums(run: str) -> None:
    path = CALI / ("np1.cali" if run == "np1" else "np4")  # one rank; one file per rank
    tl = read_timeline(path)
    tl.validate()
    assert tl.locations.height == (1 if run == "np1" else 4)
    totals = orjson.loads((CALI / "totals.json").read_bytes())["cali_query"][run]
    expected = {(r.get("path", OUTSIDE).replace("/", PATH_SEPARATOR), r["mpi.rank"], 0):
                r["sum#time.duration.ns"] / NS_PER_S for r in totals}
    whole = fold(tl)
    whole.validate()
    # Caliper's own integer ns sums, against integer-ns segments: exact up to float sums.
    _close(_per_path(whole), expected, 1e-12)
    _close(_per_path(read(path)), expected, 1e-12)  # the profile reader agrees
    # --window over the whole run is the profile (given in ms, past the end).
    span_ms = (tl.span[1] - tl.span[0]) / 1e6
    _close(_per_path(read_profile(path, window=f"0:{span_ms + 5}ms")), expected, 1e-12)


def test_caliper_trace_with_threads() -> None:
    """Three pthreads: per thread, every region's time is cali-query's; the records that
    open a thread (no pthread.id in their context, so cali-query sums them under no
    thread) go to the thread they open, outside every region."""
    path = CALI / "threads.cali"
    tl = read_timeline(path)
    tl.validate()
    assert tl.locations["thread"].to_list() == [0, 1, 2]
    got = _per_path(fold(tl))
    _close(got, _per_path(read(path)), 1e-12)
    rows = orjson.loads((CALI / "totals.json").read_bytes())["cali_query"]["threads"]
    master = next(r["pthread.id"] for r in rows if r.get("path") == "main_region")
    per_thread: dict[str, dict[str, float]] = {}
    for r in rows:
        if "pthread.id" in r:
            per_thread.setdefault(r["pthread.id"], {})[
                r.get("path", OUTSIDE).replace("/", PATH_SEPARATOR)] = \
                r["sum#time.duration.ns"] / NS_PER_S
    mine: dict[int, dict[str, float]] = {}
    for (p, _, t), v in got.items():
        mine.setdefault(t, {})[p] = v
    assert {p: v for p, v in mine[0].items()} == pytest.approx(per_thread.pop(master))
    regions = sorted(({p: v for p, v in d.items() if p != OUTSIDE} for d in per_thread.values()),
                     key=lambda d: sorted(d.items()))
    workers = sorted(({p: v for p, v in mine[t].items() if p != OUTSIDE} for t in (1, 2)),
                     key=lambda d: sorted(d.items()))
    assert workers == regions
    unthreaded = sum(r["sum#time.duration.ns"] for r in rows if "pthread.id" not in r)
    outside = sum(d.get(OUTSIDE, 0.0) for d in per_thread.values()) + unthreaded / NS_PER_S
    assert mine[1][OUTSIDE] + mine[2][OUTSIDE] == pytest.approx(outside, abs=1e-12)


def test_caliper_ranks_share_one_clock_and_a_window_cuts_every_rank() -> None:
    tl = read_timeline(CALI / "np4")
    starts = tl.segments.group_by("rank").agg(pl.col("start").min())["start"]
    # One mpirun: the ranks' channels started within a second of each other (wall clock).
    assert int(starts.max() - starts.min()) < NS_PER_S  # type: ignore[operator]
    assert int(starts.min()) == tl.origin  # type: ignore[arg-type]
    # Each rank's records chain without gaps from its start to its last event, so a
    # window inside every rank's span holds exactly its length per rank.
    ends = tl.segments.group_by("rank").agg(pl.col("end").max())["end"]
    lo = int(starts.max()) - tl.origin + 1_000_000  # type: ignore[operator]
    hi = int(ends.min()) - tl.origin - 1_000_000  # type: ignore[operator]
    gf = read_window(CALI / "np4", window=(lo, hi))
    per_rank = gf.metrics.group_by("rank").agg(pl.col("time").sum()).sort("rank")
    assert per_rank["time"].to_list() == pytest.approx([(hi - lo) / NS_PER_S] * 4, abs=1e-12)


def test_pyspy_chrome_trace_with_threads() -> None:
    tl = read_timeline(PYSPY)
    tl.validate()
    assert tl.locations.height == 3
    prof = read(PYSPY)
    whole = fold(tl)
    # Segments keep integer ns of py-spy's integer-us stamps: exact.
    _close(_per_path(whole), _per_path(prof), 1e-12)
    _close(_per_path(whole, "time (inc)"), _per_path(prof, "time (inc)"), 1e-9)
    _close(_per_path(read_profile(PYSPY, window=":")), _per_path(prof), 1e-12)
    totals = orjson.loads((PYSPY.parent / "totals.json").read_bytes())
    tids = sorted(int(t) for t in totals["threads"])
    roots = {(p, t): v for (p, _, t), v in _per_path(whole, "time (inc)").items()
             if PATH_SEPARATOR not in p}
    expected = {(totals["threads"][str(tid)]["root"], k): totals["threads"][str(tid)]["us"] / 1e6
                for k, tid in enumerate(tids)}
    _close(roots, expected, 1e-9)


def test_window_on_the_commands() -> None:
    runner = CliRunner()
    whole = runner.invoke(cli, ["tree", str(CALI / "np4"), "--to", "csv"])
    windowed = runner.invoke(cli, ["tree", str(CALI / "np4"), "--window", ":", "--to", "csv"])
    assert whole.exit_code == windowed.exit_code == 0, windowed.stderr
    assert _csv_time(windowed.stdout) == pytest.approx(_csv_time(whole.stdout), abs=1e-12)
    part = runner.invoke(cli, ["hot-path", str(PYSPY), "--window", "100ms:300ms", "--to", "csv"])
    assert part.exit_code == 0, part.stderr
    assert "0.2" in part.stdout  # the main thread's root ran the whole 200 ms window
    # A profile without a timeline: exit 2, one line naming the file and the option.
    static = DATA / "caliper" / "runtime-profile-np1.cali"
    for args in (["tree", str(static)], ["diff", str(CALI / "np4"), str(static)],
                 ["groupby", str(static), "--by", "name"], ["read", str(static)]):
        res = runner.invoke(cli, [*args, "--window", "0:1s"])
        assert res.exit_code == 2, (args, res.output)
        line = res.stderr.strip()
        assert "\n" not in line and "--window" in line and str(static) in line, line
    bad = runner.invoke(cli, ["tree", str(PYSPY), "--window", "2s:1s"])
    assert bad.exit_code == 2 and "--window" in bad.stderr


def _csv_time(text: str) -> dict[str, float]:
    df = pl.read_csv(text.encode())
    col = next(c for c in df.columns if c.startswith("time (inc)"))
    name = next(c for c in df.columns if c in ("path", "name"))
    return dict(zip(df[name].to_list(), df[col].to_list(), strict=True))


def test_every_command_that_reads_a_profile_takes_window() -> None:
    runner = CliRunner()
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        text = runner.invoke(cli, [name, "--help"]).stdout
        if "--from" in text:
            assert "--window" in text, name


def test_parse_window_units() -> None:
    assert parse_window("1.5:2500ms") == (1_500_000_000, 2_500_000_000)
    assert parse_window("200us:") == (200_000, None)


V4_TRACE = DATA / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d"


@pytest.fixture(scope="module")
def synth_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cctool.synth import generate

    path = tmp_path_factory.mktemp("synth-trace")
    generate(path, nodes=300, ranks=3, fmt="v4", trace=True, visits=5)
    return path


@pytest.mark.parametrize("window", [":", "1ms:", ":3ms", "0.5ms:2.5ms"])
def test_trace_db_window_read_and_streamed_fold_match_the_whole_timeline(
        window: str, synth_trace: Path) -> None:
    """hpcprof's traced test database, and a synthetic trace that revisits its contexts:
    reading only the window's samples, and folding line by line, give the fold of the
    whole timeline cut to the window."""
    for db in (V4_TRACE, synth_trace):
        whole = read_timeline(db)
        span = parse_window(window)
        expected = fold(whole, span)
        part = read_timeline(db, window=span)
        assert part.segments.height <= whole.segments.height
        for got in (fold(part, span), read_window(db, window=window)):
            a = got.metrics.select("node", "rank", "thread", "time").filter(pl.col("time") > 0)
            b = expected.metrics.select("node", "rank", "thread", "time").filter(
                pl.col("time") > 0)
            assert a.sort("node", "rank", "thread").equals(b.sort("node", "rank", "thread"))


def test_a_window_past_the_run_is_refused_with_the_runs_span(synth_trace: Path) -> None:
    """Read whole, read for the window, or folded as it streams: a window after the run's
    end holds none of it, and the error says how long the run is."""
    for db in (V4_TRACE, synth_trace):
        whole = read_timeline(db)
        end = (whole.span[1] - whole.origin) / NS_PER_S
        part = read_timeline(db, window=parse_window("5000s:6000s"))
        assert part.span == whole.span
        with pytest.raises(WindowError, match=f"which spans 0:{end:g} s"):
            read_window(db, window="5000s:6000s")


@pytest.mark.parametrize("window", ["100ms:300ms", ":50ms", "900ms:", "1.5ms:1.7ms"])
def test_chrome_window_keeps_only_the_segments_it_needs(window: str) -> None:
    for path in (PYSPY, DATA / "chrome-trace" / "viztracer-threads.json"):
        span = parse_window(window)
        whole, part = read_timeline(path), read_timeline(path, window=span)
        assert part.origin == whole.origin and part.tree.nodes.equals(whole.tree.nodes)
        assert part.segments.height < whole.segments.height
        a, b = fold(part, span).metrics, fold(whole, span).metrics
        assert a.filter(pl.col("time") > 0).equals(b.filter(pl.col("time") > 0))


@pytest.mark.parametrize("window", [":", "1ms:3ms", "5000s:"])
def test_timeline_view_read_line_by_line_is_the_whole_timelines_view(
        window: str, synth_trace: Path) -> None:
    from cctool.ops.timeline import timeline_view, view_of_parts
    from cctool.readers.timelines import read_timeline_parts

    for db in (V4_TRACE, synth_trace):
        span = parse_window(window)
        whole = read_timeline(db)
        if span[0] is not None and span[0] >= whole.span[1] - whole.origin:
            with pytest.raises(WindowError, match="after the run"):
                view_of_parts(read_timeline_parts(db, window=span), span, buckets=40)
            continue
        a = timeline_view(whole, span, buckets=40, depth=3)
        parts = read_timeline_parts(db, window=span if window != ":" else None)
        b = view_of_parts(parts, span, buckets=40, depth=3)
        assert (a.start, a.end) == (b.start, b.end)
        for name in ("locations", "strips", "legend", "top"):
            assert getattr(a, name).equals(getattr(b, name)), name
