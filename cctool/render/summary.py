"""``cctool read``'s summaries of profiles as a :class:`~cctool.render.emit.Report`: lines
for people (``text``) or one JSON document (``json``; a list for several profiles)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cctool.render.emit import Report

# The version of a summary's shape (cctool/schemas/read.json).
READ_SCHEMA = "cctool.read/1"


def summary_report(paths: Sequence[str | None], summaries: Sequence[dict[str, Any]]) -> Report:
    """The summaries (:func:`cctool.ops.summary.summarize`) of the profiles at ``paths``."""

    def text() -> bytes:
        return "".join(summary_text(p, s) + "\n"
                       for p, s in zip(paths, summaries, strict=True)).encode()

    def json() -> bytes:
        import orjson

        tagged = [{"schema": READ_SCHEMA, **s} for s in summaries]
        payload = tagged[0] if len(tagged) == 1 else tagged
        return orjson.dumps(payload, default=str, option=orjson.OPT_INDENT_2) + b"\n"

    return Report(documents={"text": text, "json": json})


def summary_text(path: str | None, s: dict[str, Any]) -> str:
    """One profile's summary as lines: format, sizes, what is missing, metrics, roots."""
    from cctool.render.values import unit_format, with_unit

    lines = [f"{path}:" if path else "profile:"]
    lines.append(f"  format   {s['format']}")
    lines.append(f"  nodes    {s['nodes']}")
    lines.append(f"  rows     {s['rows']}")
    lines.append(f"  ranks    {s['ranks']}   threads {s['threads']}")
    lines += _gap_lines(s.get("metadata") or {})
    lines.append(f"  metrics  {', '.join(s['metrics'])}  (default: {s['default_metric']})")
    if s["derived"]:
        lines.append(f"  derived  {', '.join(s['derived'])}")
    units = s.get("units", {})
    for root in s["roots"]:
        vals = "  ".join(f"{m}={with_unit(root[m], unit_format(units.get(m)))}"
                         for m in s["metrics"])
        lines.append(f"  root     {root['name']}: {vals}")
    if s.get("estimate"):
        lines.append(f"  note     {s['estimate']}")
    return "\n".join(lines)


def _gap_lines(meta: dict[str, Any]) -> list[str]:
    """What a reader found missing (ranks, threads, dumps, empty files), as summary lines."""
    from cctool.readers._rank_gaps import KEY, spans

    gaps = meta.get(KEY) or {}
    records = [gaps] + [{**r, "unit": f"thread {t} part"}
                        for t, r in (meta.get("missing_parts") or {}).items()]
    out = [f"  missing  {r.get('unit', 'rank')}s {spans(r['missing'])} of {r['expected']}: "
           f"totals leave {'it' if len(r['missing']) == 1 else 'them'} out"
           for r in records if r.get("missing")]
    if gaps.get("empty_files"):
        out.append(f"  empty    {', '.join(str(f) for f in gaps['empty_files'])}")
    return out
