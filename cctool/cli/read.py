"""``cctool read``: read profiles, summarise them, save them as .cct."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cctool.cli._options import from_option, memory_bounded

if TYPE_CHECKING:
    from cctool.options import ReadOptions


@click.command()
@click.argument("profiles", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="PROFILE...")
@from_option
@click.option("--output", "-o", default=None, metavar="FILE",
              help="Save the GraphFrame as a .cct file ('-' writes it to stdout). One input only.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as JSON (a list when several profiles are given).")
@memory_bounded
def read(profiles: tuple[str, ...], fmt: str | None, read_options: ReadOptions,
         output: str | None, as_json: bool) -> None:
    """Read profiles and print a summary: format, nodes, rows, ranks, threads, metrics and
    the roots' totals (summed over ranks and threads).

    \b
    Example:
      cctool read hpctoolkit-db/
      cctool read hpctoolkit-db/ -o run.cct      # save for fast re-use
      cctool read runs/*.cali --json
    """
    from cctool.cli._io import load_many
    from cctool.ops.summary import summarize
    from cctool.readers import expand_paths

    if output is not None:
        from cctool.cli._formats import resolve_format

        resolve_format(None, output, ("cct",))  # -o x.json: read saves a .cct only
    paths = expand_paths(profiles)
    gfs = load_many(paths, fmt, read_options)
    if output is not None:
        if len(gfs) != 1:
            raise click.UsageError("-o/--output saves one profile; give exactly one PROFILE")
        from cctool.cli._formats import refuse_binary_terminal
        from cctool.render.files import save

        refuse_binary_terminal("cct", output)
        save(gfs[0], output)
        if output == "-":
            return
    summaries = [summarize(gf) for gf in gfs]
    if as_json:
        import orjson

        # Each summary carries the version of its shape (cctool/schemas/read.json).
        tagged = [{"schema": "cctool.read/1", **s} for s in summaries]
        payload = tagged[0] if len(tagged) == 1 else tagged
        click.echo(orjson.dumps(payload, default=str, option=orjson.OPT_INDENT_2).decode())
        return
    for path, s in zip(paths, summaries, strict=True):
        click.echo(_summary_text(path, s))


def _summary_text(path: str | None, s: dict[str, Any]) -> str:
    lines = [f"{path}:" if path else "profile:"]
    lines.append(f"  format   {s['format']}")
    lines.append(f"  nodes    {s['nodes']}")
    lines.append(f"  rows     {s['rows']}")
    lines.append(f"  ranks    {s['ranks']}   threads {s['threads']}")
    lines += _gap_lines(s.get("metadata") or {})
    lines.append(f"  metrics  {', '.join(s['metrics'])}  (default: {s['default_metric']})")
    if s["derived"]:
        lines.append(f"  derived  {', '.join(s['derived'])}")
    from cctool.render.values import unit_format, with_unit

    units = s.get("units", {})
    for root in s["roots"]:
        vals = "  ".join(f"{m}={with_unit(root[m], unit_format(units.get(m)))}"
                         for m in s["metrics"])
        lines.append(f"  root     {root['name']}: {vals}")
    if s.get("estimate"):
        lines.append(f"  note     {s['estimate']}")
    return "\n".join(lines)


def _gap_lines(meta: dict[str, Any]) -> list[str]:
    """What a reader found missing (ranks, threads, dumps, empty files), as summary lines."""
    from cctool.readers._rank_gaps import KEY, spans

    gaps = meta.get(KEY) or {}
    records = [gaps] + [{**r, "unit": f"thread {t} part"}
                        for t, r in (meta.get("missing_parts") or {}).items()]
    out = [f"  missing  {r.get('unit', 'rank')}s {spans(r['missing'])} of {r['expected']}: "
           f"totals leave {'it' if len(r['missing']) == 1 else 'them'} out"
           for r in records if r.get("missing")]
    if gaps.get("empty_files"):
        out.append(f"  empty    {', '.join(str(f) for f in gaps['empty_files'])}")
    return out
