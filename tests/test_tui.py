"""`cctool view` driven headlessly through Textual's pilot: key sequences expand, sort,
search, switch views, follow the hot path and open the per-rank and callers/callees panes;
the assertions read the lines the widgets draw."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import numpy as np
import pytest

pytest.importorskip("textual")

from cctool import read  # noqa: E402
from cctool.model.frame import GraphFrame  # noqa: E402
from cctool.ops.query import match_nodes  # noqa: E402
from cctool.ops.views import ViewOptions  # noqa: E402
from cctool.render.tui.app import ViewerApp  # noqa: E402
from cctool.render.tui.model import ViewModel  # noqa: E402


def lines(app: ViewerApp, widget: str) -> list[str]:
    """The text a widget draws, one string per screen line."""
    w = app.query_one(widget)
    return [w.render_line(y).text.rstrip() for y in range(w.size.height)]


def drive(gf: GraphFrame, script: Callable[[ViewerApp, object], Awaitable[None]],
          size: tuple[int, int] = (120, 40)) -> None:
    async def main() -> None:
        app = ViewerApp(ViewModel(gf, ViewOptions()), "test")
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(app, pilot)

    asyncio.run(main())


@pytest.fixture(scope="module")
def allgather(tmp_path_factory):  # type: ignore[no-untyped-def]
    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / "hpctoolkit-allgather-database"
    if not path.is_dir():
        pytest.skip(f"real profiles not available: {path} is absent")
    return read(path)


def cursor_line(app: ViewerApp) -> str:
    table = lines(app, "#table")
    return table[app.model.cursor - app.table.scroll_offset.y]


def test_expand_hot_path_sort_and_panes(allgather) -> None:  # type: ignore[no-untyped-def]
    async def script(app: ViewerApp, pilot) -> None:  # type: ignore[no-untyped-def]
        head = lines(app, "#head")
        assert "top-down" in head[0] and "total 26.16 s" in head[0]
        assert head[1].split() == ["inclusive▼", "inc", "%", "exclusive", "exc", "%", "name"]
        table = lines(app, "#table")
        assert table[0].split()[:4] == ["26.14", "s", "99.9%", "0"]
        assert table[0].endswith("▾ <program root>")  # opened on the hot path
        assert table[1].endswith("▾ main")
        assert cursor_line(app).endswith("<unknown file> [libinfinipath.so.4.0]:0")
        assert "opened on the hot path (22 rows" in lines(app, "#status")[0]
        await pilot.press("home", "left")  # close the root: one row left
        assert app.model.visible().size == 3  # <program root>, <no thread>, <partial ...>
        await pilot.press("h")
        assert cursor_line(app).endswith("<unknown file> [libinfinipath.so.4.0]:0")
        assert "hot path: 22 rows" in lines(app, "#status")[0]
        await pilot.press("r")
        ranks = "\n".join(lines(app, "#ranks"))
        assert "ranks 10  max 291.7 ms on rank 4" in ranks
        await pilot.press("c")
        peek = "\n".join(lines(app, "#peek"))
        assert "callers / callees of <unknown procedure> 0xa128" in peek
        assert "<unknown procedure> 0x1da64 [libpsm_infinipath.so.1.16]" in peek
        await pilot.press("5")  # by name
        assert "name▲" in lines(app, "#head")[1]
        names = [app.model.names[r] for r in app.model.visible()[:3]]
        assert names == sorted(names) == ["<no thread>", "<partial call paths>",
                                          "<program root>"]
        await pilot.press("3")  # by exclusive, the cursor stays on its row
        assert "exclusive▼" in lines(app, "#head")[1]
        assert cursor_line(app).endswith("<unknown file> [libinfinipath.so.4.0]:0")

    drive(allgather, script)


def test_search_view_switch_and_copy(allgather) -> None:  # type: ignore[no-untyped-def]
    async def script(app: ViewerApp, pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("home")  # from the top (the viewer opens on the hot path's end)
        await pilot.press("slash", *"Sendrecv$", "enter")
        assert "/Sendrecv$: 5 matches" in lines(app, "#status")[0]
        first = app.model.current
        assert cursor_line(app).endswith("MPIC_Sendrecv")
        await pilot.press("n")
        assert app.model.current != first and cursor_line(app).endswith("MPIC_Sendrecv")
        assert "match 2/5" in lines(app, "#status")[0]
        await pilot.press("N")
        assert app.model.current == first
        await pilot.press("y")
        query = app.last_query
        assert "cctool query PROFILE" in lines(app, "#status")[0]
        node = int(app.model.view.rows["node"][first])
        assert isinstance(json.loads(query), list)
        matched = match_nodes(allgather, query)
        assert node in set(np.asarray(matched).tolist())
        await pilot.press("v")
        assert "bottom-up" in lines(app, "#head")[0]
        assert "bottom-up view; opened on the hot path" in lines(app, "#status")[0]
        top = app.model.path(app.model.current)[0]  # the function spending the most itself
        assert app.model.names[top] == "<unknown procedure> 0xa128 [libinfinipath.so.4.0]"
        await pilot.press("v")
        assert "flat" in lines(app, "#head")[0]
        assert "libmonitor.so.0.0.0" in lines(app, "#table")[0]

    drive(allgather, script)


def test_a_million_rows() -> None:
    """Only the rows on screen are drawn: a 1,000,000-node tree opens, expands its hot
    path, searches and scrolls to the end."""
    rng = np.random.default_rng(0)
    n = 1_000_000
    parent = np.concatenate([[-1], (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)])
    names = np.char.add("f", (np.arange(n) % 5000).astype(str))
    gf = GraphFrame.from_arrays(parent, {"name": names, "type": ["function"] * n},
                                {"node": np.arange(n), "time": rng.random(n)},
                                exclusive=["time"])

    async def script(app: ViewerApp, pilot) -> None:  # type: ignore[no-untyped-def]
        assert "opened on the hot path" in lines(app, "#status")[0]
        assert app.model.visible().size > 1
        await pilot.press("home", "h")
        assert "hot path" in lines(app, "#status")[0]
        await pilot.press("slash", *"^f4999$", "enter")
        assert cursor_line(app).endswith("f4999")
        await pilot.press("end")
        assert cursor_line(app)

    drive(gf, script)


def test_bottom_up_query_names_the_function_of_a_shared_name() -> None:
    """A bottom-up row of `<module> (small.py:1)` copies as name, file and line."""
    from pathlib import Path

    gf = read(Path(__file__).parent / "data" / "cprofile" / "cprofile-py312.pstats")
    model = ViewModel(gf, ViewOptions(), "bottom-up")
    row = int(np.nonzero((model.names == "<module> (small.py:1)") & (model.depth == 0))[0][0])
    model.toggle(row, True)
    caller = int(model._children(row)[0])
    query = model.query(caller)
    assert json.loads(query)[-1] == {"name": "<module>", "file": "small\\.py", "line": 1}
    hits = set(np.asarray(match_nodes(gf, query)).tolist())
    module = gf.nodes.filter((gf.nodes["name"] == "<module>") & (gf.nodes["file"] == "small.py"))
    assert set(module["node"].to_list()) <= hits


def test_ctrl_c_in_a_terminal_exits_130_with_one_line() -> None:
    """``cctool view`` on a real pseudo-terminal: the app reads Ctrl-C as a key (the
    terminal is raw), and the command ends as after SIGINT anywhere else."""
    import fcntl
    import os
    import struct
    import subprocess
    import sys
    import termios
    import threading
    import time
    from pathlib import Path

    profile = Path(__file__).parent / "data" / "cprofile" / "cprofile-py311.pstats"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "cctool", "view", str(profile)],
                            stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while b"expand/collapse" not in seen and time.monotonic() < deadline:  # the footer
            time.sleep(0.05)
        assert b"expand/collapse" in seen, bytes(seen[-500:])
        os.write(master, b"\x03")
        assert proc.wait(timeout=30) == 130
        reader.join(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    tail = bytes(seen).split(b"\x1b[?1049l")[-1]  # after the app left the alternate screen
    assert b"interrupted" in tail and b"Traceback" not in seen, tail
