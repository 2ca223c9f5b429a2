"""``cctool timeline``'s option types and the usage errors that name its flags."""

from __future__ import annotations

import click


class DepthType(click.ParamType):  # type: ignore[type-arg]
    """``auto`` or a depth of at least 1."""

    name = "auto|N"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str:
        if isinstance(value, int):
            return value
        if value == "auto":
            return "auto"
        try:
            depth = int(str(value))
        except ValueError:
            depth = 0
        if depth < 1:
            self.fail(f"{value!r} is not auto or a depth of at least 1", param, ctx)
        return depth


class LaneType(click.ParamType):  # type: ignore[type-arg]
    """``RANK.THREAD`` (``3.1``; ``3`` is thread 0) -> (rank, thread)."""

    name = "rank.thread"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        rank, _, thread = str(value).partition(".")
        try:
            lane = int(rank), int(thread or 0)
        except ValueError:
            lane = (-1, -1)
        if min(lane) < 0:
            self.fail(f"{value!r} is not RANK.THREAD (3.0, or 3)", param, ctx)
        return lane


# Options of the text view the page has no use for, each with why.
_TEXT_ONLY = {
    "top": "the page lists the call paths of whatever window it shows",
    "buckets": "the page draws one span per screen column",
    "precision": "the page scales times with their units",
    "width": "the page fits the browser window",
}


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def check_timeline_options(ctx: click.Context, view: str, lane: tuple[int, int] | None,
                           to: str, output: str) -> None:
    """Usage errors of options that do not go with the view or the page asked for."""
    if lane is not None and view != "depth":
        raise click.UsageError("--lane names the location of --view depth")
    if view == "depth" and lane is None:
        raise click.UsageError("--view depth needs --lane RANK.THREAD")
    if to == "html":
        from cctool.cli._html import page_file

        if view != "strips":
            raise click.UsageError("--view is for the text and the records; the page "
                                   "shows its own views")
        for name, why in _TEXT_ONLY.items():
            if _given(ctx, name):
                raise click.UsageError(f"--to html and --{name} do not go together: {why}")
        page_file(ctx, to="html", output=output, html=None)  # refuses a terminal
    elif view == "depth":
        for name in ("rank", "thread", "depth", "top"):
            if _given(ctx, name):
                raise click.UsageError(f"--view depth and --{name} do not go together: "
                                       "--lane names the one location it shows")
    elif view == "summary" and _given(ctx, "top"):
        raise click.UsageError("--view summary and --top do not go together: the "
                               "summary shows every call path")
