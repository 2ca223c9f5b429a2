"""`cctool view`'s source pane (key o), driven headlessly at 80x24: the selected row's
function with each line's cost, scrolled to its hottest line, which is highlighted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("textual")

from cctool import read  # noqa: E402
from cctool.ops.views import ViewOptions  # noqa: E402
from cctool.render.tui.app import ViewerApp  # noqa: E402
from cctool.render.tui.model import ViewModel  # noqa: E402

SRC = Path(__file__).resolve().parent / "data" / "source"


def test_o_opens_the_source_of_the_selected_row() -> None:
    gf = read(SRC / "callgrind.out.hot")

    async def main() -> None:
        app = ViewerApp(ViewModel(gf, ViewOptions()), "test", (),
                        (("/tmp/cctool-build", str(SRC)),))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("home", "slash", *"^sweep$", "enter", "o")
            await pilot.pause()
            pane = app.query_one("#source")
            shown = [pane.render_line(y) for y in range(pane.size.height)]
            text = [s.text.rstrip() for s in shown]
            assert f"ROUTINE sweep  {SRC}/hot.c"[:79] in text
            # At 80 columns the rows give the shares only, and the source fits.
            assert "    exc %   inc %       line  source" in text
            hot = next(i for i, t in enumerate(text) if "98.1%" in t)
            assert text[hot] == ">   1.29%   98.1%         16          s += a[i] * weight(i);"
            assert any(seg.style is not None and seg.style.reverse for seg in shown[hot])
            await pilot.press("o")
            assert not pane.display

    asyncio.run(main())
