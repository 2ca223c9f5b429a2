"""Every table command at 80 and 200 columns (and ``runs`` at 120): golden captures, no line
wider than the console, and the layout's promises (numbers whole, one line per row)."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from cctool.cli import cli
from cctool.render import to_text
from cctool.render.layout import Column, FitTable, elide_path
from tests.conftest import SHARED_DATA, check_golden

ENSEMBLE = Path(__file__).parent / "data" / "caliper-ensemble"
TRIALS = "rajaperf/lassen/clang10.0.1_nvcc10.2.89_1048576"
ALLGATHER = "hpctoolkit-allgather-database"
AVG = "Avg time/rank (inc)"

# name -> (arguments, folders of ../shared/data they read; paths are relative to a copy)
TABLES = {
    "stats": (["stats", TRIALS, "--where", "tuning=block_128", "--depth", "3"], ["rajaperf"]),
    "stats-groups": (["stats", "rajaperf/lassen", "--group-by", "tuning", "--depth", "2"],
                     ["rajaperf"]),
    "runs": (["runs", "rajaperf"], ["rajaperf"]),
    "runs-groups": (["runs", "rajaperf", "--group-by", "variant"], ["rajaperf"]),
    "scaling": (["scaling", "mpi_scaling_cali", "--top", "8"], ["mpi_scaling_cali"]),
    "diff-top": (["diff", "mpi_scaling_cali/27_cores.cali", "mpi_scaling_cali/343_cores.cali",
                  "-m", AVG, "--top", "8"], ["mpi_scaling_cali"]),
    "diff-runs": (["diff", str(ENSEMBLE / "base"), str(ENSEMBLE / "slow"), "--top", "8"], []),
    "imbalance": (["imbalance", ALLGATHER, "--top", "8"], [ALLGATHER]),
    "flat": (["tree", ALLGATHER, "--flat", "--by", "module"], [ALLGATHER]),
    "hot-path": (["hot-path", ALLGATHER], [ALLGATHER]),
    "groupby": (["groupby", ALLGATHER, "--by", "name", "--to", "table"], [ALLGATHER]),
}
WIDTHS = {name: (80, 120, 200) if name.startswith("runs") else (80, 200) for name in TABLES}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the folders the tables read (relative paths keep the captures stable)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real profiles not available: {SHARED_DATA} is absent")
    root = tmp_path_factory.mktemp("shared")
    for name in {f for _, folders in TABLES.values() for f in folders}:
        shutil.copytree(SHARED_DATA / name, root / name)
    return root


@pytest.mark.parametrize(("name", "width"),
                         [(n, w) for n in sorted(TABLES) for w in WIDTHS[n]])
def test_table_fits(name: str, width: int, shared: Path, update_goldens: bool,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    args, _ = TABLES[name]
    monkeypatch.chdir(shared)
    res = CliRunner().invoke(cli, [*args, "--width", str(width)])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= width, name
    text = res.stdout.replace(str(ENSEMBLE), "caliper-ensemble")
    check_golden(f"tables/{name}.{width}.txt", text, update_goldens)


def test_numbers_are_never_cut_and_rows_keep_one_line() -> None:
    numbers = [f"{i * 1234.567:.3f} ms" for i in range(1, 6)]
    names = [f"main / solve / kernel_{'x' * 10 * i} / MPI_Wait" for i in range(1, 6)]
    table = FitTable([Column("call path", names, "path"),
                      *(Column(f"v{k}", numbers) for k in range(4)),
                      Column("note", ["a long remark of text"] * 5, "text")],
                     optional=["note", "v3", "v2"])
    for width in (40, 60, 80, 120):
        text = to_text(table, width=width)
        rows = text.splitlines()[2:7]
        assert len(rows) == 5
        for row, value in zip(rows, numbers, strict=True):
            # v0 and v1 are never optional; at 40 columns v1 goes whole (and is named)
            assert row.count(value) >= (1 if width < 60 else 2), (width, row)
            assert "MPI_Wait" in row  # the leaf stays
        assert max(map(len, text.splitlines())) <= max(width, 0)


def test_columns_that_cannot_fit_go_whole_and_are_named() -> None:
    table = FitTable([Column("name", ["a"]), *(Column(f"c{k}", ["123456789"]) for k in range(8))])
    out = Console(width=40, color_system=None, legacy_windows=False, file=io.StringIO())
    out.print(table)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert re.search(r"a(\s+123456789){3}\n", text)
    assert "(left out at width 40: c7 and 4 more)" in text


@pytest.mark.parametrize(("width", "expected"), [
    (80, "main / solve / LagrangeNodal / CalcForceForNodes / MPI_Wait"),
    (40, "main / … / CalcForceForNodes / MPI_Wait"),
    (30, "main / … / MPI_Wait"),
    (8, "MPI_Wait"),
])
def test_elide_path_keeps_the_leaf_and_drops_middle_frames(width: int, expected: str) -> None:
    path = "main / solve / LagrangeNodal / CalcForceForNodes / MPI_Wait"
    assert elide_path(path, width) == expected


def test_elide_path_shortens_the_one_frame_it_cannot_keep() -> None:
    path = "lassen/clang10.0.1_nvcc10.2.89_1048576/1/Base_CUDA-block_128.cali"
    short = elide_path(path, 50, "/")
    assert len(short) <= 50 and short.startswith("lassen/clang") and short.endswith(
        "/1/Base_CUDA-block_128.cali") and "…" in short


def test_deep_trees_fold_with_a_mark_and_a_legend_line_of_their_own() -> None:
    from cctool.graphframe import GraphFrame
    from cctool.options import TreeOptions
    from cctool.render import tree_renderable

    n = 40
    gf = GraphFrame.from_arrays(list(range(-1, n - 1)),
                                {"name": [f"f{i}" for i in range(n)], "type": ["function"] * n},
                                {"node": list(range(n)), "time": [1.0] * n}, exclusive=["time"])
    text = to_text(tree_renderable(gf, TreeOptions(depth=30)), width=80)
    assert "»20 " in text and "[+1]" in text  # folded levels vs hidden children
    assert "  »N: N outer levels of the guides folded away so that the name fits" in text
    assert "  [+N]: N children not shown" in text
    assert "»" not in to_text(tree_renderable(gf, TreeOptions(depth=5)), width=80)


def test_wide_titles_break_between_clauses() -> None:
    from cctool.render.layout import wrap_title

    title = ("Load imbalance of time (inc) across 10 ranks; nodes with max ≥ 1% of the largest, "
             "sorted by max − mean")
    assert wrap_title(title, 80) == ["Load imbalance of time (inc) across 10 ranks;",
                                     "nodes with max ≥ 1% of the largest, sorted by max − mean"]
    scaling = "Avg time/rank (inc) [s] (mean over ranks, each rank's threads summed) by ranks"
    assert wrap_title(scaling, 75) == [scaling[:-9], "by ranks"]  # never inside parentheses
    assert wrap_title("short", 80) == ["short"]
