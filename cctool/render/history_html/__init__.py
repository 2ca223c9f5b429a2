"""The history page (``cctool history show --html``): one self-contained HTML file.

A list of the call paths ``history show`` selects (the same ``--path``, ``--metric``,
``--last`` and ``--top``), each with a sparkline, its last value and the last run against
its median; the selected path's series as a trend chart (runs in recorded order, the change
points and trends :func:`cctool.history.check.verdicts` finds marked); and, for the run a
point belongs to, its metadata and the call-path tree of the shown paths with that run's
values. The series go in as JSON; nothing is fetched from the network.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cctool.model.columns import INC_SUFFIX
from cctool.model.metrics import describe
from cctool.model.paths import PATH_TEXT
from cctool.model.shares import share_refusal
from cctool.render.history import show_rows, shown_rows
from cctool.render.html._payload import to_script_json
from cctool.render.values import rules_script

if TYPE_CHECKING:
    from cctool.history.check import CheckResult
    from cctool.history.series import Series

__all__ = ["RunTotals", "history_page", "page_data", "run_totals"]

_SLOT = re.compile(r"\{\{(TITLE|CSS|JS|DATA)\}\}")
_RUN_COLUMNS = ("run", "commit", "branch", "date", "machine")


def history_page(s: Series, top: int | None = 50, marks: CheckResult | None = None,
                 title: str | None = None, marks_from: int = 0,
                 totals: RunTotals | None = None) -> str:
    """The page of the series ``s`` (its ``top`` paths of largest median; ``marks``: the
    check of its runs from ``marks_from`` on, whose change points and trends are drawn;
    ``totals``: each run's total, the base of "% of run", :func:`run_totals`) as one HTML
    document."""
    data = page_data(s, top, marks, title, marks_from, totals)
    slots = {"TITLE": html.escape(str(data["title"])), "CSS": _asset("history.css"),
             "JS": rules_script() + "\n" + _asset("history.js"), "DATA": to_script_json(data)}
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("page.html"))


@dataclass(frozen=True, eq=False)
class RunTotals:
    """Each run's total of the metric, the base of the page's "% of run": ``values`` (one
    per run, None when the metric's values are not parts of a total) and what they are."""

    values: np.ndarray | None
    what: str


def run_totals(whole: Series, parents: pl.DataFrame) -> RunTotals:
    """Each run's total of ``whole``'s metric (a series of every recorded path, not only the
    shown ones; ``parents``: ``key`` and ``parent`` of the store's paths): for an inclusive
    metric the sum over the root paths, for an exclusive one over every path, never a sum
    over nested paths. A metric whose values are not parts of a total (a ratio, a
    percentage: :mod:`cctool.model.shares`) has none."""
    why = share_refusal(describe(whole.metric, whole.unit))
    if why is not None:
        return RunTotals(None, why)
    values = np.nan_to_num(whole.values, nan=0.0)  # a path a run lacks adds nothing
    if not whole.metric.endswith(INC_SUFFIX):
        return RunTotals(values.sum(axis=0), f"the sum over its {len(values)} call paths")
    up = whole.paths.select("key").join(parents.select("key", "parent"), on="key",
                                        how="left", maintain_order="left")["parent"]
    root = ~up.is_in(parents["key"].implode()).fill_null(False).to_numpy()
    return RunTotals(values[root].sum(axis=0),
                     f"the sum over its {int(root.sum())} root call path"
                     f"{'s' * (int(root.sum()) != 1)}")


def page_data(s: Series, top: int | None = 50, marks: CheckResult | None = None,
              title: str | None = None, marks_from: int = 0,
              totals: RunTotals | None = None) -> dict[str, Any]:
    """The JSON the page embeds: runs (metadata columns), the shown paths (path order, with
    the nearest shown ancestor as ``parent``), their series, and per run the run's total of
    the metric (``totals``, the base of "% of run"; null, and no % column, when its values
    are not parts of a total)."""
    rows = show_rows(s)
    keep = shown_rows(rows, top)
    shown = rows[keep]
    paths = shown["path"].to_list()
    names = s.paths["name"].gather(keep).to_list()
    at = {p: i for i, p in enumerate(paths)}
    parent = [_shown_ancestor(p, at) for p in paths]
    runs = {c: (s.runs[c].cast(str).to_list() if c in s.runs.columns else [None] * s.runs.height)
            for c in _RUN_COLUMNS}
    runs["keys"] = [_keys(k) for k in (s.runs["keys"].to_list() if "keys" in s.runs.columns
                                       else [None] * s.runs.height)]
    steps: dict[str, list[int]] = {}
    trends: dict[str, float] = {}
    step_change: dict[str, float] = {}
    if marks is not None:
        for c in marks.changes.iter_rows(named=True):
            steps.setdefault(c["path"], []).append(marks_from + int(c["at"]))
        for r in marks.table.filter(marks.table["confirmed"]).iter_rows(named=True):
            if r["kind"] == "trend":
                trends[r["path"]] = float(r["change"])
            elif r["kind"] == "step":
                step_change[r["path"]] = float(r["change"])
    return {
        "format": 1,
        "title": title or f"history of {s.metric}",
        "metric": s.metric,
        "unit": s.unit,
        "selected": len(s.values),
        "hidden": len(s.values) - len(paths),
        "runs": runs,
        "total": totals.values if totals is not None else None,
        "totalOf": (totals.what if totals is not None and totals.values is not None else None),
        "noShare": (totals.what if totals is not None and totals.values is None
                    else None if totals is not None else "no run totals were given"),
        "paths": {
            "path": paths, "name": names, "parent": parent,
            "runs": shown["runs"].to_list(), "last": shown["last"].to_numpy(),
            "median": shown["median"].to_numpy(),
            "change": shown["last vs median"].to_numpy(),
            "series": s.values[keep],
            "steps": [steps.get(p, []) for p in paths],
            "step_change": [step_change.get(p) for p in paths],
            "trend": [trends.get(p) for p in paths],
        },
        "checked": None if marks is None else {"from": marks_from, "runs": marks.runs,
                                               "notes": marks.notes},
    }


def _shown_ancestor(path: str, at: dict[str, int]) -> int:
    """The position of the longest proper prefix of ``path`` (at a frame) that is shown."""
    head = path
    while PATH_TEXT in head:
        head = head.rsplit(PATH_TEXT, 1)[0]
        if head in at:
            return at[head]
    return -1


def _keys(raw: object) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        got = json.loads(str(raw))
    except ValueError:
        return {"keys": str(raw)}
    return got if isinstance(got, dict) else {"keys": got}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")
