"""Reader for Linux ``perf script`` text output (``perf record -g`` or ``--call-graph dwarf``).

Each sample is a header line (``comm pid/tid [cpu] time: period event:``; fields depend on
``perf script -F``) followed by its call chain, leaf first, one frame a line
(``address symbol+offset (object)``), and a blank line. The chains become a CCT of
(function, object) frames from the root down; a sample without a chain (no ``-g``) is one
frame, given on its header line.

Metrics: ``samples`` (count) and, per event, the sum of the samples' periods (``cpu-clock``
and ``task-clock`` periods are nanoseconds; others, such as ``cycles``, count the event
itself), as ``perf report`` weighs samples by period. An event is named without its
modifiers (``cpu-clock:pppH``, the event of a plain ``perf record -g``, or ``cpu-clock:u``
is ``cpu-clock``; ``cpu/cycles/u`` is ``cycles``), unless two events of the file would then
share a name; ``metadata["events"]`` keeps the names as perf wrote them. With several
events, each event's sample count is ``samples <event>``, and the default metric is the
first time event (a clock) rather than, say, page faults.

perf writes a blank line after every sample with a call chain; a file that ends inside such
a sample (cut mid-line, or before the blank line) was cut short, and its last sample, whose
call chain is incomplete, is left out with a warning.

``pid`` becomes the rank and ``tid`` the thread, both renumbered 0, 1, ... in sorted order;
``metadata["locations"]`` maps them back (with each thread's ``comm``). Default ``perf
script`` output prints the tid alone: then every thread is a thread of rank 0 and a warning
says how to get the pids (``perf script -F +pid``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "perf-script"
DESCRIPTION = "Linux perf script text (perf record -g / --call-graph dwarf)"

# comm (may hold spaces), pid/tid or tid, [cpu], time:, period, event:, then what follows
# (a sample without a call chain prints its one frame there).
_HEADER = re.compile(
    r"^(?P<comm>\S.*?)\s+(?:(?P<pid>-?\d+)/)?(?P<tid>-?\d+)\s+(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>\S+):(?:\s+(?P<rest>.*))?$"
)
# address, then symbol (possibly "+0x1c"), then "(object)"
_FRAME = re.compile(r"^\s*(?P<addr>[0-9a-fA-F]+)\s+(?P<sym>.*?)\s*(?:\((?P<dso>[^()]*)\))?$")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
# perf script -F +srcline: the frame's source line, indented by spaces under the frame
# ("  /src/app/hot.c:8"; "??:0" or "[kernel.kallsyms][ffff...]" where unknown)
_SRCLINE = re.compile(r"^ +(?P<file>\S.*?):(?P<line>\d+)$")
# With source lines, frames carry the call site and the leaf's line a statement node.
_SRC_COLUMNS = ("name", "module", "type", "file", "line", "callsite")
_TIME_EVENTS = {"cpu-clock": "ns", "task-clock": "ns"}
# event modifiers (perf list: u k h I G H p P S D W e b) after a colon, and a PMU's terms
_MODIFIERS = re.compile(r"^(?P<base>[^:/]+):[ukhIGHpPSDWeb]+$")
_PMU = re.compile(r"^[\w.-]+/(?P<terms>[^/]*)/[ukhIGHpPSDWeb]*$")


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    text = _input.head(path, 8192).decode("utf-8", errors="replace")
    lines = [ln for ln in text.splitlines()[:-1] or text.splitlines()
             if ln.strip() and not ln.startswith("#")]
    if len(lines) < 2 or lines[0].startswith("\t"):
        return False
    m = _HEADER.match(lines[0].lstrip())
    if m is None or m.group("time") is None:
        return False
    nxt = lines[1]
    if nxt.startswith("\t"):  # a call chain follows
        return _FRAME.match(nxt) is not None and "(" in nxt
    one_frame = _FRAME.match(m.group("rest") or "") is not None
    return one_frame and _HEADER.match(nxt.lstrip()) is not None


def read(path: Path) -> GraphFrame:
    """Read ``perf script`` output."""
    tree = StackTree(("name", "module"))
    nodes: list[int] = []
    pids: list[int] = []
    tids: list[int] = []
    periods: list[float] = []
    events: list[int] = []
    event_ids: dict[str, int] = {}
    comms: dict[tuple[int, int], str] = {}
    has_pid = True
    header: re.Match[str] | None = None
    chain: list[tuple[str, str]] = []
    where: list[tuple[str, int] | None] = []  # per frame of chain: its srcline, if printed
    lineno = 0

    def finish() -> None:
        assert header is not None
        frames = chain or _single(header.group("rest") or "")
        if tree.columns == _SRC_COLUMNS:
            nodes.append(tree.path(_with_lines(frames, where)))
        else:
            nodes.append(tree.path(reversed(frames)) if frames
                         else tree.path([("[no stack]", "")]))
        pid = int(header.group("pid")) if header.group("pid") is not None else -1
        tid = int(header.group("tid"))
        pids.append(pid)
        tids.append(tid)
        comms.setdefault((pid, tid), header.group("comm"))
        period = header.group("period")
        periods.append(float(period) if period is not None else 1.0)
        events.append(event_ids.setdefault(header.group("event"), len(event_ids)))

    raw = ""
    with _input.open_text(path) as fh:
        for lineno, raw in enumerate(fh, 1):  # noqa: B007 - lineno names the line in errors
            line = raw.rstrip("\n")
            if not line.strip():
                if not raw.endswith("\n"):  # a frame line cut inside its indent, not a gap
                    break
                if header is not None:
                    finish()
                    header, chain, where = None, [], []
                continue
            if line.startswith("#") and header is None:
                continue
            # Call-chain frames start with a tab; headers may be right-aligned with spaces.
            new = None if line.startswith("\t") else _HEADER.match(line.lstrip())
            if (new is None and line[:1] == " " and len(where) == len(chain) - 1
                    and (_SRCLINE.match(line) or not _FRAME.match(line))):
                if not nodes and tree.columns != _SRC_COLUMNS:  # source lines from the start
                    tree = StackTree(_SRC_COLUMNS)
                src = _SRCLINE.match(line)
                where.append((src.group("file"), int(src.group("line"))) if src else None)
                continue
            if new is None and line[:1] in ("\t", " "):
                if header is None:
                    raise ReaderError(path, f"line {lineno}: a frame outside a sample", NAME)
                m = _FRAME.match(line)
                if m is None:
                    raise ReaderError(path, f"line {lineno}: not a call-chain frame", NAME)
                chain.append(_frame(m))
                if len(where) < len(chain) - 1:  # the previous frame had no source line
                    where.append(None)
                continue
            if header is not None:  # a sample without a chain, no blank line after it
                finish()
                chain, where = [], []
            header = new
            if header is None:
                raise ReaderError(path, f"line {lineno}: not a perf script sample header "
                                  "('comm pid/tid time: period event:')", NAME)
            has_pid = has_pid and header.group("pid") is not None
    if header is not None:
        if chain or not raw.endswith("\n"):
            warn(f"{path}: the file ends inside a sample (line {lineno} "
                 f"{raw.strip()[:40]!r}): it was cut short; its last sample is left out")
        else:
            finish()
    if not nodes:
        raise ReaderError(path, "no samples", fmt=NAME)
    return _frame_of(path, tree, nodes, pids, tids, periods, events, list(event_ids), comms,
                     has_pid)


def _frame(m: re.Match[str]) -> tuple[str, str]:
    sym = _OFFSET.sub("", m.group("sym")) or "[unknown]"
    return sym, m.group("dso") or ""


def _with_lines(frames: list[tuple[str, str]],
                where: list[tuple[str, int] | None]) -> list[tuple[Any, ...]]:
    """Keys root first for a chain with source lines: each function at the line its caller
    called it from (the caller's printed line, that of its return address), and under the
    leaf the statement the sample hit."""
    if not frames:
        return [("[no stack]", "", "function", None, None, None)]
    lines = [*where, *([None] * (len(frames) - len(where)))]
    keys: list[tuple[Any, ...]] = []
    for k in range(len(frames) - 1, -1, -1):  # root first
        caller = lines[k + 1] if k + 1 < len(frames) else None
        keys.append((*frames[k], "function", None, None, caller[1] if caller else None))
    leaf = lines[0]
    if leaf is not None:
        keys.append((f"{leaf[0].rsplit('/', 1)[-1]}:{leaf[1]}", frames[0][1], "statement",
                     leaf[0], leaf[1], None))
    return keys


def _single(rest: str) -> list[tuple[str, str]]:
    m = _FRAME.match(rest) if rest.strip() else None
    return [_frame(m)] if m is not None else []


def _frame_of(path: Path, tree: StackTree, nodes: list[int], pids: list[int], tids: list[int],
              periods: list[float], events: list[int], names: list[str],
              comms: dict[tuple[int, int], str], has_pid: bool) -> GraphFrame:
    if not has_pid:
        warn(f"{path}: the samples name their thread but not their process; all threads "
             "are read as threads of rank 0 (perf script -F +pid prints the pids)")
        pids = [-1] * len(pids)
    rank_of = {p: r for r, p in enumerate(sorted(set(pids)))}
    locations: list[dict[str, Any]] = []
    loc_of: dict[tuple[int, int], tuple[int, int]] = {}
    for pid in sorted(rank_of):
        for k, tid in enumerate(sorted({t for p, t in zip(pids, tids, strict=True)
                                        if p == pid})):
            loc_of[(pid, tid)] = (rank_of[pid], k)
            comm = comms.get((pid, tid)) or comms.get((-1, tid))
            locations.append({"rank": rank_of[pid], "thread": k,
                              "pid": None if pid < 0 else pid, "tid": tid, "comm": comm})
    rank = np.fromiter((loc_of[(p, t)][0] for p, t in zip(pids, tids, strict=True)),
                       dtype=np.int32, count=len(pids))
    thread = np.fromiter((loc_of[(p, t)][1] for p, t in zip(pids, tids, strict=True)),
                         dtype=np.int32, count=len(pids))
    ev = np.asarray(events)
    weight = np.asarray(periods, dtype=np.float64)
    values: dict[str, np.ndarray] = {}
    units: dict[str, str] = {}
    metrics = event_metrics(names)
    for k, name in enumerate(metrics):
        here = ev == k
        values[name] = np.where(here, weight, 0.0)
        units[name] = _TIME_EVENTS.get(base_event(name), name)
        label = "samples" if len(names) == 1 else f"samples {name}"
        values[label] = here.astype(np.float64)
        units[label] = "count"
    timed = [m for m in metrics if base_event(m) in _TIME_EVENTS]
    metadata = {"format": NAME, "path": str(path), "locations": locations, "events": names}
    return build(tree, nodes, values, units=units, metadata=metadata, rank=rank, thread=thread,
                 default_metric=(timed or metrics)[0])


def base_event(event: str) -> str:
    """The event without its modifiers: ``cpu-clock:pppH`` -> ``cpu-clock``,
    ``cpu/cycles/u`` -> ``cycles``; a tracepoint (``sched:sched_switch``) is left whole."""
    m = _MODIFIERS.match(event)
    if m is not None:
        return m.group("base")
    m = _PMU.match(event)
    if m is not None:
        terms = [t for t in m.group("terms").split(",") if t and "=" not in t]
        if len(terms) == 1:
            return terms[0]
    return event


def event_metrics(events: list[str]) -> list[str]:
    """Metric names of ``events``: their base names, unless two would coincide."""
    bases = [base_event(e) for e in events]
    return bases if len(set(bases)) == len(bases) else list(events)
