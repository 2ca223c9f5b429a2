"""Text renderers on hostile names, narrow and wide terminals, deep trees."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.render import printable
from cctool.render.text import encodable, strip_nested

EVIL = ["main", "\x1b[31mred\x1b[0m", "evil\n└── forged 99 s", "tab\there", "rtl\u202eevil"]


def _save(tmp_path: Path, name: str, scale: float = 1.0) -> Path:
    from cctool.graphframe import GraphFrame
    from cctool.saved import dumps

    gf = GraphFrame.from_arrays(
        [-1, 0, 0, 1, 1],
        {"name": EVIL, "type": ["function"] * 5},
        {
            "node": [0, 1, 2, 3, 4, 0, 1, 2, 3, 4],
            "rank": [0] * 5 + [1] * 5,
            "time": [x * scale for x in (1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 4.0, 1.0, 8.0, 5.0)],
        },
        exclusive=["time"],
    )
    path = tmp_path / name
    path.write_bytes(dumps(gf))
    return path


def test_printable_escapes_controls() -> None:
    assert printable("a\x1b[31mb\nc\td\u202ee\x7f") == "a\\x1b[31mb\\nc\\td\\u202ee\\x7f"
    assert printable("std::vector<int>::push_back é ◀") == "std::vector<int>::push_back é ◀"


@pytest.mark.parametrize(
    "args",
    [
        ["tree"],
        ["tree", "--flat"],
        ["tree", "--bottom-up"],
        ["hot-path"],
        ["groupby", "--by", "name", "--to", "table"],
        ["groupby", "--by", "name"],
        ["imbalance"],
        ["imbalance", "--verbose"],
        ["query", '["*", {"name": "evil.*"}]', "--to", "tree"],
        ["diff", "B"],
        ["diff", "B", "--top", "5"],
        ["diff", "B", "--to", "markdown"],
    ],
)
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


def test_diff_percent_sorts_by_the_change_and_prints_percent(data) -> None:
    a, b = data("hpctoolkit-cpi-database"), data("hpctoolkit-allgather-database")
    res = CliRunner().invoke(
        cli, ["diff", str(a), str(b), "--percent", "--depth", "2", "--no-legend", "--width", "100"]
    )
    assert res.exit_code == 0, res.output
    tree = res.stdout.split("\n\n", 1)[1].splitlines()
    # <program root> carries the +22.16 s of the total change; the roots only in B (inf %)
    # carry less, so they come after it even though their percentage is larger.
    assert tree[0] == "554% <program root>"
    assert tree[1] == "└── 554% main [+5]"


@pytest.mark.parametrize(
    "args",
    [
        ["tree", "--flat"],
        ["hot-path"],
        ["imbalance", "--verbose"],
        ["groupby", "--by", "name", "--to", "table"],
        ["diff", "B", "--top", "3"],
        ["tree"],
    ],
)
def test_no_line_ends_in_spaces(tmp_path: Path, args: list[str]) -> None:
    a, b = _save(tmp_path, "a.cct"), _save(tmp_path, "b.cct", 2.0)
    argv = [args[0], str(a), *[str(b) if x == "B" else x for x in args[1:]], "--width", "120"]
    out = CliRunner().invoke(cli, argv).stdout
    assert out and [line for line in out.splitlines() if line != line.rstrip()] == []


def test_legend_has_swatches_only_with_color(tiny) -> None:
    from cctool.options import TreeOptions
    from cctool.render import to_text, tree_renderable

    view = tree_renderable(tiny, TreeOptions())
    plain = to_text(view, width=100)
    assert "█" not in plain and "Legend (values: time (inc)" in plain
    colored = to_text(view, width=100, color=True)
    assert colored.count("█") == 6


def test_all_zero_legend_says_so(tmp_path: Path) -> None:
    from cctool.graphframe import GraphFrame
    from cctool.options import TreeOptions
    from cctool.render import to_text, tree_renderable

    gf = GraphFrame.from_arrays(
        [-1, 0],
        {"name": ["a", "b"], "type": ["function"] * 2},
        {"node": [0, 1], "time": [0.0, 0.0]},
        exclusive=["time"],
    )
    text = to_text(tree_renderable(gf, TreeOptions()), width=80, color=True)
    assert "every value shown is 0" in text and "0 - 0" not in text and "█" not in text


def test_nodes_with_hidden_children_are_marked(tiny) -> None:
    from cctool.options import TreeOptions
    from cctool.render import to_text, tree_renderable

    text = to_text(tree_renderable(tiny, TreeOptions(depth=2)), width=80)
    lines = text.splitlines()
    # main shows solve and io; solve hides mpi_send (io and other have no children).
    assert [line.split()[-1] for line in lines[:4]] == ["main", "[+1]", "io", "other"]
    assert "[+N]: N children not shown" in text
    full = to_text(tree_renderable(tiny, TreeOptions()), width=80)
    assert "[+" not in full


LONG = (
    "std::vector<std::pair<int, double>, std::allocator<std::pair<int, double> > >::"
    "push_back(std::pair<int, double> const&)"
)


def _chain(names: list[str]):
    from cctool.graphframe import GraphFrame

    n = len(names)
    return GraphFrame.from_arrays(
        [-1, *range(n - 1)],
        {"name": names, "type": ["function"] * n},
        {"node": list(range(n)), "time": [1.0] * n},
        exclusive=["time"],
    )


def test_names_fit_the_width_not_a_fixed_60() -> None:
    from cctool.options import TreeOptions
    from cctool.render import to_text, tree_renderable

    view = tree_renderable(_chain(["main", LONG]), TreeOptions(legend=False))
    assert LONG in to_text(view, width=200)
    narrow = to_text(view, width=60).splitlines()
    assert narrow[1].endswith("std::vector<…>::push_back(…)")  # C++-aware, as the HTML view
    assert max(len(line) for line in narrow) <= 60


def test_deep_trees_keep_their_names() -> None:
    from cctool.options import TreeOptions
    from cctool.render import to_text, tree_renderable

    names = [f"level{d}" for d in range(80)]
    lines = to_text(
        tree_renderable(_chain(names), TreeOptions(legend=False)), width=100
    ).splitlines()
    assert len(lines) == 80
    for d, line in enumerate(lines):
        assert line.endswith(f" level{d}"), line
        assert len(line) <= 100
    assert lines[79].startswith("»")  # the outer levels fold behind their own mark


def test_imbalance_fits_80_columns(data) -> None:
    db = data("hpctoolkit-allgather-database")
    res = CliRunner().invoke(cli, ["imbalance", str(db), "--width", "80"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    body = lines[4:12]
    assert all(len(line) <= 80 for line in lines)
    # Values are never cut: each row shows mean and max in full, with their unit.
    assert body[0].split() == [
        "1088",
        "MPIC_Wait",
        "419.8",
        "ms",
        "793.5",
        "ms",
        "178.5",
        "ms",
        "1.890x",
    ]
    assert any(line.startswith("(left out at width 80: histogram, top, cv)") for line in lines)
    wide = CliRunner().invoke(cli, ["imbalance", str(db), "--width", "200"]).stdout
    assert "<unknown procedure> 0x33e96 [libpsm_infinipath.so.1.16]" in wide
    assert "left out" not in wide


def _strip_nested_per_character(s: str, open_: str, close: str, repl: str) -> str:
    """strip_nested's definition, one character at a time."""
    name_end = re.compile(r"[A-Za-z0-9_:>\]]")
    out: list[str] = []
    depth = 0
    for ch in s:
        if ch == open_ and (depth > 0 or bool(out and name_end.match(out[-1][-1:]))):
            if depth == 0:
                out.append(repl)
            depth += 1
        elif ch == close and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out) if depth == 0 else s


def test_strip_nested_is_its_per_character_definition() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        s = "".join(rng.choice("ab:_<>()] x1.-\u2026") for _ in range(rng.randint(0, 14)))
        pairs = (("<", ">", "<\u2026>"), ("(", ")", "(\u2026)"), ("(", ")", "()"))
        for open_, close, repl in pairs:
            assert strip_nested(s, open_, close, repl) == _strip_nested_per_character(
                s, open_, close, repl
            ), s


def test_a_stdout_that_cannot_write_the_symbols_gets_them_in_ascii() -> None:
    """PYTHONIOENCODING=ascii or a C locale: every command's text still prints (it stopped
    with an encoding error on the first "×" or "µ")."""
    import os
    import subprocess
    import sys

    db = Path(__file__).parent / "data" / "hpctoolkit" / "prof2-profile-db"
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "100"}
    for args in (("tree", "--depth", "2"), ("imbalance",), ("hot-path",)):
        done = subprocess.run([sys.executable, "-m", "cctool", args[0], str(db), *args[1:]],
                              capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.isascii() and done.stdout.strip(), done.stdout
    assert encodable("12.5 µs, 4 × 2 ▁█", "ascii") == "12.5 us, 4 x 2 _#"
    assert encodable("naïve", "ascii") == "na?ve"  # a name's own character
    assert encodable("4 × 2", "utf-8") == "4 × 2"
