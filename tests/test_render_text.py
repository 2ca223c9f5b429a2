"""Text renderers on hostile names, narrow and wide terminals, deep trees."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.render import printable

EVIL = ["main", "\x1b[31mred\x1b[0m", "evil\n└── forged 99 s", "tab\there", "rtl\u202eevil"]


def _save(tmp_path: Path, name: str, scale: float = 1.0) -> Path:
    from cctool.graphframe import GraphFrame
    from cctool.saved import dumps

    gf = GraphFrame.from_arrays(
        [-1, 0, 0, 1, 1],
        {"name": EVIL, "type": ["function"] * 5},
        {"node": [0, 1, 2, 3, 4, 0, 1, 2, 3, 4], "rank": [0] * 5 + [1] * 5,
         "time": [x * scale for x in (1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 4.0, 1.0, 8.0, 5.0)]},
        exclusive=["time"],
    )
    path = tmp_path / name
    path.write_bytes(dumps(gf))
    return path


def test_printable_escapes_controls() -> None:
    assert printable("a\x1b[31mb\nc\td\u202ee\x7f") == "a\\x1b[31mb\\nc\\td\\u202ee\\x7f"
    assert printable("std::vector<int>::push_back é ◀") == "std::vector<int>::push_back é ◀"


@pytest.mark.parametrize("args", [
    ["tree"], ["tree", "--flat"], ["tree", "--bottom-up"], ["hot-path"],
    ["groupby", "--by", "name", "--to", "table"], ["groupby", "--by", "name"],
    ["imbalance"], ["imbalance", "--verbose"], ["query", '["*", {"name": "evil.*"}]', "--to", "tree"],
    ["diff", "B"], ["diff", "B", "--top", "5"], ["diff", "B", "--to", "markdown"],
])
def test_no_control_character_reaches_the_terminal(tmp_path: Path, args: list[str]) -> None:
    a, b = _save(tmp_path, "a.cct"), _save(tmp_path, "b.cct", 2.0)
    argv = [args[0], str(a), *[str(b) if x == "B" else x for x in args[1:]], "--width", "150"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\x1b" not in out and "\t" not in out and "\u202e" not in out
    assert "forged" not in out or "evil\\n" in out
    for line in out.splitlines():
        assert "forged" not in line or "evil\\n" in line  # never a line of its own
