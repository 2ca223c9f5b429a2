"""Reader for Ascent's filter timings (``ascent_filter_times.csv``; with MPI one file per
rank, ``ascent_filter_times_<rank>.csv``).

Ascent (LLNL's in situ visualization library) writes them when opened with the runtime
option ``timings: "true"``: each ``execute`` runs the flow graph Ascent built from the
actions (``source``, ``verify``, pipeline filters such as ``pl1_f1_contour``, plots and
scenes such as ``exec_s1``), and flow's ``Workspace::execute`` appends one line per filter,
``<cycle> <filter> <seconds>``, then ``<cycle> [total] <seconds>``, the whole execution
(``src/libs/flow/flow_workspace.cpp``; the seconds are flow::Timer's, written with
``std::fixed``). ``AscentRuntime::Cleanup`` writes the lines at ``close`` (appending to the
file in Ascent 0.9).

The profile: ``[total]`` is the root, every filter a child of it; ``time`` (s) summed over
the executions, the root's own time what the filters leave of each total (flow's
bookkeeping between them); ``calls`` the executions a node ran in. Filters after the last
``[total]`` line (an execution cut short) are read without a total, and said. The rank is the
number in the file's name (0 without one); a folder of one run's per-rank files is read as
one profile of those ranks (:mod:`cctool.readers._parts`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cctool.errors import ReaderError, warn
from cctool.model.frame import GraphFrame
from cctool.readers import _input
from cctool.readers._stacks import StackTree, build

NAME = "ascent"
DESCRIPTION = "Ascent's filter timings (ascent_filter_times[_<rank>].csv)"

_LINE = re.compile(r"^(\d+) (\S.*) (\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)$")
TOTAL = "[total]"
RANK_FILE = re.compile(r"^ascent_filter_times_(\d+)\.csv$")
# flow writes 6 decimals: a total may fall short of its filters' sum by their rounding
_ROUNDING = 5e-7


def sniff(path: Path) -> bool:
    if not path.is_file():
        return False
    head = _input.head(path, 4096)
    lines = head.decode("utf-8", errors="replace").splitlines()
    if len(head) == 4096:
        lines = lines[:-1]  # may be cut
    if not lines or not all(_LINE.match(ln) for ln in lines):
        return False
    return any(ln.split(" ", 2)[1].startswith(TOTAL) for ln in lines) or path.name.startswith(
        "ascent_filter_times"
    )


def read(path: Path) -> GraphFrame:
    """Read one file of Ascent's filter timings."""
    tree = StackTree(("name",))
    root = tree.child(-1, (TOTAL,))
    node: list[int] = []
    time: list[float] = []
    pending: list[float] = []  # the filters' seconds of the execution not yet totalled
    executions, short = 0, 0
    for number, line in enumerate(_input.read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            raise ReaderError(path, f"line {number} is not '<cycle> <filter> <seconds>'", fmt=NAME)
        name, seconds = m.group(2), float(m.group(3))
        if name != TOTAL:
            node.append(tree.child(root, (name,)))
            time.append(seconds)
            pending.append(seconds)
            continue
        own = seconds - sum(pending)
        if own < -_ROUNDING * (len(pending) + 1):
            short += 1
        node.append(root)
        time.append(own)
        pending, executions = [], executions + 1
    if not node:
        raise ReaderError(path, "no filter timings", fmt=NAME)
    if pending:
        warn(
            f"{path}: {len(pending)} filter timings after the last {TOTAL} line (an "
            "execution cut short) are read without a total"
        )
    if short:
        warn(f"{path}: in {short} executions the filters add up to more than the {TOTAL}")
    match = RANK_FILE.match(path.name)
    rank = int(match.group(1)) if match else 0
    metadata: dict[str, Any] = {
        "format": NAME,
        "path": str(path),
        "executions": executions,
        "locations": [{"rank": rank, "thread": 0}],
    }
    return build(
        tree,
        node,
        {"time": time, "calls": [1.0] * len(node)},
        units={"time": "s", "calls": "count"},
        metadata=metadata,
        rank=[rank] * len(node),
        default_metric="time",
    )
