"""`cctool tree`: golden text output, records, options and errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from tests.conftest import check_golden, json_rows

TREE_CASES = {
    "cpi.default": ("hpctoolkit-cpi-database", []),
    "cpi.exclusive-nid": ("hpctoolkit-cpi-database", ["-m", "time", "-m", "time (inc)",
                                                       "--sort", "nid"]),
    "cpi.rank2-depth4": ("hpctoolkit-cpi-database", ["--rank", "2", "--depth", "4"]),
    "allgather.threshold": ("hpctoolkit-allgather-database", ["--threshold", "0.02"]),
    "allgather.max-depth5": ("hpctoolkit-allgather-database", ["--agg", "max", "--depth", "5",
                                                               "--precision", "1"]),
}


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.mark.parametrize("case", sorted(TREE_CASES))
def test_tree_golden(case: str, data, update_goldens: bool) -> None:
    folder, flags = TREE_CASES[case]
    res = run("tree", str(data(folder)), "--color", "never", "--width", "100", *flags)
    assert res.exit_code == 0, res.stderr
    check_golden(f"tree.{case}.txt", res.stdout, update_goldens)


def test_tree_color_always_has_escapes(data) -> None:
    res = run("--color", "always", "tree", str(data("hpctoolkit-cpi-database")), "--depth", "2")
    assert "\x1b[" in res.stdout
    plain = run("tree", str(data("hpctoolkit-cpi-database")), "--depth", "2")
    assert "\x1b[" not in plain.stdout  # not a terminal: no color by default


def test_tree_json_records(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--to", "json", "--depth", "3",
              "-m", "time (inc)", "-m", "time")
    rows = json_rows(res.stdout)
    assert [r["name"] for r in rows] == ["<program root>", "main", "MPI_Finalize", "MPI_Init"]
    # Records hold seconds and name the unit (experiment.xml: 3998242 usec).
    assert rows[0] == {"node": 0, "parent": None, "name": "<program root>", "depth": 0,
                       "time (inc) [s]": pytest.approx(3.998242), "time [s]": 0.0}
    assert rows[2]["parent"] == 1


def test_tree_csv(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--to", "csv", "--depth", "2")
    header, *rows = res.stdout.splitlines()
    assert header == "node,parent,name,depth,time (inc) [s]"
    assert [r.rsplit(",", 1)[0] for r in rows] == ["0,,<program root>,0", "1,0,main,1"]
    assert [float(r.rsplit(",", 1)[1]) for r in rows] == pytest.approx([3.998242] * 2)


def test_tree_from_stdin(data) -> None:
    saved = run("read", str(data("hpctoolkit-cpi-database")), "-o", "-")
    res = run("tree", "-", "--depth", "2", "--no-legend", input=saved.stdout_bytes)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1].endswith("main [+2]")  # MPI_Init, MPI_Finalize hidden


def test_tree_output_file(data, tmp_path) -> None:
    out = tmp_path / "tree.txt"
    res = run("tree", str(data("hpctoolkit-cpi-database")), "-o", str(out), "--depth", "2")
    assert res.exit_code == 0 and res.stdout == ""
    assert out.read_text().startswith("3.998 s 100% <program root>")


def test_deep_tree_does_not_recurse(tmp_path) -> None:
    from cctool.graphframe import GraphFrame
    from cctool.render.files import save

    n = 5000
    gf = GraphFrame.from_arrays(list(range(-1, n - 1)), {"name": [f"f{i}" for i in range(n)],
                                "type": ["function"] * n},
                                {"node": list(range(n)), "time": [1.0] * n}, exclusive=["time"])
    save(gf, tmp_path / "deep.cct")
    res = run("tree", str(tmp_path / "deep.cct"), "--to", "csv")
    assert res.exit_code == 0
    assert len(res.stdout.splitlines()) == n + 1
    text = run("tree", str(tmp_path / "deep.cct"), "--depth", "50", "--width", "400")
    assert text.exit_code == 0


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--metric", "cycles"], "unknown metric 'cycles'"),
    ],
)
def test_tree_bad_options(data, flags, message) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), *flags)
    assert res.exit_code == 2
    assert message in res.stderr and res.stderr.count("\n") == 1


def test_tree_unknown_colormap_is_a_usage_error(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--colormap", "rainbow")
    assert res.exit_code == 2
    assert "'rainbow' is not one of 'RdYlGn', 'viridis', 'magma', 'grey'" in res.stderr


def test_long_names_are_elided(tmp_path) -> None:
    from cctool.graphframe import GraphFrame
    from cctool.render.files import save

    long = "std::vector<double>::operator[]" * 4
    gf = GraphFrame.from_arrays([-1], {"name": [long], "type": ["function"]},
                                {"node": [0], "time": [1.0]}, exclusive=["time"])
    save(gf, tmp_path / "l.cct")
    short = run("tree", str(tmp_path / "l.cct"), "--no-legend").stdout
    assert "…" in short and len(short.strip()) < len(long)
    full = run("tree", str(tmp_path / "l.cct"), "--no-legend", "--full-names", "--width", "300")
    assert long in full.stdout


def test_unknown_rank_or_thread_is_an_error(data) -> None:
    res = run("tree", str(data("hpctoolkit-cpi-database")), "--rank", "99")
    assert res.exit_code == 2
    assert res.stderr == ("Error: no data for rank 99, thread any; the profile has ranks 0-3 "
                          "and threads 0\n")
