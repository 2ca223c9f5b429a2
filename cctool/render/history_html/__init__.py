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
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from cctool.render.history import show_rows, shown_rows
from cctool.render.html._payload import to_script_json
from cctool.render.values import rules_script

if TYPE_CHECKING:
    from cctool.history.check import CheckResult
    from cctool.history.series import Series

__all__ = ["history_page", "page_data"]

_SLOT = re.compile(r"\{\{(TITLE|CSS|JS|DATA)\}\}")
_RUN_COLUMNS = ("run", "commit", "branch", "date", "machine")


def history_page(s: Series, top: int | None = 50, marks: CheckResult | None = None,
                 title: str | None = None, marks_from: int = 0) -> str:
    """The page of the series ``s`` (its ``top`` paths of largest median; ``marks``: the
    check of its runs from ``marks_from`` on, whose change points and trends are drawn) as
    one HTML document."""
    data = page_data(s, top, marks, title, marks_from)
    slots = {"TITLE": html.escape(str(data["title"])), "CSS": _asset("history.css"),
             "JS": rules_script() + "\n" + _asset("history.js"), "DATA": to_script_json(data)}
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("page.html"))


def page_data(s: Series, top: int | None = 50, marks: CheckResult | None = None,
              title: str | None = None, marks_from: int = 0) -> dict[str, Any]:
    """The JSON the page embeds: runs (metadata columns), the shown paths (path order, with
    the nearest shown ancestor as ``parent``), their series, and per run the sum of the
    metric over every selected path (the tree's 100 %)."""
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
    total = np.nansum(s.values, axis=0) if len(s.values) else np.zeros(s.runs.height)
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
        "total": total,
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
    """The position of the longest proper prefix of ``path`` (at a ``/``) that is shown."""
    head = path
    while "/" in head:
        head = head.rsplit("/", 1)[0]
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
