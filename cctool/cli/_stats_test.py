"""``cctool stats``: the usage errors of its flags (--across ranks, --test, --correlate),
each naming the flags it is about."""

from __future__ import annotations

import click


def check_flags(profiles: tuple[str, ...], metric: str | None, across: str,
                group_by: str | None, how: tuple[str | None, str | None, float | None, float],
                windowed: bool, to: str, boxplot: bool = False) -> tuple[str, str] | None:
    """Refuse flags that do not go together; the two metrics of ``--correlate M1,M2``
    (None without it). ``how`` is (--test, --correlate, --ci, --threshold)."""
    test, correlate, ci, threshold = how
    if boxplot and (across == "ranks" or test is not None or correlate is not None):
        raise click.UsageError("--boxplot is over runs: not with --across ranks, --test or "
                               "--correlate")
    if across == "ranks":
        if ci is not None or test is not None or correlate is not None:
            raise click.UsageError("--ci, --test and --correlate are over runs, not "
                                   "--across ranks")
        if windowed:
            raise click.UsageError("--across ranks reads a database in parts; drop --window")
        if len(profiles) != 1:
            raise click.UsageError("--across ranks takes one database")
        if group_by is not None:
            raise click.UsageError("--group-by groups runs; it does not apply to --across ranks")
    elif to == "cct":
        raise click.UsageError("--to cct saves the aggregate of one database: use --across ranks")
    if test is None and correlate is None:
        return None
    if threshold > 0:
        raise click.UsageError("--threshold prunes the statistics table, not --test or "
                               "--correlate")
    if test is not None and correlate is not None:
        raise click.UsageError("--test and --correlate are separate questions: give one")
    if to == "cct":
        raise click.UsageError("--test and --correlate write text, json or csv")
    if correlate is None:
        if group_by is None and len(profiles) != 2:
            raise click.UsageError("--test compares two groups: give --group-by KEY, or two "
                                   "folders of runs")
        return None
    pair = [m.strip() for m in correlate.split(",")]
    if len(pair) != 2 or not all(pair):
        raise click.UsageError("--correlate takes two metrics: M1,M2")
    if group_by is not None or metric is not None or ci is not None:
        raise click.UsageError("--correlate names its metrics and takes no --group-by "
                               "or --ci")
    return pair[0], pair[1]
