"""`cctool diff` and `cctool div`: golden text, records, values checked by hand.

Hand-checked numbers come from `cctool tree <db> --to json -m "time (inc)"` of each database:
cpi's only root `<program root>` has time (inc) 3998242 usec; allgather's three roots have
17786 (`<partial call paths>`), 0 (`<no thread>`) and 26140582 (`<program root>`), so B's total
is 26158368 usec; main/MPI_Finalize is 3998242 in cpi and 10008070 in allgather. cctool holds
times in seconds, so each is compared as value * 1e-6.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden

CPI, ALLGATHER = "hpctoolkit-cpi-database", "hpctoolkit-allgather-database"
SCALING = "mpi_scaling_cali"
AVG = "Avg time/rank (inc)"

GOLDEN = {
    "diff.cpi-allgather.depth4": ("diff", (CPI, ALLGATHER), ["--depth", "4"]),
    "diff.cpi-allgather.percent": ("diff", (CPI, ALLGATHER), ["--percent", "--depth", "5"]),
    "diff.cpi-allgather.reverse-normalize": ("diff", (CPI, ALLGATHER),
                                             ["--reverse", "--normalize", "--depth", "3"]),
    "diff.cpi-allgather.top5": ("diff", (CPI, ALLGATHER), ["--top", "5"]),
    "diff.scaling-27-64": ("diff", (f"{SCALING}/27_cores.cali", f"{SCALING}/64_cores.cali"),
                           ["-m", AVG, "--precision", "6", "--depth", "4"]),
    "div.scaling-27-64": ("div", (f"{SCALING}/27_cores.cali", f"{SCALING}/64_cores.cali"),
                          ["-m", AVG, "--depth", "3"]),
    "diff.tau-scorep.by-function": ("diff", ("tau-cpi-mpi", "scorep-cpi-cubex"),
                                    ["--by", "function", "-m", "time"]),
}


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def pair(data, a: str, b: str) -> tuple[str, str]:
    """Copies of two inputs (a file inside a data folder copies the whole folder)."""
    def one(name: str) -> str:
        folder, _, rest = name.partition("/")
        path = data(folder)
        return str(path / rest) if rest else str(path)

    return one(a), one(b)


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_golden(case: str, data, update_goldens: bool) -> None:
    cmd, inputs, flags = GOLDEN[case]
    a, b = pair(data, *inputs)
    res = run(cmd, a, b, "--color", "never", "--width", "100", *flags)
    assert res.exit_code == 0, res.stderr
    if "cpi-allgather" in case:  # two different programs: cctool says so
        assert res.stderr == (
            "warning: A and B share 9 call paths of A's 34 and B's 1,474: most values are "
            "compared with nothing (check that these are runs of the same program)\n"
            "warning: A has 4 ranks × 1 thread and B 10 × 2: each is combined over its own "
            "ranks before comparing\n")
    else:
        assert res.stderr == ""
    check_golden(f"{case}.txt", res.stdout, update_goldens)


def test_summary_and_markers_by_hand(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    res = run("diff", a, b, "--depth", "3")
    lines = res.stdout.splitlines()
    assert lines[0] == f"A: {CPI}   B: {ALLGATHER}"
    assert lines[1] == "total time (inc): A 3.998 s, B 26.16 s, B − A +22.16 s (+554%)"
    # 26140582 - 3998242 usec, no marker: both; 553.8 % of A's total, 3998242 usec
    assert "22.14 s  554% <program root>" in lines[3]
    assert any(line.endswith("16.02 s  401% Loop@osu_allgather.c:86 ▶ [+1]")
               for line in lines)
    assert "◀ only in A (the first profile)" in res.stdout  # explained without color


def test_json_rows_and_totals(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    out = json.loads(run("diff", a, b, "--to", "json").stdout)
    totals = out["totals"]["time (inc)"]
    assert totals == {"A": pytest.approx(3.998242), "B": pytest.approx(26.158368), "unit": "s"}
    rows = {r["path"]: r for r in out["rows"]}
    fin = rows["<program root> / main / MPI_Finalize"]
    assert fin["status"] == "both"
    assert (fin["time (inc) [A]"], fin["time (inc) [B]"]) == pytest.approx((3.998242, 10.00807))
    assert fin["time (inc) [change]"] == pytest.approx(6.009828)
    assert fin["time (inc) [%]"] == pytest.approx(6009828 / 3998242 * 100)
    left = rows["<program root> / main / MPI_Finalize / PMPI_Finalize / MPID_Finalize / "
                "MPIDI_CH3_Finalize"]
    assert (left["status"], left["time (inc) [change]"]) == ("left", pytest.approx(-3.998242))
    right = rows["<program root> / main / Loop@osu_allgather.c:86"]
    assert (right["status"], right["time (inc) [B]"], right["time (inc) [%]"]) == (
        "right", pytest.approx(16.024775), None)  # +inf% has no JSON spelling
    assert len(out["rows"]) == 34 + 1474 - 9
    assert out["gates"] == []


def test_top_csv_is_sorted_by_size_of_change(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    res = run("diff", a, b, "--to", "csv", "--top", "3")
    lines = res.stdout.splitlines()
    assert lines[0].startswith("node,parent,name,depth,status,time (inc) [A]")
    assert [line.split(",")[2] for line in lines[1:]] == ["<program root>", "main",
                                                          "Loop@osu_allgather.c:86"]


def test_reverse_flips_direction(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    out = json.loads(run("diff", a, b, "--to", "json", "--reverse").stdout)
    rows = {r["path"]: r for r in out["rows"]}
    fin = rows["<program root> / main / MPI_Finalize"]
    assert fin["time (inc) [A]"] == pytest.approx(3.998242)  # A, B keep their meaning
    assert fin["time (inc) [change]"] == pytest.approx(-6.009828)
    assert fin["time (inc) [%]"] == pytest.approx(-6009828 / 10008070 * 100)


def test_normalize_scales_b_to_a_total(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    res = run("diff", a, b, "--normalize", "--to", "json")
    rows = {r["path"]: r for r in json.loads(res.stdout)["rows"]}
    scale = 3998242 / 26158368
    fin = rows["<program root> / main / MPI_Finalize"]
    assert fin["time (inc) [B]"] == pytest.approx(10.008070 * scale)


def test_div_markdown_and_values(data) -> None:
    a, b = pair(data, f"{SCALING}/27_cores.cali", f"{SCALING}/64_cores.cali")
    res = run("div", a, b, "-m", AVG, "--to", "markdown", "--top", "3")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("## cctool div\n")
    assert "A / B" in res.stdout
    out = json.loads(run("div", a, b, "-m", AVG, "--to", "json").stdout)
    rows = {r["path"]: r for r in out["rows"]}
    allreduce = rows["main / lulesh.cycle / TimeIncrement / MPI_Allreduce"]
    assert allreduce[f"{AVG} [ratio]"] == pytest.approx(7.86151 / 11.411479)


def test_output_file_and_every_format(data, tmp_path) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    for to in ("tree", "table", "json", "csv", "markdown"):
        out = tmp_path / f"diff.{to}"
        res = run("diff", a, b, "--to", to, "-o", str(out), "--depth", "2")
        assert res.exit_code == 0 and res.stdout == "", (to, res.stderr)
        assert out.stat().st_size > 0


def test_saved_cct_inputs_and_stdin(data, tmp_path) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    saved = tmp_path / "a.cct"
    assert run("read", a, "-o", str(saved)).exit_code == 0
    stdin = run("read", b, "-o", "-").stdout_bytes
    res = run("diff", str(saved), "-", "--to", "json", input=stdin)
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["totals"]["time (inc)"]["B"] == pytest.approx(26.158368)
    both = run("diff", "-", "-", input=stdin)
    assert both.exit_code == 2 and "stdin" in both.stderr


def test_unknown_metric_is_bad_input(data) -> None:
    a, b = pair(data, CPI, ALLGATHER)
    res = run("diff", a, b, "-m", "cycles")
    assert res.exit_code == 2
    assert res.stderr.startswith("Error: unknown metric 'cycles'")


def test_colors_say_which_way(data) -> None:
    from cctool.render import COLORMAPS, _color

    red, *_, green = COLORMAPS["RdYlGn"]
    assert _color(10.0, 10.0, COLORMAPS["RdYlGn"], diverging=True) == red  # B spends more
    assert _color(-10.0, 10.0, COLORMAPS["RdYlGn"], diverging=True) == green
    assert _color(0.5, 10.0, COLORMAPS["RdYlGn"], diverging=True) == ""  # about unchanged
    a, b = pair(data, f"{SCALING}/27_cores.cali", f"{SCALING}/64_cores.cali")
    args = ["--color", "always", "div", a, b, "--depth", "1", "--no-legend"]
    env = {"COLORTERM": "truecolor"}
    speedup = CliRunner().invoke(cli, args, env=env).stdout.splitlines()[3]
    assert speedup.startswith("\x1b[38;2;26;152;80m 1.267x")  # highest ratio: green
    plain = CliRunner().invoke(cli, [*args, "--no-invert-colormap"], env=env).stdout
    assert plain.splitlines()[3].startswith("\x1b[38;2;215;48;39m 1.267x")  # red


def test_uniform_time_name_on_spot_profiles(data) -> None:
    """`--metric time` works on Caliper Spot runs: it names the column the report shows
    (`Avg time/rank`), and the gate checks that same column and says so."""
    a, b = pair(data, f"{SCALING}/27_cores.cali", f"{SCALING}/64_cores.cali")
    res = run("diff", a, b, "--metric", "time (inc)", "--to", "json")
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    # 27_cores.cali's avg#inclusive#sum#time.duration: main 47.250802 s, and 0.001989 s on
    # the record outside every region
    assert out["totals"]["Avg time/rank (inc)"]["A"] == pytest.approx(47.250802 + 0.001989)
    main = next(r for r in out["rows"] if r["name"] == "main")
    assert main["Avg time/rank (inc) [A]"] > 0
    gate = run("diff", a, b, "--fail-if", "total time (inc) > 5%")
    assert gate.exit_code == 1  # 47.253 s -> 55.133 s per rank: +16.7%, as the report says
    assert "+16.7%" in gate.stderr
    assert "evaluated the roots' total of column 'Avg time/rank (inc)'" in gate.stderr
    shown = run("diff", a, b)
    assert "total Avg time/rank (inc): A 47.25 s, B 55.13 s" in shown.stdout
    assert "(+16.7%)" in shown.stdout
