"""``--html`` of ``cctool tree``: which flags the page honours, and a clear refusal of those
it cannot show (the page is the interactive tree, not the text views)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame

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


def annotations_option(f: Any) -> Any:
    """``--annotations FILE`` of the page-writing commands."""
    return click.option("--annotations", "annotations", default=None, metavar="FILE",
                        type=click.Path(dir_okay=False),
                        help="Notes (JSON by call path) for --html.")(f)


def page_notes(gf: GraphFrame, path: str | None, profile: str) -> tuple[tuple[int, str], ...]:
    """The notes of the annotations file ``path`` on the nodes of ``gf`` with the same call
    path (none without a file); a warning says how many match none."""
    if path is None:
        return ()
    from cctool.ops.annotations import notes_on

    return notes_on(gf, path, profile)
