"""The stretches of a Chrome trace in which each call path was the innermost open event,
as the reader's nesting pass finds them (see :func:`cctool.readers.traces.chrome._nest`)."""

from __future__ import annotations

from array import array

from cctool.model.timeline import Window


class Segments:
    """Stretches in which a node was the innermost open interval, as columns: start, end
    (us), node (StackTree id), location (index into ``metadata["locations"]``). With
    ``window`` (ns from the trace's first event, which :func:`_read` sets as ``origin``),
    only those that overlap it are kept: a window of a large trace holds what it shows."""

    def __init__(self, window: Window | None = None) -> None:
        self.start, self.end, self.node, self.where = array("d"), array("d"), array("q"), \
            array("q")
        self.window = window
        self.lo, self.hi = -float("inf"), float("inf")
        self.last = -float("inf")  # the latest end of any stretch, kept or not (us)

    def set_origin(self, origin_us: float) -> None:
        # A microsecond of margin: the timeline rounds these float us to ns, and its fold
        # cuts the segments at the window exactly.
        lo, hi = self.window or (None, None)
        if lo is not None:
            self.lo = origin_us + lo / 1000.0 - 1.0
        if hi is not None:
            self.hi = origin_us + hi / 1000.0 + 1.0

    def add(self, start: float, end: float, node: int, where: int) -> None:
        self.last = max(self.last, end)
        if end > self.lo and start < self.hi:
            self.start.append(start)
            self.end.append(end)
            self.node.append(node)
            self.where.append(where)
