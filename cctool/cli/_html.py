"""``--html`` of ``cctool tree``: which flags the page honours, and a clear refusal of those
it cannot show (the page is the interactive tree, not the text views)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.options import TreeOptions

# Flags of the text output that the page has no counterpart for; each with why.
TEXT_ONLY = {
    "flat": "the page draws the tree, not the flat profile",
    "bottom_up": "the page draws the tree, not the callers view",
    "by": "it groups --flat/--bottom-up, which the page does not draw",
    "threshold": "the page hides small subtrees with its Prune range instead",
    "sort": "the page orders siblings heaviest first",
    "full_names": "the page elides names to fit and shows them whole on hover",
    "no_legend": "the page always has its legend",
    "precision": "the page scales values with their units",
    "percent": "the page shows each value's share in its details panel",
    "width": "the page fits the browser window",
    "to": "--html writes the page; --to writes the text or records",
    "output": "--html FILE names the page's file",
}


def page_file(ctx: click.Context, to: str, output: str, html: str | None) -> str | None:
    """Where the page goes: ``--html FILE``, or ``-o`` when ``--to html`` (or -o's ``.html``
    suffix) asks for the page; None when the command writes text or records."""
    if to != "html":
        return html
    if html is not None:
        raise click.UsageError("--to html and --html FILE do not go together: give one")
    if output == "-" and sys.stdout.isatty():
        raise click.UsageError("will not write the page to a terminal; use -o FILE.html")
    return output


def refuse_text_only(ctx: click.Context, by_format: bool = False) -> None:
    """A usage error (exit 2) naming the first given flag the page cannot honour;
    ``by_format``: --to html or -o's suffix chose the page, so --to and -o are its own."""
    for name, why in TEXT_ONLY.items():
        if by_format and name in ("to", "output"):
            continue
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
            flag = "--" + name.replace("_", "-")
            page = "the page (--to html)" if by_format else "--html"
            raise click.UsageError(f"{page} and {flag} do not go together: {why}")


def write_tree_page(gf: GraphFrame, opts: TreeOptions, profile: str, path: str,
                    expand_hot: bool, annotations: str | None = None) -> None:
    """Write the page of ``gf`` as ``cctool tree`` options say (the hot path opened with
    ``expand_hot``, the notes of the ``annotations`` file on the nodes with their call
    paths; stderr says how many found none)."""
    from dataclasses import replace

    from cctool.cli._io import write_text
    from cctool.render.html import HtmlOptions, to_html

    notes = page_notes(gf, annotations, profile)
    options = replace(HtmlOptions.from_tree(opts, title=profile), expand_hot=expand_hot,
                      annotations=notes)
    write_text(path, to_html(gf, options))


def annotations_option(f: Any) -> Any:
    """``--annotations FILE`` of the page-writing commands."""
    return click.option("--annotations", "annotations", default=None, metavar="FILE",
                        type=click.Path(dir_okay=False),
                        help="Notes (JSON by call path) for --html.")(f)


def page_notes(gf: GraphFrame, path: str | None, profile: str) -> tuple[tuple[int, str], ...]:
    """The notes of the annotations file ``path`` on the nodes of ``gf`` with the same call
    path; stderr says how many match none (a few of their paths named)."""
    if path is None:
        return ()
    from cctool.ops.annotations import load, match

    found, missing = match(gf, load(path))
    if missing:
        shown = "; ".join(" › ".join(a.names[-2:]) for a in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        click.echo(f"cctool: {len(missing)} of {len(found) + len(missing)} annotations "
                   f"match no call path of {profile}: {shown}{more}", err=True)
    return tuple(found)
