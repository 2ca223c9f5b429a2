"""The view and output choices of ``cctool tree`` as usage errors naming the flags, and
one view written as text or records (shared by ``tree --view`` and ``peek``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cctool.model.frame import GraphFrame
    from cctool.ops.views import View
    from cctool.options import TreeOptions

PROFILE_FORMATS = ("folded", "speedscope", "pprof", "cct")  # tree's formats of a whole profile


def tree_view(ctx: click.Context, to: str, page: str | None) -> str:
    """The view ``cctool tree``'s flags ask for (``--flat`` is pprof's ``top``,
    ``--expand-hot`` the ``hot-path`` view of the tree), after refusing the flags that do
    not go with it, with the page (``page``: its file) or with the format ``to`` (as
    ``--to`` or ``-o``'s suffix chose it)."""
    p = {**ctx.params, "to": to}
    if page is not None:
        from cctool.cli._html import refuse_text_only

        refuse_text_only(ctx, by_format=to == "html")
    elif p["annotations"] is not None:
        raise click.UsageError("--annotations applies to the page: add --html FILE")
    picked = [v for v, on in (("top", p["flat"]), ("bottom-up", p["bottom_up"])) if on]
    named = p["view"]
    if named is not None and picked and picked != [named] or len(picked) > 1:
        raise click.UsageError("--view, --flat and --bottom-up are alternatives; pick one")
    view = named or (picked[0] if picked else "top-down")
    if p["expand_hot"]:
        if view != "top-down":
            raise click.UsageError("--expand-hot expands the top-down tree; drop --view/"
                                   "--flat/--bottom-up")
        view = "hot-path"
    if page is not None and view not in ("top-down", "hot-path"):
        raise click.UsageError(f"--html and the {view} view do not go together: the page "
                               "draws the top-down tree")
    if to in PROFILE_FORMATS:
        _refuse_for_profile(p, page)
    if view in ("bottom-up", "flat") and len(p["metrics"]) > 1:
        raise click.UsageError(f"--view {view} follows one metric pair; give one --metric")
    return view


def _refuse_for_profile(p: dict[str, object], page: str | None) -> None:
    """Usage errors for flags that shape a view, given with a format that writes the whole
    profile; an --agg the exports cannot write is refused before a streamed read."""
    from cctool.cli._exports import refuse_view_options
    from cctool.render.exports._stacks import check_agg

    to, named, agg = str(p["to"]), p["view"], str(p["agg"])
    located = [o for o, on in (("--rank", p["rank"] is not None),
                               ("--thread", p["thread"] is not None),
                               (f"--agg {agg}", agg != "sum")) if on]
    if to == "cct" and located:
        raise click.UsageError(f"{', '.join(located)}: --to cct saves the whole profile, "
                               "every rank and thread of it")
    threshold = p["threshold"]
    assert isinstance(threshold, float)
    refuse_view_options(to, {f"--view {named}": named not in (None, "top-down"),
                             "--flat": bool(p["flat"]), "--bottom-up": bool(p["bottom_up"]),
                             "--html": bool(page), "--expand-hot": bool(p["expand_hot"]),
                             "--depth": p["depth"] is not None, "--threshold": threshold > 0,
                             "--percent": bool(p["percent"])})
    check_agg(agg)


def emit_view(ctx: click.Context, gf: GraphFrame, kind: str, opts: TreeOptions, by: str,
              percent: bool | None, width: int | None, to: str, output: str,
              pattern: str | None = None, view: View | None = None) -> None:
    """Text (a header, the rows, a legend) or JSON/CSV records of view ``kind`` (``view``,
    when already computed); percentages of the total are on in text and off in records
    unless ``percent`` says otherwise."""
    from cctool.cli._io import sink
    from cctool.ops.views import ViewOptions, compute
    from cctool.render.emit import Report, emit
    from cctool.render.tree_report import view_rows
    from cctool.render.views import view_renderable

    if len(opts.metrics) > 1:
        raise click.UsageError(f"--view {kind} follows one metric pair; give one --metric")
    vopts = ViewOptions(metric=opts.metrics[0] if opts.metrics else None, agg=opts.agg,
                        rank=opts.rank, thread=opts.thread, by=by)
    view = view or compute(gf, kind, vopts, pattern=pattern)
    if percent and view.no_share is not None and kind == "peek":  # tree says it itself
        from cctool.errors import warn

        warn(f"--percent: no % of the total: {view.no_share}")
    report = Report(text=lambda _: view_renderable(gf, view, opts, percent is not False,
                                                   opts.depth),
                    records=lambda: view_rows(gf, view, opts, bool(percent)))
    emit(report, to, sink(ctx, output, width))
