"""`cctool read`: summaries, JSON, saving, and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_read_json_cpi(data) -> None:
    res = run("read", str(data("hpctoolkit-cpi-database")), "--json")
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["format"] == "hpctoolkit"
    assert (out["nodes"], out["rows"], out["ranks"], out["threads"]) == (34, 136, 4, 1)
    assert out["metrics"] == ["time (inc)", "time"]
    # experiment.xml's usec, held in seconds: 3998242 usec.
    assert out["roots"] == [{"name": "<program root>", "time (inc)": pytest.approx(3.998242),
                             "time": 0.0}]
    assert out["units"] == {"time (inc)": "s", "time": "s"}
    assert out["source_units"] == {"time (inc)": "usec", "time": "usec"}


def test_read_json_allgather(data) -> None:
    res = run("read", str(data("hpctoolkit-allgather-database")), "--json")
    out = json.loads(res.stdout)
    assert (out["nodes"], out["rows"], out["ranks"], out["threads"]) == (1474, 29480, 10, 2)
    totals = {r["name"]: r["time (inc)"] for r in out["roots"]}
    assert totals["<program root>"] == pytest.approx(26.140582, rel=1e-12)
    assert totals["<partial call paths>"] == pytest.approx(0.017786, rel=1e-12)


def test_read_text_summary(data) -> None:
    res = run("read", str(data("hpctoolkit-cpi-database")))
    assert res.exit_code == 0
    assert "nodes    34" in res.stdout
    assert "root     <program root>: time (inc)=3.998 s  time=0" in res.stdout
    assert res.stderr == ""


def test_save_and_pipe(data, tmp_path: Path) -> None:
    out = tmp_path / "cpi.cct"
    res = run("read", str(data("hpctoolkit-cpi-database")), "-o", str(out))
    assert res.exit_code == 0 and out.exists()
    piped = run("read", "-", "--json", input=out.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    assert json.loads(piped.stdout)["nodes"] == 34


def test_several_profiles_give_a_list(data) -> None:
    res = run("read", str(data("hpctoolkit-cpi-database")),
              str(data("hpctoolkit-allgather-database")), "--json")
    assert [o["nodes"] for o in json.loads(res.stdout)] == [34, 1474]


def test_errors_are_one_line_exit_2(data, tmp_path: Path) -> None:
    cases = {
        "missing": ["read", str(tmp_path / "nope")],
        "unknown --from": ["read", str(tmp_path), "--from", "vtune"],
        "not a profile": ["read", str(tmp_path)],
    }
    for name, args in cases.items():
        res = run(*args)
        assert res.exit_code == 2, name
        assert res.stderr.startswith("Error:") or "Invalid value" in res.stderr, name
        assert "Traceback" not in res.stderr
    folder = data("hpctoolkit-cpi-database")
    victim = sorted(folder.glob("*.metric-db"))[0]
    victim.write_bytes(victim.read_bytes()[:500])
    res = run("read", str(folder), "-o", str(tmp_path / "x.cct"))
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and victim.name in res.stderr
    assert "truncated metric-db" in res.stderr
    assert not (tmp_path / "x.cct").exists()


def test_bad_stdin(tmp_path: Path) -> None:
    res = run("read", "-", input=b"not a cct file")
    assert res.exit_code == 2
    assert res.stderr == "Error: cct: <stdin>: not a cctool saved file (bad magic bytes)\n"


def test_folders_of_one_profile_and_of_several_runs(data) -> None:
    one = json.loads(run("read", str(data("caliper-cpi-json")), "--json").stdout)
    assert (one["format"], one["nodes"]) == ("caliper-json", 140)
    runs = json.loads(run("read", str(data("mpi_scaling_cali")), "--json").stdout)
    sizes = sorted(r["metadata"]["mpi.world.size"] for r in runs)
    assert sizes == [27, 64, 125, 216, 343]
    res = run("read", str(data("mpi_scaling_cali")))
    assert res.stdout.count("cali:") == 5


def test_folder_of_several_profiles_for_a_one_profile_command(data) -> None:
    res = run("tree", str(data("cprofile-hatchet-pstats")))
    assert res.exit_code == 2
    assert "holds 2 profiles" in res.stderr


def test_unwritable_output_is_a_clean_error(data, tmp_path: Path) -> None:
    res = run("read", str(data("hpctoolkit-cpi-database")), "-o", str(tmp_path / "no" / "x.cct"))
    assert res.exit_code == 2
    assert res.stderr.startswith("Error: cannot write ") and "No such file" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("name", ["hpctoolkit-allgather-database", "tau-cpi-mpi",
                                  "caliper-lulesh-cali", "scorep-cpi-cubex"])
def test_root_totals_add_up_only_the_roots_rows(data, name) -> None:
    """The summary sums the roots' rows alone, to the same bits as the whole aggregation."""
    import numpy as np

    import cctool
    from cctool.ops.summary import root_totals

    folder = data(name)
    files = sorted(p for p in folder.iterdir() if p.suffix in (".cali", ".cubex"))
    gf = cctool.read(files[0] if files else folder)
    full = gf.node_values(list(gf.metric_columns), agg="sum")
    roots = gf.roots
    mine = root_totals(gf, roots)
    for col in gf.metric_columns:
        assert np.array_equal(full[col].to_numpy()[roots].view(np.int64),
                              mine[col].view(np.int64)), col


def test_root_totals_of_a_saved_profile_in_blocks(data, tmp_path) -> None:
    import numpy as np

    import cctool
    from cctool.ops.summary import root_totals
    from cctool.render.files import save

    path = tmp_path / "run.cct"
    save(cctool.read(data("hpctoolkit-allgather-database")), path)
    gf = cctool.read(path)
    assert gf._blocks is not None  # noqa: SLF001  (the strided path)
    full = gf.node_values(["time (inc)"])["time (inc)"].to_numpy()[gf.roots]
    assert np.array_equal(root_totals(gf, gf.roots)["time (inc)"], full)
