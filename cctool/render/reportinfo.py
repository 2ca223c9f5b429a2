"""What every report of a run carries besides its numbers: the warnings of the run and when,
where and how long it ran (JUnit asks for the last three)."""

from __future__ import annotations

from dataclasses import dataclass, field

# Reports list this many offending call paths per condition, worst first, then a count of
# the rest (the JSON report lists them all).
OFFENDERS_SHOWN = 20


@dataclass(frozen=True)
class ReportInfo:
    """Facts of one run for its reports.

    Attributes:
        notes: the warnings the run gave on stderr (one line each), in order.
        timestamp: when the run started, local time ``YYYY-MM-DDTHH:MM:SS``.
        hostname: the machine it ran on.
        elapsed: seconds it took.
    """

    notes: tuple[str, ...] = field(default=())
    timestamp: str = "1970-01-01T00:00:00"
    hostname: str = "localhost"
    elapsed: float = 0.0


NO_INFO = ReportInfo()  # reports made outside a command run: no warnings, no clock
