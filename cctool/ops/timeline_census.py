"""The timeline page's first pass over a trace: its lanes (the locations with segments and
how many), the run's origin and span, and the messages and counter samples between lanes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import polars as pl

from cctool.model.timeline import LaneCount, TimelineParts
from cctool.ops.timeline import locations


@dataclass(frozen=True)
class Census:
    """The first pass: every location with segments (``rank``, ``thread``, ``label``,
    ``segments``: the non-empty ones), the run's origin, its span in ns, and the messages
    and counter samples between its lanes."""

    lanes: pl.DataFrame
    origin: int
    span: int
    messages: pl.DataFrame
    samples: pl.DataFrame
    metric_modes: dict[str, str]


def take_census(parts: TimelineParts) -> Census:
    """The first pass over ``parts`` (see :class:`Census`)."""
    tables, last, origin = [], 0, parts.span[0]
    messages, samples = [], []
    modes: dict[str, str] = {}
    counted = _counted(parts)
    if counted is not None:  # a location at a time, no table per part
        rows = []
        for count in counted:
            rows.append((count.rank, count.thread, count.segments))
            if count.segments:
                last = max(last, count.last - origin)
        tables.append(pl.DataFrame(rows, schema={"rank": pl.Int32, "thread": pl.Int32,
                                                 "segments": pl.UInt32}, orient="row"))
    for part in [] if counted is not None else parts.parts:
        seg = part.segments
        origin = part.origin
        sent = part.metadata.get("messages")
        if isinstance(sent, pl.DataFrame) and sent.height:
            messages.append(sent.with_columns(pl.col("send", "recv") - part.origin))
        taken = part.metadata.get("metric_samples")
        if isinstance(taken, pl.DataFrame) and taken.height:
            samples.append(taken.with_columns(pl.col("time") - part.origin))
            modes.update(part.metadata.get("metric_modes", {}))
        tables.append(_counts(seg))
        end = seg["end"].to_numpy()
        ran = end > seg["start"].to_numpy()
        if ran.any():
            last = max(last, int(end[ran].max()) - part.origin)
        del seg, part
    per = (pl.concat(tables).group_by("rank", "thread").agg(pl.col("segments").sum())
           if tables else pl.DataFrame(schema={"rank": pl.Int32, "thread": pl.Int32,
                                               "segments": pl.UInt32}))
    per = per.sort("rank", "thread")
    lanes = locations(replace(parts, locations=per.select("rank", "thread")))
    lanes = lanes.with_columns(segments=per["segments"].cast(pl.Int64))
    span = max(last, 1)
    return Census(lanes=lanes, origin=origin, span=span,
                   messages=_lane_messages(messages, lanes, span),
                   samples=_lane_samples(samples, lanes), metric_modes=modes)


def _counted(parts: TimelineParts) -> Iterator[LaneCount] | None:
    """Each location's count where the reader counts, or has lines as arrays."""
    if parts.counts is not None:
        return parts.counts
    if parts.lines is None:
        return None
    return (LaneCount(line.rank, line.thread, int(ran.sum()),
                      int(line.end[ran].max()) if ran.any() else 0)
            for line in parts.lines for ran in [line.end > line.start])


def _counts(seg: pl.DataFrame) -> pl.DataFrame:
    """``rank``, ``thread`` and the number of non-empty ``segments`` of each location of
    ``seg`` (one location, a trace.db line, counted in NumPy)."""
    rank, thread = seg["rank"], seg["thread"]
    if seg.height and rank.n_unique() == 1 and thread.n_unique() == 1:
        ran = int((seg["end"].to_numpy() > seg["start"].to_numpy()).sum())
        return pl.DataFrame({"rank": rank[:1], "thread": thread[:1],
                             "segments": pl.Series([ran], dtype=pl.UInt32)})
    return seg.group_by("rank", "thread").agg(
        (pl.col("end") > pl.col("start")).sum().alias("segments"))


def _lane_samples(tables: list[pl.DataFrame], lanes: pl.DataFrame) -> pl.DataFrame:
    """The counter samples of ``lanes``: ``lane``, ``time``, ``metric``, ``value``."""
    out = pl.DataFrame(schema={"lane": pl.Int64, "time": pl.Int64, "metric": pl.String,
                               "value": pl.Float64})
    if not tables:
        return out
    key = lanes.select(pl.col("rank").cast(pl.Int64), pl.col("thread").cast(pl.Int64),
                       pl.int_range(pl.len(), dtype=pl.Int64).alias("lane"))
    return (pl.concat(tables).join(key, on=["rank", "thread"])
            .select("lane", "time", "metric", "value").sort("lane", "metric", "time",
                                                            maintain_order=True))


def _lane_messages(tables: list[pl.DataFrame], lanes: pl.DataFrame, span: int) -> pl.DataFrame:
    """The messages between two of ``lanes`` that overlap the run's [0, span) ns."""
    out = pl.DataFrame(schema={"from": pl.Int64, "to": pl.Int64, "send": pl.Int64,
                               "recv": pl.Int64, "bytes": pl.Int64})
    if not tables:
        return out
    key = lanes.select(pl.col("rank").cast(pl.Int64), pl.col("thread").cast(pl.Int64),
                       pl.int_range(pl.len(), dtype=pl.Int64).alias("lane"))
    msgs = pl.concat(tables).filter((pl.col("recv") >= 0) & (pl.col("send") < span))
    for side in ("send", "recv"):
        msgs = msgs.join(key.rename({"rank": f"{side}_rank", "thread": f"{side}_thread",
                                     "lane": "from" if side == "send" else "to"}),
                         on=[f"{side}_rank", f"{side}_thread"])
    return msgs.select("from", "to", "send", "recv", pl.col("bytes").cast(pl.Int64)).sort(
        "send").cast(out.schema)
