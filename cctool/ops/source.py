"""Where in the code: a function's source lines (and instructions) with their cost.

:func:`source` answers "which lines of this function cost what" from what a frame carries:

* callgrind and cachegrind files: the profile's own cost per source position
  (``gf.callgraph.positions``, see :mod:`cctool.model.callgraph`). A line's exclusive cost is
  its self cost (callgrind_annotate's and cg_annotate's figure); its inclusive cost adds the
  calls made from it (the ``=>`` lines under it in callgrind_annotate). Inside a recursion
  cycle a call line's inclusive cost counts the nested calls again, as callgrind does.
  ``--dump-instr=yes`` files also give the cost per instruction address.
* every other tree whose nodes carry ``file`` and ``line``: a function's rows are the function
  node itself (its self cost, at its own line), its statement nodes (HPCToolkit's ``S``,
  Caliper's source lines) and the functions it calls, at their ``callsite`` line where the
  profile records one (else at the function's line). All call paths of a function (same
  ``name`` and ``file``) merge: exclusive costs add up; inclusive costs are taken from the
  outermost instance on each path only, so recursion is counted once. HPCToolkit loops
  become line ranges: from the loop's line to the last line of the statements inside it.

A profile that records only where functions begin (cProfile, pyinstrument) gives one row per
function, at its first line; a note says so.

Percentages: of the function (exclusive of its exclusive total, inclusive of its inclusive
total) and of the profile's total (:func:`cctool.ops.views.profile_total`), where the metric's
values are parts of a total (:mod:`cctool.model.shares`); otherwise null, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from cctool.errors import CctoolError
from cctool.model.frame import GraphFrame
from cctool.model.shares import frame_share_refusal
from cctool.ops import source_files
from cctool.ops.views import profile_total

BODY_TYPES = ("statement", "loop")  # node types inside a function, not functions of their own
HOT_LINES = 3  # how many of a function's lines are marked as its hottest
LINE_COLUMNS = ("file", "line", "exclusive", "inclusive")


@dataclass(frozen=True)
class FunctionSource:
    """One function's line table.

    Attributes:
        name: the function's name.
        file: its source file as the profile records it (None if it records none).
        path: where that file was found on this machine (None if nowhere).
        tried: the paths looked at, in order.
        lines: one row per source line with a cost: ``file``, ``line``, ``exclusive``,
            ``inclusive``, ``exclusive %fn``, ``inclusive %fn``, ``exclusive %total``,
            ``inclusive %total`` (percentages 0-100, null where they mean nothing) and
            ``hot`` (1 for the hottest line by exclusive cost, 2, 3; null for the others).
        loops: ``name``, ``file``, ``start``, ``end``, ``inclusive``, ``inclusive %fn`` per
            loop (HPCToolkit structure; empty elsewhere).
        instructions: ``instr``, ``line``, ``exclusive``, ``inclusive`` per instruction
            address (callgrind ``--dump-instr=yes``), else None.
        exclusive: the function's exclusive total.
        inclusive: its inclusive total (None where the profile does not determine it).
        module: the binary or module holding it, where known.
        text: the lines of ``path`` (empty when not found).
        asm: instruction address -> its text from ``objdump -d`` (asked for and found).
    """

    name: str
    file: str | None
    path: str | None
    tried: tuple[str, ...]
    lines: pl.DataFrame
    loops: pl.DataFrame
    instructions: pl.DataFrame | None
    exclusive: float
    inclusive: float | None
    module: str | None = None
    text: tuple[str, ...] = ()
    asm: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceTable:
    """:func:`source`'s answer.

    Attributes:
        metric, inclusive_metric: the exclusive and inclusive metric columns.
        unit: their unit.
        total: the profile's total of ``metric`` (nan where shares mean nothing).
        functions: one :class:`FunctionSource` per matching function, most expensive first.
        notes: what a reader of the table should know (function-level lines only,
            recursion, a binary not found for the instructions, no shares).
        context: lines of source to show around costed lines (None: whole functions).
        missing: one line per source file found nowhere, with the paths tried.
    """

    metric: str
    inclusive_metric: str
    unit: str
    total: float
    functions: tuple[FunctionSource, ...]
    notes: tuple[str, ...] = ()
    context: int | None = None
    missing: tuple[str, ...] = field(default=())

    def records(self) -> pl.DataFrame:
        """All functions' lines as one table: ``function``, ``path``, then the line columns."""
        parts = [f.lines.select(pl.lit(f.name).alias("function"),
                                pl.lit(f.path, dtype=pl.String).alias("path"), pl.all())
                 for f in self.functions]
        return pl.concat(parts) if parts else pl.DataFrame()


def source(gf: GraphFrame, function: str, *, metric: str | None = None,
           source_roots: Sequence[str] = (), substitute: Sequence[tuple[str, str]] = (),
           context: int | None = None, asm: bool = False) -> SourceTable:
    """The line table of each function whose name ``function`` (a regular expression)
    matches anywhere (see the module docstring).

    Args:
        gf: the profile.
        function: regular expression searched in function names.
        metric: exclusive or inclusive metric column (default: the frame's default).
        source_roots: directories to look for source files in.
        substitute: ``(FROM, TO)`` path prefix rewrites, tried first.
        context: lines of source shown around costed lines (None: the whole function).
        asm: also disassemble each function's instructions (callgrind ``--dump-instr=yes``)
            with ``objdump``; a binary or objdump that is missing is a note, not an error.
    """
    try:
        pattern = re.compile(function)
    except re.error as err:
        raise CctoolError(f"bad function pattern {function!r}: {err}") from None
    if context is not None and context < 0:
        raise CctoolError(f"context must be 0 or more, not {context}")
    exc, inc = _metric_pair(gf, metric)
    from cctool.model.merge import merge_rule, unmergeable_reason
    from cctool.model.metrics import Combine

    if merge_rule(gf.metric(exc)) is not Combine.SUM:  # a line's cost adds its contexts up
        raise CctoolError(f"{exc!r} does not add up over a function's call paths, so it has "
                          f"no cost per source line: {unmergeable_reason(gf.metric(exc))}")
    refusal = frame_share_refusal(gf, exc)
    total = profile_total(gf, exc) if refusal is None else float("nan")
    positions = gf.callgraph.positions if gf.callgraph is not None else None
    notes: list[str] = []
    if positions is not None and exc in gf.callgraph.events:  # type: ignore[union-attr]
        found = _from_positions(gf, pattern, exc, inc, notes)
        if refusal is None:  # the file's own cost lines, summed exactly
            total = float(positions[exc].sum())
    elif "line" not in gf.nodes.columns and _line_entries(gf).height:
        found = _from_line_entries(gf, pattern, exc, notes)
    else:
        found = _from_tree(gf, pattern, exc, inc, notes)
    if not found:
        raise CctoolError(f"no function matches {function!r}")
    if asm and all(f[5] is None for f in found):
        raise CctoolError("the profile records no instruction addresses (callgrind "
                          "--dump-instr=yes does)")
    funcs, missing = [], []
    for name, file, module, lines, loops, instr, fexc, finc in found:
        path, tried = (None, ()) if file is None else source_files.resolve(
            file, source_roots, substitute)
        if file is not None and path is None:
            missing.append(f"{file} (tried {', '.join(tried)})")
        text = source_files.read_lines(path) if path is not None else ()
        code = _disassembly(instr, module, source_roots, substitute, notes) if asm else {}
        funcs.append(FunctionSource(
            name, file, path, tried, _with_shares(lines, fexc, finc, total),
            _loop_shares(loops, finc), instr, fexc, finc, module, text, code))
    if refusal is not None:
        notes.append(f"no percentages: {refusal}")
    funcs.sort(key=lambda f: -(f.inclusive if f.inclusive is not None else f.exclusive))
    return SourceTable(exc, inc, gf.metric(exc).unit, total, tuple(funcs),
                       tuple(dict.fromkeys(notes)), context, tuple(dict.fromkeys(missing)))


Found = tuple[str, str | None, str | None, pl.DataFrame, pl.DataFrame, pl.DataFrame | None,
              float, float | None]


def _disassembly(instr: pl.DataFrame | None, module: str | None, roots: Sequence[str],
                 substitute: Sequence[tuple[str, str]], notes: list[str]) -> dict[int, str]:
    """The text of the instructions in ``instr`` from ``module``'s binary (found as source
    files are); why not in ``notes``."""
    if instr is None or instr.height == 0:
        return {}
    if not module:
        notes.append("the profile names no binary for the instructions")
        return {}
    binary, tried = source_files.resolve(module, roots, substitute)
    if binary is None:
        notes.append(f"{module}: binary not found (tried {', '.join(tried)}); instructions "
                     "are shown without their text")
        return {}
    lo, hi = int(instr["instr"].min()), int(instr["instr"].max())  # type: ignore[arg-type]
    try:
        return source_files.disassemble(binary, lo, hi + 1)
    except CctoolError as err:
        notes.append(str(err))
        return {}


def _metric_pair(gf: GraphFrame, metric: str | None) -> tuple[str, str]:
    col = gf.resolve_metric(metric)
    exc, inc = gf.exclusive_of(col), gf.inclusive_of(col)
    if exc is None or inc is None:
        raise CctoolError(f"metric {col!r} needs both an exclusive and an inclusive column "
                          "for a line table")
    return exc, inc


def _from_positions(gf: GraphFrame, pattern: re.Pattern[str], exc: str, inc: str,
                    notes: list[str]) -> list[Found]:
    """Line tables from a callgrind or cachegrind file's own per-position costs."""
    tables = gf.callgraph
    assert tables is not None and tables.positions is not None
    fn = tables.functions
    hits = fn.filter(pl.col("name").map_elements(lambda s: pattern.search(s) is not None,
                                                 return_dtype=pl.Boolean))
    pos = tables.positions.filter(pl.col("function").is_in(hits["function"].implode()))
    cols = [pl.col(exc).sum().alias("exclusive"), pl.col(inc).sum().alias("inclusive")]
    out: list[Found] = []
    has_instr = pos["instr"].null_count() < pos.height
    for row in hits.iter_rows(named=True):
        mine = pos.filter(pl.col("function") == row["function"])
        lines = mine.group_by("file", "line").agg(cols).sort("file", "line")
        instr = (mine.filter(pl.col("instr").is_not_null()).group_by("instr").agg(
            pl.col("line").first(), *cols).sort("instr") if has_instr else None)
        finc = row.get(inc)
        if finc is None:
            notes.append(f"{row['name']} is in a recursion cycle: its inclusive total is not "
                         "determined, and its call lines count nested calls again")
        out.append((row["name"], _known(row.get("file")), row.get("module"), lines,
                    _no_loops(), instr, float(row[exc]), finc))
    return out


def _known(file: str | None) -> str | None:
    return None if file is None or file in source_files.UNKNOWN_FILES else file


def _no_loops() -> pl.DataFrame:
    return pl.DataFrame(schema={"name": pl.String, "file": pl.String, "start": pl.Int32,
                                "end": pl.Int32, "inclusive": pl.Float64})


def function_owners(gf: GraphFrame, is_fn: np.ndarray) -> np.ndarray:
    """Per node the nearest function node at or above it (itself for a function)."""
    owner = np.arange(gf.num_nodes, dtype=np.int64)
    par = gf.parent_array
    for level in gf.levels[1:]:
        body = level[~is_fn[level]]
        owner[body] = owner[par[body]]
    return owner


def _from_tree(gf: GraphFrame, pattern: re.Pattern[str], exc: str, inc: str,
               notes: list[str]) -> list[Found]:
    """Line tables from the tree's function, statement and loop nodes."""
    nodes = gf.nodes
    if "line" not in nodes.columns:
        raise CctoolError("the profile records no source lines (its nodes have no 'line')")
    n = gf.num_nodes
    vals = gf.node_values([exc, inc])
    e, i = vals[exc].to_numpy(), vals[inc].to_numpy()
    typ = nodes["type"].to_numpy()
    is_fn = ~np.isin(typ, BODY_TYPES)
    names = nodes["name"].to_list()
    files = (nodes["file"] if "file" in nodes.columns else pl.repeat(None, n, dtype=pl.String,
                                                                     eager=True))
    line = nodes["line"].fill_null(0).to_numpy().astype(np.int64)
    callsite = (nodes["callsite"].fill_null(0).to_numpy().astype(np.int64)
                if "callsite" in nodes.columns else np.zeros(n, dtype=np.int64))
    file_list = files.to_list()
    par = gf.parent_array
    owner = function_owners(gf, is_fn)
    end = gf.subtree_end
    matched = np.array([bool(f) and pattern.search(s) is not None
                        for f, s in zip(is_fn.tolist(), names, strict=True)], dtype=bool)
    keys = pl.DataFrame({"name": names, "file": files}).with_row_index("node").filter(
        pl.Series(matched)).group_by("name", "file", maintain_order=True).agg("node")
    if keys.height and not (typ == "statement").any():
        notes.append("the profile records where functions begin, not the cost of each line: "
                     "one row per function, at its first line")
    out: list[Found] = []
    for name, file, ids in keys.iter_rows():
        kmask = np.zeros(n, dtype=bool)
        kmask[np.asarray(ids)] = True
        diff = np.zeros(n + 1, dtype=np.int64)
        k = np.flatnonzero(kmask)
        np.add.at(diff, k + 1, 1)
        np.add.at(diff, end[k], -1)
        cover = np.cumsum(diff)[:n]  # instances of the function strictly above each node
        body = kmask[owner] & ~is_fn
        pa = np.maximum(par, 0)
        callee = is_fn & (par >= 0) & kmask[owner[pa]] & (typ[pa] != "statement")
        stmt = body & (typ == "statement")
        fn_line = line[k[0]]
        rows = np.concatenate([k, np.flatnonzero(stmt), np.flatnonzero(callee)])
        where = np.concatenate([line[k], line[stmt],
                                np.where(callsite[callee] > 0, callsite[callee], fn_line)])
        owner_of = np.concatenate([k, owner[stmt], owner[pa[callee]]])
        xs = np.concatenate([e[k], e[stmt], np.zeros(int(callee.sum()))])
        outer = np.concatenate([cover[k] == 0, cover[stmt] == 1, cover[callee] == 1])
        incs = np.concatenate([e[k], i[stmt], i[callee]]) * outer
        row_file = [file_list[r] if typ[r] == "statement" else file_list[o]
                    for r, o in zip(rows.tolist(), owner_of.tolist(), strict=True)]
        lines = pl.DataFrame({"file": pl.Series(row_file, dtype=pl.String),
                              "line": pl.Series(where, dtype=pl.Int32),
                              "exclusive": xs, "inclusive": incs}).filter(
            (pl.col("exclusive") != 0) | (pl.col("inclusive") != 0))
        if file is None:  # the function's file is where its statements are (perf srcline)
            file = _main_file(lines)
            if file is not None:
                lines = lines.with_columns(pl.col("file").fill_null(file))
        lines = lines.group_by("file", "line").agg(
            pl.col("exclusive", "inclusive").sum()).sort("file", "line")
        at = np.where(body, line, 0)
        at[callee] = callsite[callee]
        loops = _loops(gf, at, body & (typ == "loop"), body | callee, line, file_list, i, cover)
        fexc = float(lines["exclusive"].sum())
        finc = float(i[k[cover[k] == 0]].sum())
        module = nodes["module"][int(k[0])] if "module" in nodes.columns else None
        out.append((name, _known(file), module, lines, loops, None, fexc, finc))
    return out


# gprof -l names each line entry ``function (file:line @ address)``: one per address of a
# line, its self time in the flat profile.
_LINE_ENTRY = r"^(?P<function>.+) \((?P<file>[^():]+):(?P<line>\d+) @ [0-9a-f]+\)$"


def _line_entries(gf: GraphFrame) -> pl.DataFrame:
    """The nodes that are gprof ``-l`` line entries: ``node``, ``function``, ``file``,
    ``line``."""
    parts = gf.nodes.select("node", pl.col("name").str.extract_groups(_LINE_ENTRY)
                            .alias("entry")).unnest("entry")
    return parts.filter(pl.col("line").is_not_null()).with_columns(
        pl.col("line").cast(pl.Int32))


def _from_line_entries(gf: GraphFrame, pattern: re.Pattern[str], exc: str,
                       notes: list[str]) -> list[Found]:
    """Line tables from gprof ``-l``'s line entries: a line's cost is the self time of its
    entries (one per address); the flat profile gives no line an inclusive cost."""
    values = gf.node_values([exc]).select("node", pl.col(exc).alias("exclusive"))
    entries = _line_entries(gf).join(values, on="node").filter(
        pl.col("function").map_elements(lambda f: pattern.search(f) is not None,
                                        return_dtype=pl.Boolean))
    notes.append("gprof -l gives each line its own time only: no inclusive cost per line")
    out: list[Found] = []
    for (name, file), rows in entries.group_by("function", "file", maintain_order=True):
        lines = rows.group_by("file", "line").agg(pl.col("exclusive").sum()).filter(
            pl.col("exclusive") != 0).with_columns(
            pl.lit(None, dtype=pl.Float64).alias("inclusive")).sort("file", "line")
        out.append((str(name), _known(str(file)), None, lines, _no_loops(), None,
                    float(lines["exclusive"].sum()), None))
    return out


def _main_file(lines: pl.DataFrame) -> str | None:
    """The file holding most of ``lines``' exclusive cost (None if none is named)."""
    named = lines.filter(pl.col("file").is_not_null())
    if named.height == 0:
        return None
    by = named.group_by("file").agg(pl.col("exclusive").sum()).sort(
        "exclusive", "file", descending=[True, False])
    return str(by["file"][0])


def _loops(gf: GraphFrame, at: np.ndarray, loop: np.ndarray, inside: np.ndarray,
           line: np.ndarray, file_list: list[str | None], inc: np.ndarray,
           cover: np.ndarray) -> pl.DataFrame:
    """The function's loops as line ranges: from the loop's line to the last line inside it:
    of its statements and loops (``at``: their line) and of the calls it makes (``at``: the
    call site), ``inside`` marking those nodes."""
    if not loop.any():
        return _no_loops()
    last = at.copy()
    par = gf.parent_array
    for level in reversed(gf.levels[1:]):
        inner = level[inside[level]]
        np.maximum.at(last, par[inner], last[inner])
    ids = np.flatnonzero(loop & (line > 0))  # a loop at line 0: the profile does not know
    return pl.DataFrame({
        "name": [f"loop at line {line[x]}" for x in ids],
        "file": pl.Series([file_list[x] for x in ids], dtype=pl.String),
        "start": pl.Series(line[ids], dtype=pl.Int32),
        "end": pl.Series(np.maximum(last[ids], line[ids]), dtype=pl.Int32),
        "inclusive": inc[ids] * (cover[ids] == 1)}).group_by(
        "name", "file", "start", maintain_order=True).agg(
        pl.col("end").max(), pl.col("inclusive").sum()).sort("file", "start")


def _with_shares(lines: pl.DataFrame, fexc: float, finc: float | None,
                 total: float) -> pl.DataFrame:
    def pct(col: str, base: float | None) -> pl.Expr:
        ok = base is not None and np.isfinite(base) and base != 0
        return (pl.col(col) * 100.0 / base if ok else pl.lit(None, dtype=pl.Float64))

    hot = pl.when(pl.col("exclusive") > 0).then(
        pl.col("exclusive").rank("ordinal", descending=True)).cast(pl.Int32)
    return lines.with_columns(
        pct("exclusive", fexc).alias("exclusive %fn"),
        pct("inclusive", finc).alias("inclusive %fn"),
        pct("exclusive", total).alias("exclusive %total"),
        pct("inclusive", total).alias("inclusive %total"),
        pl.when(hot <= HOT_LINES).then(hot).alias("hot"))


def _loop_shares(loops: pl.DataFrame, finc: float | None) -> pl.DataFrame:
    ok = finc is not None and np.isfinite(finc) and finc != 0
    return loops.with_columns(
        (pl.col("inclusive") * 100.0 / finc if ok else pl.lit(None, dtype=pl.Float64)
         ).alias("inclusive %fn"))
