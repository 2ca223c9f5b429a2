"""Exports (folded, speedscope, pprof) of real profiles read back with the same totals.

Each case exports a profile of the corpus with ``cctool tree --to FMT``, reads the file back
with cctool's own reader and checks the roots' total against the profiler's own total from
the folder's ``totals.json`` (callgrind's ``totals:`` line, pstats ``total_tt``, cali-query,
HPCToolkit's summary profile), to the export's precision: whole nanoseconds per line for
times in folded and pprof files, whole events per sample for pprof. The call paths with a
value are the same on both sides. ``go tool pprof`` (when installed) reads the pprof files and
its total matches.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import click
import numpy as np
import orjson
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.graphframe import GraphFrame
from cctool.model.metrics import parse_unit
from cctool.readers import read

DATA = Path(__file__).parent / "data"
SUFFIX = {"folded": ".folded", "speedscope": ".speedscope.json", "pprof": ".pb.gz"}
# (folder, file, metric in totals.json): a call graph of counts with fractional exclusive
# values (callgrind's costs shared among call paths), a Python profile in seconds, a 4-rank
# Caliper profile, HPCToolkit databases: XML with 8 threads of cycle counts, v4 with 4 threads
# of CPU time, and a summary-only profile.db.
PROFILES = [
    ("callgrind", "callgrind.out.threads", "Ir (inc)"),
    ("cprofile", "cprofile-py312.pstats", "time (inc)"),
    ("caliper", "runtime-profile-np4.cali", "time (inc)"),
    ("hpctoolkit", "inline-mdb", "cycles (inc)"),
    ("hpctoolkit-v4", "loops-cputime-t.nostruct.d", "time (inc)"),
    ("hpctoolkit", "prof2-profile-db", "REALTIME (inc)"),
]
FORMATS = ("folded", "speedscope", "pprof")


def _entry(folder: str, name: str, metric: str) -> dict:
    spec = json.loads((DATA / folder / "totals.json").read_text())
    return next(e for e in spec["files"] if e["path"] == name and e["metric"] == metric)


def _total(gf: GraphFrame, metric: str) -> float:
    return float(gf.node_values([metric])[metric].to_numpy()[gf.roots].sum())


def _paths(gf: GraphFrame, metric: str, at_least: float = 0.0) -> set[tuple[str, ...]]:
    """Call paths (names from the root) of the nodes whose value exceeds ``at_least``."""
    values = gf.node_values([metric])[metric].to_numpy()
    names = gf.nodes["name"].to_list()
    par = gf.parent_array
    out = set()
    for node in np.flatnonzero(np.abs(values) > at_least).tolist():
        path = []
        while node >= 0:
            path.append(names[node])
            node = int(par[node])
        out.add(tuple(reversed(path)))
    return out


def _export(tmp_path: Path, profile: Path, fmt: str, *args: str) -> tuple[Path, str]:
    out = tmp_path / f"out{SUFFIX[fmt]}"
    res = CliRunner().invoke(cli, ["tree", str(profile), "-o", str(out), *args])
    assert res.exit_code == 0, res.output
    return out, res.stderr


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("folder", "name", "metric"), PROFILES,
                         ids=[p[1] for p in PROFILES])
def test_round_trip_keeps_the_profilers_total(tmp_path: Path, fmt: str, folder: str,
                                              name: str, metric: str) -> None:
    entry = _entry(folder, name, metric)
    profile = DATA / folder / name
    gf = read(profile)
    exc = metric.removesuffix(" (inc)")
    dim, _, factor = parse_unit(entry["unit"])
    expected = entry["total"] * factor  # in cctool's base unit
    assert _total(gf, metric) == pytest.approx(expected, rel=entry["rel"])
    out, stderr = _export(tmp_path, profile, fmt, "--metric", metric)
    back = read(out, fmt)
    back.validate()
    is_time = dim.value == "time"
    # What the reader calls the one metric of the file, and its unit relative to ours.
    col, scale = {"folded": ("samples (inc)", 1e9 if is_time else 1.0),
                  "speedscope": (("time (inc)" if is_time else "weight (inc)"), 1.0),
                  "pprof": (metric, 1.0)}[fmt]
    # Lines or samples written: at most one per (node, rank, thread) with a value.
    lines = int((gf.metrics[exc].fill_null(0.0) != 0).sum())
    rounded = (fmt == "pprof") or (fmt == "folded" and is_time)
    # Each written value is rounded to a whole nanosecond (or event) at most.
    tol = 0.5 * lines * (1e-9 if is_time else 1.0) if rounded else 1e-12 * expected
    assert abs(_total(back, col) / scale - _total(gf, metric)) <= tol + 1e-12 * expected
    assert _total(back, col) / scale == pytest.approx(expected, rel=entry["rel"], abs=tol)
    # Same call paths: those with a value in the export are the profile's ones...
    have = _paths(back, back.exclusive_of(col) or col)
    assert have <= _paths(gf, exc)
    # ... and every one that weighs more than the rounding is there.
    assert _paths(gf, exc, 0.5 * (1e-9 if is_time else 1.0) if rounded else 0.0) <= have
    if is_time and fmt != "speedscope":
        assert "nanoseconds" in stderr


def test_folded_lines_are_exclusive_values_in_nanoseconds(tmp_path: Path) -> None:
    # cali-query on runtime-profile-np4.cali: main_loop/compute takes 0.3089801 s over 4 ranks.
    out, _ = _export(tmp_path, DATA / "caliper" / "runtime-profile-np4.cali", "folded")
    lines = dict(line.rsplit(" ", 1) for line in out.read_text().splitlines())
    assert lines["main_loop;compute"] == "308980100"
    assert all(re.fullmatch(r"\d+", v) for v in lines.values())


def test_callgrind_fractions_are_written_as_decimals(tmp_path: Path) -> None:
    out, stderr = _export(tmp_path, DATA / "callgrind" / "callgrind.out.threads", "folded")
    values = [line.rsplit(" ", 1)[1] for line in out.read_text().splitlines()]
    assert any("." in v for v in values) and not any("e" in v for v in values)
    assert "not whole numbers" in stderr
    assert sum(float(v) for v in values) == pytest.approx(5493259, rel=1e-12)


def test_speedscope_has_one_profile_per_rank(tmp_path: Path) -> None:
    profile = DATA / "caliper" / "runtime-profile-np4.cali"
    gf = read(profile)
    out, _ = _export(tmp_path, profile, "speedscope")
    doc = orjson.loads(out.read_bytes())
    assert [p["name"] for p in doc["profiles"]] == [f"time: rank {r} thread 0" for r in range(4)]
    assert {p["unit"] for p in doc["profiles"]} == {"seconds"}
    for rank, prof in enumerate(doc["profiles"]):
        per_rank = gf.node_values(["time"], rank=rank)["time"].to_numpy().sum()
        assert sum(prof["weights"]) == pytest.approx(per_rank, rel=1e-12)
        assert prof["endValue"] == pytest.approx(per_rank, rel=1e-12)
    back = read(out, "speedscope")
    assert back.num_threads == 4  # speedscope's profiles come back as threads of one rank


def test_mean_over_ranks_is_one_profile(tmp_path: Path) -> None:
    profile = DATA / "caliper" / "runtime-profile-np4.cali"
    out, _ = _export(tmp_path, profile, "speedscope", "--agg", "mean")
    doc = orjson.loads(out.read_bytes())
    assert len(doc["profiles"]) == 1
    assert "mean over 4 ranks" in doc["profiles"][0]["name"]
    assert sum(doc["profiles"][0]["weights"]) == pytest.approx(0.764737425 / 4, rel=1e-9)
    one, _ = _export(tmp_path, profile, "pprof", "--rank", "2")
    per_rank = read(profile).node_values(["time"], rank=2)["time"].to_numpy().sum()
    assert _total(read(one), "time (inc)") == pytest.approx(per_rank, abs=6e-9)


def test_pprof_holds_every_additive_metric(tmp_path: Path) -> None:
    # callgrind --collect-jumps with 13 events; `totals:` gives Ir 5493259 (totals.json).
    profile = DATA / "callgrind" / "callgrind.out.jumps"
    gf = read(profile)
    out, _ = _export(tmp_path, profile, "pprof")
    back = read(out)
    assert back.exclusive == gf.exclusive and len(gf.exclusive) == 13
    assert back.default_metric == gf.default_metric == "Ir (inc)"
    lines = int((gf.node_values(list(gf.exclusive)).drop("node").to_numpy() != 0)
                .any(axis=1).sum())
    for col in gf.inclusive:
        assert back.metric(col).unit == gf.metric(col).unit
        assert abs(_total(back, col) - _total(gf, col)) <= 0.5 * lines
    assert _total(back, "Ir (inc)") == pytest.approx(5493259, abs=0.5 * lines)


@pytest.mark.skipif(shutil.which("go") is None, reason="go (for go tool pprof) is not installed")
@pytest.mark.parametrize(("folder", "name", "metric"), PROFILES[1:3], ids=["cprofile", "caliper"])
def test_go_tool_pprof_reads_the_export(tmp_path: Path, folder: str, name: str,
                                        metric: str) -> None:
    entry = _entry(folder, name, metric)
    out, _ = _export(tmp_path, DATA / folder / name, "pprof", "--metric", metric)
    go = shutil.which("go") or "go"
    run = {"capture_output": True, "text": True, "timeout": 300, "cwd": tmp_path}
    raw = subprocess.run([go, "tool", "pprof", "-raw", str(out)], check=True, **run).stdout
    # Sample lines are "  value: location ids", label lines under them "  rank:[1]".
    body = raw.split("Samples:")[1].split("Locations")[0]
    samples = re.findall(r"^\s*(\d+): [\d ]+$", body, flags=re.MULTILINE)
    ns = sum(map(int, samples))
    assert ns * 1e-9 == pytest.approx(entry["total"], rel=entry["rel"], abs=len(samples) * 1e-9)
    top = subprocess.run([go, "tool", "pprof", "-top", "-unit=ns", str(out)], check=True,
                         **run).stdout
    total = re.search(r"of (\d+)ns total", top)
    assert total is not None and int(total.group(1)) == ns


@pytest.mark.skipif(shutil.which("go") is None, reason="go (for go tool pprof) is not installed")
def test_pprof_samples_are_labelled_by_rank(tmp_path: Path) -> None:
    out, _ = _export(tmp_path, DATA / "caliper" / "runtime-profile-np4.cali", "pprof")
    go = shutil.which("go") or "go"
    top = subprocess.run([go, "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0",
                          "-tagfocus=rank=^1$", str(out)], check=True, capture_output=True,
                         text=True, timeout=300, cwd=tmp_path).stdout
    shown = re.search(r"accounting for (\d+)ns, [\d.]+% of (\d+)ns total", top)
    assert shown is not None
    # cali-query -q "select mpi.rank,region,sum(sum#sum#time.duration) where mpi.rank=1
    # group by mpi.rank,region": 0.055070 + 0.001792 + 0.000004 + 0.055526 + 0.079188
    # + 0.000895 s on rank 1, of 0.764737 s in all.
    assert int(shown.group(1)) * 1e-9 == pytest.approx(0.192475, rel=2e-5)
    assert int(shown.group(2)) * 1e-9 == pytest.approx(0.764737, rel=1e-5)


def test_diff_folded_has_both_profiles_values(tmp_path: Path) -> None:
    a = DATA / "caliper" / "runtime-profile-np1.cali"
    b = DATA / "caliper" / "runtime-profile-np4.cali"
    out = tmp_path / "diff.folded"
    res = CliRunner().invoke(cli, ["diff", str(a), str(b), "--to", "folded", "-o", str(out)])
    assert res.exit_code == 0, res.output
    rows = [line.rsplit(" ", 2) for line in out.read_text().splitlines()]
    assert all(len(r) == 3 for r in rows)
    # cali-query totals: 0.046068 s (np1) and 0.764737 s (np4), here in nanoseconds.
    assert sum(int(r[1]) for r in rows) == pytest.approx(0.046068e9, rel=2e-5)
    assert sum(int(r[2]) for r in rows) == pytest.approx(0.764737e9, rel=1e-5)
    assert {r[0]: (r[1], r[2]) for r in rows}["main_loop;compute"][1] == "308980100"


@pytest.mark.parametrize(("args", "message"), [
    (["imbalance", "{p}", "--to", "pprof"], "cannot write --to pprof"),
    (["query", "{p}", '["*"]', "--to", "speedscope"], "cannot write --to speedscope"),
    (["stats", "{p}", "--to", "folded"], "cannot write --to folded"),
    (["div", "{p}", "{p}", "--to", "folded"], "cannot write --to folded"),
    (["diff", "{p}", "{p}", "--to", "speedscope"], "cannot write --to speedscope"),
    (["tree", "{p}", "--to", "folded", "--depth", "2"], "--depth shapes the text view"),
    (["tree", "{p}", "--to", "folded", "--flat"], "--flat shapes the text view"),
    (["tree", "{p}", "--to", "pprof", "--agg", "max"], "cannot export values combined"),
    (["tree", "{p}", "--to", "folded", "--derive", 'r = time / "time (inc)"'],
     "'r' is a derived"),
])
def test_refusals_are_one_line_errors(args: list[str], message: str) -> None:
    profile = str(DATA / "caliper" / "runtime-profile-np4.cali")
    argv = [a.replace("{p}", profile) for a in args]
    if "--derive" in argv:
        argv += ["--metric", "r"]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 2, res.output
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], res.stderr
    assert "Traceback" not in res.output


def test_a_streamed_max_is_refused_before_it_becomes_one_location() -> None:
    # Read in parts, the --agg values land on one location, which the export would then take
    # for additive values; the refusal must come from the --agg the user asked for.
    db = DATA / "hpctoolkit-v4" / "loops-cputime-t.nostruct.d"
    res = CliRunner().invoke(cli, ["tree", str(db), "--stream", "--agg", "max",
                                   "--to", "folded"])
    assert res.exit_code == 2 and "cannot export values combined over ranks by max" in res.stderr


def test_frame_names_cannot_break_the_line_format() -> None:
    from cctool.options import TreeOptions
    from cctool.render.exports.folded import to_folded

    gf = GraphFrame.from_arrays([-1, 0, 0], {"name": ["main", "a;b", "two\nlines"],
                                             "type": ["function"] * 3},
                                {"node": [1, 2], "samples": [3.0, 4.0]}, exclusive=["samples"])
    with pytest.warns(UserWarning, match="2 frame names changed"):
        text = to_folded(gf, TreeOptions(metrics=("samples",)))
    assert text.splitlines() == ["main;a:b 3", "main;two lines 4"]


def test_pprof_never_goes_to_a_terminal() -> None:
    from tests.test_cli_output_dispatch import _on_a_terminal

    code, out = _on_a_terminal(["tree", str(DATA / "caliper" / "runtime-profile-np4.cali"),
                                "--to", "pprof"])
    assert code == 2 and b"\x1f\x8b" not in out


def test_output_suffixes_pick_the_export() -> None:
    from cctool.cli._formats import resolve_format

    tree = ("text", "json", "csv", "folded", "speedscope", "pprof")
    assert resolve_format(None, "run.folded", tree) == "folded"
    assert resolve_format(None, "run.speedscope.json", tree) == "speedscope"
    assert resolve_format(None, "run.json", tree) == "json"
    assert resolve_format(None, "cpu.pb.gz", tree) == "pprof"
    assert resolve_format(None, "cpu.pprof", tree) == "pprof"
    # A command without the export keeps its own reading of the suffix.
    assert resolve_format(None, "x.speedscope.json", ("text", "json")) == "json"
    with pytest.raises(click.UsageError, match="does not write folded files"):
        resolve_format(None, "x.folded", ("text", "json"))  # a name that lies is refused
