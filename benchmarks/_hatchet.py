"""LLNL Hatchet on the same inputs, for the side-by-side columns (``pip install -e '.[bench]'``).

The functions here run in a child process of their own (imports untimed, like cctool's) and
return what they timed. :func:`run_capped` starts that child in a session of its own, watches
its wall time and memory (PSS summed over its process group, since Hatchet's reader forks a
pool), and past either limit asks it for a Python traceback (``faulthandler`` on SIGUSR1) and
kills the group. So a Hatchet that does not finish costs at most the cap and still says where
it was.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from benchmarks._harness import Skip, timer

CAP_S = 300.0
MEMORY_GB = 16.0  # of 24 GiB: the machine stays usable, the page cache keeps the inputs
# The query the cctool query cases run, in Hatchet's object dialect. Hatchet prefixes a
# callee's name with its call line ("98:MPI_Bcast"), so the names allow that prefix: both
# tools then keep the same 425 nodes of the 1,000-node database.
QUERY = [{"name": r"(\d+:)?main"}, "*", {"name": r"(\d+:)?MPI_.*"}, "*"]


def _hatchet() -> Any:
    try:
        import hatchet
    except ImportError as exc:
        raise Skip("Hatchet is not installed (pip install -e '.[bench]')") from exc
    return hatchet


def _quiet() -> contextlib.AbstractContextManager[Any]:
    """Hatchet prints progress to stdout and pandas warns about its group-bys."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def stage(name: str) -> None:
    """Note what the child is doing, for the report when it is stopped."""
    path = os.environ.get("CCTOOL_BENCH_STAGE")
    if path:
        Path(path).write_text(name)


def read(path: Path, v4: bool = False) -> Any:
    """``GraphFrame.from_hpctoolkit`` (``from_hpctoolkit_latest`` for a v4 database)."""
    ht = _hatchet()
    with _quiet():
        if v4:
            return ht.GraphFrame.from_hpctoolkit_latest(str(path))
        return ht.GraphFrame.from_hpctoolkit(str(path))


def time_read(path: Path, v4: bool = False) -> dict[str, Any]:
    _hatchet()
    stage(f"timed: read {path.name}")
    with timer() as t:
        gf = read(path, v4)
    return {"hatchet_s": t[0], "hatchet_rows": int(len(gf.dataframe))}


def time_tree(path: Path, depth: int = 6) -> dict[str, Any]:
    """Read, sum over ranks and threads (what ``cctool tree`` shows), render ``depth`` levels."""
    import numpy as np

    _hatchet()
    stage(f"timed: read {path.name}, drop_index_levels, tree")
    with timer() as t:
        gf = read(path)
        with _quiet():
            gf.drop_index_levels(function=np.sum)
            text = gf.tree(depth=depth)
    return {"hatchet_s": t[0], "hatchet_notes": {"lines": text.count("\n")}}


def time_diff(a: Path, b: Path) -> dict[str, Any]:
    """Read both, then ``gf_b - gf_a`` (B − A, as ``cctool diff A B`` shows)."""
    _hatchet()
    stage(f"timed: read {a.name} and {b.name}, gf_b - gf_a")
    with timer() as t:
        gf_a, gf_b = read(a), read(b)
        stage("timed: gf_b - gf_a")
        with _quiet():
            out = gf_b - gf_a
    return {"hatchet_s": t[0], "hatchet_rows": int(len(out.dataframe))}


def time_op(path: Path, op: str) -> dict[str, Any]:
    """Read (untimed, like the cctool op cases), then time one operation, first call."""
    import numpy as np

    ht = _hatchet()
    stage(f"untimed: read {path.name}")
    gf = read(path)
    metric = "time (inc)"
    stage(f"timed: {op}")
    with timer() as t, _quiet():
        if op == "query":
            from hatchet.query import ObjectQuery

            out = gf.filter(ObjectQuery(QUERY, multi_index_mode="any"), squash=True)
            notes = {"nodes": len(out.graph)}
        elif op == "groupby":
            # groupby_aggregate needs one row per node: sum over ranks and threads first.
            gf.drop_index_levels(function=np.sum)
            out = gf.groupby_aggregate("name", {metric: np.sum, "time": np.sum})
            notes = {"groups": len(out.dataframe)}
        elif op == "imbalance":
            # This Hatchet has no load_imbalance: what it computed (Chopper), on its frame.
            per_node = gf.dataframe.groupby(level="node")[metric].agg(["mean", "max"])
            ratio = (per_node["max"] / per_node["mean"]).replace([np.inf, -np.inf], np.nan)
            notes = {"nodes": len(ratio.nlargest(10))}
        else:
            raise ValueError(op)
    del ht
    return {"hatchet_s": t[0], "hatchet_rows": int(len(gf.dataframe)), "hatchet_notes": notes}


# --------------------------------------------------------------------------- the capped child


def run_capped(cmd: list[str], env: dict[str, str], out: Path, cap_s: float,
               memory_gb: float) -> dict[str, Any]:
    """Run ``cmd`` (a child that writes its result as JSON to ``out``) within the limits."""
    stage_file, where_file = out.with_suffix(".stage"), out.with_suffix(".where")
    env = {**env, "CCTOOL_BENCH_STAGE": str(stage_file), "CCTOOL_BENCH_WHERE": str(where_file)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    peak_gb, stopped = 0.0, None
    try:
        while proc.poll() is None:
            time.sleep(0.25)
            used = group_pss_gb(proc.pid)
            peak_gb = max(peak_gb, used)
            if time.perf_counter() - start > cap_s:
                stopped = f"did not finish within {cap_s:.0f} s"
            elif used > memory_gb:
                stopped = f"stopped at {used:.1f} GB of memory (limit {memory_gb:.0f} GB)"
            if stopped:
                _dump_and_kill(proc)
                break
    finally:
        _kill_group(proc)
        stderr = proc.stderr.read() if proc.stderr else ""
    wall = time.perf_counter() - start
    if stopped:
        where = _where(where_file.read_text() if where_file.exists() else "")
        doing = stage_file.read_text() if stage_file.exists() else "?"
        return {"hatchet_error": stopped, "hatchet_where": f"{doing}; in {where}",
                "hatchet_peak_gb": round(peak_gb, 2), "hatchet_child_s": wall}
    if proc.returncode != 0 or not out.exists():
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"hatchet_error": f"failed: {tail}", "hatchet_peak_gb": round(peak_gb, 2)}
    result = dict(json.loads(out.read_text()))
    result["hatchet_peak_gb"] = round(peak_gb, 2)
    return result


def install_where_handler() -> None:
    """In the child: dump every thread's stack to CCTOOL_BENCH_WHERE on SIGUSR1."""
    import faulthandler

    path = os.environ.get("CCTOOL_BENCH_WHERE")
    if path:
        fh = open(path, "w")  # noqa: SIM115  (must stay open for the signal handler)
        faulthandler.register(signal.SIGUSR1, file=fh, all_threads=True)


def _dump_and_kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGUSR1)
    time.sleep(1.0)  # faulthandler writes from its signal handler, even inside C code
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the child's session (it and Hatchet's pool workers), then reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')


def _where(dump: str) -> str:
    """The innermost Hatchet frame of the main thread's stack, and the innermost frame."""
    blocks = re.split(r"\n(?=Thread 0x|Current thread 0x)", dump.strip())
    main = next((b for b in blocks if b.startswith("Current thread")), blocks[-1] if blocks else "")
    frames = _FRAME.findall(main)  # most recent call first
    if not frames:
        return "(no traceback)"

    def short(f: tuple[str, str, str]) -> str:
        path = f[0].split("site-packages/")[-1]
        return f"{path}:{f[1]} {f[2]}"

    own = next((f for f in frames if "/hatchet/" in f[0]), None)
    if own is None or own == frames[0]:
        return short(own or frames[0])
    return f"{short(own)} (inside {short(frames[0])})"


def group_pss_gb(pgid: int) -> float:
    """Proportional set size of every process in group ``pgid``, in GB (shared pages once)."""
    total_kb = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # fields after the command: state, ppid, pgrp
                continue
            with open(f"/proc/{entry}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total_kb += int(line.split()[1])
                        break
        except (OSError, IndexError, ValueError):
            continue
    return total_kb * 1024 / 1e9


if __name__ == "__main__":  # pragma: no cover - manual check of the limits
    print(group_pss_gb(os.getpgid(0)), file=sys.stderr)
