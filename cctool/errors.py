"""The one exception hierarchy of cctool.

Library code raises these; the CLI turns every :class:`CctoolError` into a one-line
``Error: ...`` on stderr and exit code 2 (bad input or usage).
"""

from __future__ import annotations

import warnings


class CctoolError(Exception):
    """Base class of every error cctool reports to a user."""


class UnknownFormatError(CctoolError):
    """No reader recognises the input, or ``--from`` names no reader."""


class ReaderError(CctoolError):
    """A reader recognised its format but the input is broken or unsupported."""

    def __init__(self, path: object, problem: str, fmt: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.fmt = fmt
        prefix = f"{fmt}: " if fmt else ""
        super().__init__(f"{prefix}{self.path}: {problem}")


class SavedFormatError(ReaderError):
    """A ``.cct`` file is truncated, of another version, or not a ``.cct`` file."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(path, problem, fmt="cct")


class MetricNotFoundError(CctoolError):
    """A metric named by the user is not in the profile."""

    def __init__(self, metric: str, available: list[str] | tuple[str, ...]) -> None:
        self.metric = metric
        self.available = list(available)
        super().__init__(
            f"unknown metric {metric!r}; available: {', '.join(self.available) or '(none)'}"
        )


class NodeNotFoundError(CctoolError):
    """A node named by the user (by name or id) is not in the profile."""


class QueryError(CctoolError):
    """A malformed call-path query."""


class OptionsError(CctoolError):
    """Arguments of a call that do not go together; the message names the command's options,
    and the command line shows it as a usage error."""


class IncompatibleProfilesError(CctoolError):
    """Two profiles cannot be combined as asked."""


class NoTimelineError(CctoolError):
    """A profile without the timestamps a timeline (or a window of the run) needs."""


class WindowError(CctoolError):
    """A window of a run that holds none of it, or whose bounds are no times of a run."""


class DerivedMetricError(CctoolError):
    """A derived metric's definition (``NAME = EXPR``) that does not fit the profile it is
    added to (an unknown column, a name taken); ``definition`` and ``reason`` let a caller
    name where the definition came from."""

    def __init__(self, definition: str, reason: str) -> None:
        super().__init__(f"derived metric {definition!r}: {reason}")
        self.definition = definition
        self.reason = reason

    def __reduce__(self) -> tuple[type[DerivedMetricError], tuple[str, str]]:
        return type(self), (self.definition, self.reason)  # from a worker process intact


class InvalidGraphError(CctoolError):
    """A GraphFrame breaks one of its invariants (see ``GraphFrame.validate``)."""


class CctoolWarning(UserWarning):
    """Something a user must know about a result: data missing, profiles that do not match,
    a unit or aggregation cctool chose. The CLI prints each once as ``warning: ...`` on
    stderr; library users see a Python warning."""


class CctoolNote(CctoolWarning):
    """A choice cctool made that the user should see (which column a metric alias named);
    the CLI prints it as ``note: ...``."""


def warn(message: str) -> None:
    """Tell the user ``message`` (one line) without stopping: library code never prints."""
    warnings.warn(message, CctoolWarning, stacklevel=2)


def note(message: str) -> None:
    """Tell the user what cctool chose (one line), as :func:`warn` does."""
    warnings.warn(message, CctoolNote, stacklevel=2)
