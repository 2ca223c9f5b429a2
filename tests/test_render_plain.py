"""Plain writers for large outputs print what Rich prints on a console without color."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

import cctool
import cctool.render as render
from cctool.cli import cli
from cctool.options import TreeOptions
from cctool.render import plain, plain_rows

HERE = Path(__file__).resolve().parent / "data"


class _Ascii(io.StringIO):
    encoding = "ascii"


def rich_text(renderable: object, width: int, ascii_only: bool) -> str:
    buf = _Ascii() if ascii_only else io.StringIO()
    con = Console(
        file=buf,
        width=width,
        color_system=None,
        no_color=True,
        emoji=False,
        highlight=False,
        legacy_windows=False,
    )
    con.print(render.Trimmed(renderable))
    return buf.getvalue()


def test_distinct_guides_in_order_however_wide_their_codes() -> None:
    """Guides are numbered by (levels, code), codes of up to 60 flags included (packed with
    the levels in one number, or ranked first when they do not fit)."""
    from cctool.render.guides import _by_levels_and_code

    rng = np.random.default_rng(7)
    for top in (50, 1 << 40, 1 << 61):
        size = rng.integers(0, 30, 500).astype(np.int64)
        code = rng.integers(0, top, 500).astype(np.int64)
        code[::7] = code[3]  # shared codes
        pairs, which = _by_levels_and_code(size, code)
        assert pairs == sorted(set(zip(size.tolist(), code.tolist(), strict=True)))
        assert [pairs[w] for w in which.tolist()] == list(
            zip(size.tolist(), code.tolist(), strict=True)
        )


@pytest.mark.parametrize("ascii_only", [False, True])
@pytest.mark.parametrize("width", [30, 80, 200])
def test_plain_tree_lines_are_richs(
    width: int, ascii_only: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plain_rows, "CHUNK_LINES", 7)  # lines joined in several pieces
    deep = tmp_path / "deep.folded"  # 300 frames: guides fold at every width here
    deep.write_text(
        "main;"
        + ";".join(f"frame_with_a_long_name_{i}" for i in range(300))
        + " 5\nmain;g 3\nmain;h;i 2\nmain;h;\u5bbd\u540d\u5b57\u5bbd\u540d 1\n"
        + "main;std::vector<int>::push_back(int const&)_"
        + "x" * 90
        + " 1\n"
    )
    for path in (HERE / "folded" / "python.folded", deep):
        gf = cctool.read(path, fmt="folded")
        # marks after names: hidden children (depth), the hot path (highlight)
        marked = TreeOptions(depth=4, highlight=(0, 1, 2))
        for opts in (TreeOptions(), TreeOptions(full_names=True), marked):
            r = render.tree_renderable(gf, opts)
            assert render.plain_text(r, width, ascii_only) == rich_text(r, width, ascii_only)


def test_guide_texts_are_each_rows() -> None:
    """Every row's guides drawn at once read as each row's drawn alone, folded or not."""
    from cctool.render import guides

    rng = np.random.default_rng(5)
    for n, deepest in ((0, 1), (1, 1), (400, 3), (400, 40), (400, 400)):
        depths = [0]
        for _ in range(n - 1):
            depths.append(int(rng.integers(0, min(depths[-1] + 1, deepest) + 1)))
        codes = guides.GuideCodes(depths[:n])
        for width, ascii_only in itertools.product((0, 9, 30, 80, 200, 600), (False, True)):
            pieces = [g[1 if ascii_only else 0] for g in guides._GUIDES]
            each = [guides._guide_text(codes, i, pieces, width, ascii_only) for i in range(n)]
            assert guides.guide_texts(codes, width, ascii_only) == each


@pytest.mark.parametrize("ascii_only", [False, True])
@pytest.mark.parametrize("width", [30, 80, 200])
def test_plain_view_lines_are_richs(
    width: int, ascii_only: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plain_rows, "CHUNK_LINES", 7)  # lines joined in several pieces
    from cctool.ops.views import ViewOptions, compute
    from cctool.render.views import view_renderable

    # Callers 130 deep, a wide name, a name to elide. The bottom-up view of a chain has rows
    # quadratic in its depth (8,700 here; 300 deep made 45,000, drawn twice by Rich per case):
    # 130 still folds at every width with counts of one, two and three digits.
    deep = tmp_path / "deep.folded"
    deep.write_text(
        "main;"
        + ";".join(f"frame_with_a_long_name_{i}" for i in range(130))
        + " 5\nmain;g 3\nmain;h;\u5bbd\u540d\u5b57\u5bbd\u540d\u5b57 2\n"
        + "main;std::vector<int>::push_back(int const&)_"
        + "x" * 200
        + " 1\n"
    )
    for path in (HERE / "folded" / "python.folded", deep):
        gf = cctool.read(path, fmt="folded")
        for kind in ("bottom-up", "flat"):
            view = compute(gf, kind, ViewOptions())
            for opts in (TreeOptions(), TreeOptions(full_names=True)):
                r = view_renderable(gf, view, opts)
                got = render.plain_text(r, width, ascii_only)
                assert got is not None
                assert got == rich_text(r, width, ascii_only)


@pytest.mark.parametrize(
    "args",
    [
        ["stats", "caliper-ensemble"],
        ["runs", "caliper-ensemble"],
        ["hot-path", "folded/python.folded", "--from", "folded"],
        ["groupby", "folded/python.folded", "--from", "folded", "--by", "name"],
    ],
)
def test_plain_tables_are_richs(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = [args[0], str(HERE / args[1]), *args[2:]]
    for width in ("40", "120"):
        monkeypatch.setattr(plain, "PLAIN_ROWS", 10**9)
        want = CliRunner().invoke(cli, [*cmd, "--width", width])
        monkeypatch.setattr(plain, "PLAIN_ROWS", 0)
        got = CliRunner().invoke(cli, [*cmd, "--width", width])
        assert want.exit_code == got.exit_code == 0, want.output
        assert got.stdout == want.stdout


def test_narrow_characters_are_one_cell_in_rich() -> None:
    from rich.cells import cell_len

    from cctool.render.treelines import _NARROW

    assert all(cell_len(ch) == 1 for ch in _NARROW)


def test_view_guides_from_parents_are_from_depths() -> None:
    """A view's or a tree's guide links read from its parents are those its depths give."""
    from cctool.ops.views import ViewOptions, compute
    from cctool.render import guides
    from cctool.render.rows import tree_rows

    gf = cctool.read(HERE / "folded" / "python.folded", fmt="folded")
    for kind in ("bottom-up", "flat", "top-down"):
        rows = compute(gf, kind, ViewOptions()).rows
        depths = rows["depth"].to_numpy()
        parents = rows["parent"].fill_null(-1).to_numpy()
        _same_links(guides.GuideCodes(depths, parents), guides.GuideCodes(depths))
    for opts in (TreeOptions(), TreeOptions(depth=3), TreeOptions(threshold=0.2)):
        rows = tree_rows(gf, opts)
        up = render.parent_rows(rows)
        assert up is not None
        depths = rows["depth"].to_numpy()
        _same_links(guides.GuideCodes(depths, up), guides.GuideCodes(depths))


def _same_links(got: object, want: object) -> None:
    got_links, want_links = getattr(got, "arrays", None), getattr(want, "arrays", None)
    assert got_links is not None and want_links is not None and want_links[0].size > 3
    for a, b in zip(got_links, want_links, strict=True):
        assert np.array_equal(a, b)
