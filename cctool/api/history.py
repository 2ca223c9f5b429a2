"""The calls on a performance history store: add, show, its page, check."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cctool.api._common import _options

if TYPE_CHECKING:
    import polars as pl

    from cctool.history.check import CheckResult
    from cctool.history.series import Series
    from cctool.options import ReadOptions
    from cctool.render.emit import Report
    from cctool.render.reportinfo import ReportInfo


def history_add(store: str | os.PathLike[str], paths: Sequence[str], *,
                keys: dict[str, str] | None = None, metrics: Sequence[str] = (),
                agg: str = "mean", fmt: str | None = None,
                options: ReadOptions | None = None) -> str:
    """``cctool history add``: record the trials ``paths`` (profiles or folders of them) as
    one run of ``store`` with metadata ``keys`` (commit, branch, date, machine, ...); return
    the run's id. ``metrics`` default to each profile's default metric; ``options``: how
    each trial is read (as :func:`read` takes them)."""
    from cctool.ensemble import run_paths
    from cctool.history.record import record
    from cctool.history.store import append

    rec = record(run_paths(list(paths), fmt), tuple(metrics) or (None,), fmt, agg, keys,
                 _options(options, None))
    return append(store, rec)


def history_show(store: str | os.PathLike[str], *, path: str | None = None,
                 metric: str | None = None, last: int | None = None) -> Series:
    """``cctool history show``: the series of ``metric`` per call path (paths whose
    ``/``-joined names match the regular expression ``path``) over the ``last`` runs."""
    from cctool.history.series import load

    return load(store, metric, path, last)


def history_page(store: str | os.PathLike[str], *, path: str | None = None,
                 metric: str | None = None, last: int | None = None, top: int | None = 50,
                 title: str | None = None, marks: bool = True) -> str:
    """``cctool history show --html``: the interactive page of :func:`history_show`'s series
    (the ``top`` call paths of largest median) as one self-contained HTML document; with
    ``marks``, the change points and trends ``history check`` finds in the series (its
    newest run against the rest, default options) are drawn on the charts."""
    from cctool.history import store as history_store
    from cctool.history.check import CheckOptions, verdicts
    from cctool.history.series import Series, load
    from cctool.render.history_html import history_page as page
    from cctool.render.history_html import run_totals

    series = load(store, metric, path, last)
    whole = series if path is None else load(store, series.metric, None, last)
    totals = run_totals(whole, history_store.paths(store, whole.runs["tree"].unique().to_list()))
    found, since = None, 0
    if marks:  # over the runs a check looks at: the last `window`
        opts = CheckOptions(metric=series.metric)
        since = max(series.runs.height - opts.window, 0)
        recent = Series(series.runs.tail(opts.window), series.paths,
                        series.values[:, since:], series.metric, series.unit)
        found = verdicts(recent, opts)
    folder = os.path.basename(os.fspath(store).rstrip("/")) or "history"
    name = title or f"{folder}: {series.metric}"
    return page(series, top, found, name, since, totals)


def history_report(store: str | os.PathLike[str], *, path: str | None = None,
                   metric: str | None = None, last: int | None = None, top: int | None = 50,
                   precision: int = 4, width: int = 120) -> Report:
    """What ``cctool history show`` writes: :func:`history_show`'s series as a table for
    people (the ``top`` paths of largest median, ``width`` wide), a row per call path (CSV;
    JSON with each path's series), the page of :func:`history_page`, and the trend figure
    of the heaviest paths."""
    from cctool.render.emit import Report
    from cctool.render.history import show_rows, show_table
    from cctool.render.plot import history_plot
    from cctool.render.records import to_csv, to_json_records

    series = history_show(store, path=path, metric=metric, last=last)

    def as_json() -> bytes:
        import polars as pl

        rows = show_rows(series).with_columns(pl.Series("series", series.values.tolist()))
        return to_json_records(rows, "history show")

    return Report(
        text=lambda _: show_table(series, precision, width, top),
        documents={"csv": lambda: to_csv(show_rows(series)).encode(), "json": as_json,
                   "html": lambda: history_page(store, path=path, metric=metric, last=last,
                                                top=top).encode()},
        figure=lambda file: history_plot(series, file))


def history_check(store: str | os.PathLike[str], paths: Sequence[str], *,
                  metric: str | None = None, agg: str = "mean", fmt: str | None = None,
                  keys: dict[str, str] | None = None, last: int = 256, alpha: float = 0.05,
                  min_change: float = 0.01, min_weight: float = 1e-4,
                  recent: int = 20, options: ReadOptions | None = None) -> CheckResult:
    """``cctool history check``: the trials ``paths`` as a new run (none: the newest recorded
    run) against ``store``: per call path, the new run against its recorded distribution,
    change points and trends over the ``last`` runs (the new one included; see
    :mod:`cctool.history.check`)."""
    from cctool.ensemble import run_paths
    from cctool.history.check import CheckOptions, check
    from cctool.history.record import record
    from cctool.history.series import pick_metric
    from cctool.history.store import index

    name = pick_metric(index(store), metric) if metric is None else metric
    rec = record(run_paths(list(paths), fmt), (name,), fmt, agg, keys,
                 _options(options, None)) if paths else None
    opts = CheckOptions(metric=name, window=last, alpha=alpha, min_change=min_change,
                        min_weight=min_weight, recent=recent)
    return check(store, rec, opts)


def history_check_report(store: str | os.PathLike[str], paths: Sequence[str], *,
                         metric: str | None = None, agg: str = "mean", fmt: str | None = None,
                         keys: dict[str, str] | None = None, last: int = 256,
                         alpha: float = 0.05, min_change: float = 0.01,
                         min_weight: float = 1e-4, recent: int = 20,
                         options: ReadOptions | None = None, top: int = 20,
                         precision: int = 4, width: int = 120,
                         info: Callable[[Sequence[str]], ReportInfo] | None = None
                         ) -> tuple[Report, CheckResult]:
    """What ``cctool history check`` writes, and the check itself: :func:`history_check`
    (same arguments) as a table for people (``top`` call paths
    besides the confirmed changes, ``width`` wide), Markdown and JUnit reports (``info``
    gives the run's facts for them from the check's notes), and a row per call path."""
    from cctool.render import history as render
    from cctool.render.emit import Report
    from cctool.render.records import to_csv, to_json_records
    from cctool.render.reportinfo import ReportInfo

    result = history_check(store, paths, metric=metric, agg=agg, fmt=fmt, keys=keys,
                           last=last, alpha=alpha, min_change=min_change,
                           min_weight=min_weight, recent=recent, options=options)
    facts = info or (lambda notes: ReportInfo(notes=tuple(notes)))

    def rows() -> pl.DataFrame:
        return render.check_rows(result)

    report = Report(
        text=lambda _: render.check_table(result, top, precision, width),
        documents={
            "markdown": lambda: render.markdown(result, top, precision,
                                                facts(result.notes)).encode(),
            "junit": lambda: render.junit(result, precision, facts(result.notes)),
            "csv": lambda: to_csv(rows()).encode(),
            "json": lambda: to_json_records(rows(), "history check")})
    return report, result
