"""``cctool scaling`` on the LULESH scaling series and the RAJA Performance Suite runs."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from rich.console import Console

from cctool.cli import cli
from cctool.render.scaling import Sparkline, sparkline
from tests.conftest import check_golden, json_rows

LASSEN_TUNINGS = ["--key", "tuning", "--where", "cluster=lassen",
                  "--where", "ProblemSizeRunParam=1048576"]


def invoke(*args: str):
    return CliRunner().invoke(cli, ["scaling", *args], catch_exceptions=False)


@pytest.fixture
def lulesh(data) -> Path:
    return data("mpi_scaling_cali")


@pytest.fixture
def rajaperf(data) -> Path:
    return data("rajaperf")


@pytest.mark.parametrize(("args", "name"), [
    (["--top", "8", "--width", "100"], "scaling.mpi_scaling_cali.top8.txt"),
    (["--efficiency", "--top", "5", "--width", "100"], "scaling.mpi_scaling_cali.efficiency.txt"),
    (["--percent", "--by", "name", "--top", "4", "--to", "markdown"],
     "scaling.mpi_scaling_cali.percent-name.md"),
])
def test_golden(lulesh: Path, update_goldens: bool, args: list[str], name: str) -> None:
    res = invoke(str(lulesh), *args)
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    check_golden(name, res.stdout, update_goldens)


def test_csv_has_a_column_per_run_and_empty_cells_for_missing_nodes(rajaperf: Path) -> None:
    res = invoke(str(rajaperf), *LASSEN_TUNINGS, "--to", "csv")
    assert res.exit_code == 0
    df = pl.read_csv(io.StringIO(res.stdout))
    assert df.columns == ["path", "unit", "block_128", "block_256"]
    only_256 = df.filter(pl.col("block_128").is_null())
    # Three kernels exist only in the block_256 build (absent from every block_128 file).
    assert sorted(only_256["path"].str.split(" / ").list.last()) == [
        "Basic_INDEXLIST", "Basic_INDEXLIST_3LOOP", "Basic_MAT_MAT_SHARED"]
    assert only_256.filter(pl.col("path").str.ends_with(" / Basic_INDEXLIST"))[
        "block_256"].item() == pytest.approx(0.004381)
    assert res.stderr.splitlines() == [
        "note: --where kept 11 of 18 runs",
        "note: tuning = block_128: mean of 10 runs (same key)",
    ]


def test_json_records_and_glob_input(lulesh: Path) -> None:
    res = invoke(str(lulesh / "*.cali"), "--speedup", "--to", "json", "--threshold", "0.1")
    assert res.exit_code == 0
    rows = json_rows(res.stdout)
    assert list(rows[0]) == ["path", "unit", "27", "64", "125", "216", "343"]
    assert rows[0]["path"] == "main"
    assert rows[0]["64"] == pytest.approx(47.238297 / 55.112951)
    assert all(r["27"] == 1.0 for r in rows)


def test_key_from_name_and_explicit_key(lulesh: Path) -> None:
    files = sorted(str(p) for p in lulesh.glob("*.cali"))
    by_name = invoke(*files, "--key-from-name", r"(\d+)_cores", "--to", "csv", "--top", "1")
    by_meta = invoke(*files, "--key", "jobsize", "--to", "csv", "--top", "1")
    assert by_name.stdout == by_meta.stdout
    assert by_name.stdout.splitlines()[0] == "path,unit,27,64,125,216,343"


def test_weak_speedup_is_a_usage_error(lulesh: Path) -> None:
    res = invoke(str(lulesh), "--speedup", "--weak")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "weak scaling has no speedup" in res.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--where", "cluster"], "bad filter"),
    (["--where", "cluster=nowhere"], "no run matches"),
    (["--key", "nosuchkey"], "no metadata key 'nosuchkey'"),
    (["--metric", "nosuch"], "unknown metric 'nosuch'"),
    (["-m", "Total time", "-m", "Avg time/rank"], "one metric"),
    (["--percent", "--speedup"], "percent applies to the table view"),
])
def test_bad_input_exits_2(lulesh: Path, args: list[str], message: str) -> None:
    res = invoke(str(lulesh), *args)
    assert res.exit_code == 2
    assert message in res.stderr


def svg_texts(path: Path) -> list[tuple[float, float, str]]:
    """(x, y, text) of every text of a matplotlib SVG (text kept as text, not paths)."""
    root = ET.fromstring(path.read_text())
    return [(float(e.get("x", "nan")), float(e.get("y", "nan")), e.text or "")
            for e in root.iter("{http://www.w3.org/2000/svg}text")]


def test_output_file_and_plots(lulesh: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out, svg = tmp_path / "table.md", tmp_path / "top.svg"
    res = invoke(str(lulesh), "--speedup", "--to", "markdown", "-o", str(out), "--plot",
                 str(svg), "--top", "3")
    assert res.exit_code == 0 and res.stdout == ""
    assert out.read_text().splitlines()[2] == "| path | 27 | 64 | 125 | 216 | 343 |"
    texts = svg_texts(svg)
    words = [t for _, _, t in texts]
    for label in ("main", "main / lulesh.cycle", "ideal",
                  "processes (mpi.world.size), log₂ scale", "speedup  T_base / T_n, log₂ scale"):
        assert label in words, label
    # Process counts on a log2 axis: ticks spaced by the logarithm of their ratio.
    ticks = {t: x for x, _, t in texts if t in ("27", "64", "125", "216", "343")}
    span = ticks["343"] - ticks["27"]
    for p in (64, 125, 216):
        expected = math.log2(p / 27) / math.log2(343 / 27)
        assert (ticks[str(p)] - ticks["27"]) / span == pytest.approx(expected, abs=1e-3)
    bad = invoke(str(lulesh), "--plot", str(tmp_path / "top.eps"))
    assert bad.exit_code == 2 and ".svg, .pdf or .png" in bad.stderr


@pytest.mark.parametrize("suffix,magic", [("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-")])
def test_png_and_pdf_plots(lulesh: Path, tmp_path: Path, suffix: str, magic: bytes) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / f"top.{suffix}"
    assert invoke(str(lulesh), "--plot", str(path), "--to", "csv").exit_code == 0
    assert path.read_bytes()[:len(magic)] == magic


def test_directory_of_runs_and_fallback_note(rajaperf: Path) -> None:
    res = invoke(str(rajaperf), "--to", "csv", "--top", "1")
    assert res.exit_code == 0
    assert res.stdout.splitlines()[0] == "path,unit,1"
    assert "ranks in the data = 1: mean of 18 runs" in res.stderr
    assert "--key KEY or --key-from-name REGEX" in res.stderr


def test_sparkline_levels_and_ascii_fallback() -> None:
    assert sparkline([1.0, 2.0, None, 8.0]) == "▁▂ █"
    assert sparkline([1.0, 2.0, None, 8.0], ascii_only=True) == "_. #"
    assert sparkline([3.0, 3.0]) == "▄▄"
    assert sparkline([None]) == " "

    class Ascii(io.StringIO):
        encoding = "ascii"

    out = Ascii()
    Console(file=out, color_system=None, legacy_windows=False).print(Sparkline([1.0, 8.0]))
    assert out.getvalue() == "_#\n"


def test_narrow_and_ascii_consoles(lulesh: Path) -> None:
    import cctool
    from cctool.ops.scaling import ScalingOptions, scaling
    from cctool.render.scaling import scaling_table

    narrow = invoke(str(lulesh), "--top", "3", "--width", "66")
    # the trend and a middle run go so that the numbers fit, and the table says so
    assert "trend" not in narrow.stdout.splitlines()[2]
    assert narrow.stdout.endswith("(left out at width 66: trend, 125)\n")
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 66
    runs = [(str(p), cctool.read(p)) for p in sorted(lulesh.glob("*.cali"))]

    class Ascii(io.StringIO):
        encoding = "ascii"

    out = Ascii()
    Console(file=out, width=90, color_system=None, legacy_windows=False).print(
        scaling_table(scaling(runs, ScalingOptions(top=6))))
    text = out.getvalue()
    assert text.isascii() and "main / ~ / CalcForceForNodes " in text


# ------------------------------------------------------------------------- --group-by
SCALING_DATA = Path(__file__).parent / "data" / "caliper-scaling"
LACKING = ("warning: 1 of 7 runs have no metadata key 'schedule': they are the group "
           "schedule = (none)")


@pytest.mark.parametrize("view", ["--table", "--speedup", "--efficiency"])
@pytest.mark.parametrize("to", ["csv", "json"])
def test_group_by_records_equal_each_group_s_where_run(view: str, to: str) -> None:
    grouped = invoke(str(SCALING_DATA), "--group-by", "schedule", view, "--to", to)
    assert grouped.exit_code == 0 and grouped.stderr.splitlines() == [LACKING]
    rows = _records(grouped.stdout, to)
    assert list(rows[0]) == ["schedule", "path", "unit", "1", "2", "4"]
    for label in ("even", "skewed"):
        alone = invoke(str(SCALING_DATA), "--where", f"schedule={label}", view, "--to", to)
        mine = [{k: v for k, v in r.items() if k != "schedule"} for r in rows
                if r["schedule"] == label]
        assert mine == _records(alone.stdout, to)
    untagged = invoke(str(SCALING_DATA / "untagged"), view, "--to", to)
    none = [{k: v for k, v in r.items() if k not in ("schedule", "1", "4")} for r in rows
            if r["schedule"] == "(none)"]
    assert none == _records(untagged.stdout, to)


def _records(text: str, to: str) -> list[dict]:
    if to == "json":
        return json_rows(text)
    return pl.read_csv(io.StringIO(text), infer_schema=False).to_dicts()


def test_group_by_text_has_a_titled_table_per_group(update_goldens: bool) -> None:
    res = invoke(str(SCALING_DATA), "--group-by", "schedule", "--width", "100")
    assert res.exit_code == 0 and res.stderr.splitlines() == [LACKING]
    titles = [line for line in res.stdout.splitlines() if line.startswith("schedule = ")]
    assert [t.split(":")[0] for t in titles] == [
        "schedule = even", "schedule = skewed", "schedule = (none)"]
    check_golden("scaling.caliper-scaling.group-by-schedule.txt", res.stdout, update_goldens)


def test_group_by_markdown_plot_and_notes(rajaperf: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    svg = tmp_path / "groups.svg"
    res = invoke(str(rajaperf), "--group-by", "tuning", "--key", "ProblemSizeRunParam",
                 "--to", "markdown", "--top", "2", "--plot", str(svg))
    assert res.exit_code == 0
    heads = [line for line in res.stdout.splitlines() if line.startswith("## ")]
    assert heads == ["## tuning = block_128", "## tuning = block_256", "## tuning = default"]
    assert res.stderr.splitlines() == [
        "note: tuning = block_128: ProblemSizeRunParam = 1048576: mean of 10 runs (same key)",
        "note: tuning = default: ProblemSizeRunParam = 1048576: mean of 4 runs (same key)"]
    titles = [t for _, _, t in svg_texts(svg) if t.startswith("tuning = ")]
    assert [t.split(":")[0] for t in titles] == [
        "tuning = block_128", "tuning = block_256", "tuning = default"]


def test_group_by_options_are_the_shared_ones() -> None:
    from cctool.cli._ensemble import group_by_option, where_option
    from cctool.cli.runs import runs
    from cctool.cli.scaling import scaling

    names = {p.name: p for p in scaling.params}
    for option in (where_option, group_by_option):
        shared = option(lambda: None).__click_params__[0]  # type: ignore[attr-defined]
        assert names[shared.name].help == shared.help
        assert shared.name in {p.name for p in runs.params}
    res = invoke(str(SCALING_DATA), "--group-by", "nosuch")
    assert res.exit_code == 2 and "no run has metadata key 'nosuch'" in res.stderr
