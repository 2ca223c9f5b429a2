"""Machine-readable tables: JSON (records in a versioned envelope) and CSV."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame


def with_units(df: pl.DataFrame, units: Mapping[str, str | None]) -> pl.DataFrame:
    """Name each value column's unit in its header, ``time (inc) [s]``: records carry values
    in base units (seconds, bytes), and say which."""
    names = {c: f"{c} [{u}]" for c, u in units.items() if c in df.columns and u}
    return df.rename(names) if names else df


# The version of the records envelope (cctool/schemas/records.json).
RECORDS_SCHEMA = "cctool.records/1"


def to_json_records(df: pl.DataFrame, command: str | None = None) -> bytes:
    """The rows of ``df`` as ``{"schema", "command", "columns", "rows"}``: the version of the
    shape, the command that wrote it, the column names in order, and one object per row
    (NaN and infinities as null)."""
    payload = {"schema": RECORDS_SCHEMA, "command": command, "columns": df.columns,
               "rows": finite_records(df)}
    return orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n"


def to_json(df: pl.DataFrame) -> bytes:
    """A JSON list of records, one per row; NaN and infinities become null (JSON has none)."""
    return orjson.dumps(finite_records(df), option=orjson.OPT_INDENT_2) + b"\n"


def finite_records(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts, NaN and infinities as None."""
    floats = [c for c, t in df.schema.items() if t.is_float()]
    clean = df.with_columns(
        [pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(None).alias(c) for c in floats]
    )
    return clean.to_dicts()


def to_csv(df: pl.DataFrame) -> str:
    """CSV with a header row; floats at full precision."""
    return df.write_csv()


def clean_float(value: float | None) -> float | None:
    """A float for JSON: None for NaN and infinities."""
    return value if value is not None and math.isfinite(value) else None


def metric_units(gf: GraphFrame, columns: Sequence[str],
                 agg: str = "sum") -> dict[str, str | None]:
    """{column: unit} of the metric columns among ``columns`` (for record headers), their
    locations combined by ``agg`` (a cv has no unit)."""
    from cctool.model.metrics import aggregated

    out: dict[str, str | None] = {}
    for c in columns:
        if c in gf.metric_columns or c in gf.metric_info:
            unit = aggregated(gf.metric(c), agg).unit
            out[c] = None if unit in ("unknown", "") else unit
    return out
