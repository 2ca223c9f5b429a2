"""The metric model on real profiles: units, aggregation by meaning, derived metrics after
aggregation, refusals and warnings where profiles do not match.

Expected values come from the files themselves: HPCToolkit metric-db rows decoded with struct
(tests/hpctoolkit_raw.py), experiment.xml's microseconds, and Caliper Spot's own per-rank
statistics (``Max time/rank``, ``Avg time/rank``) as cali-query prints them.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

import cctool
from cctool.cli import cli
from cctool.errors import CctoolWarning, IncompatibleProfilesError
from cctool.graphframe import GraphFrame
from cctool.model._inplace import _writable, writable_views
from cctool.model.metrics import (
    Combine,
    Dimension,
    _multiplier,
    _scaled,
    parse_unit,
)
from cctool.model.units import normalise
from cctool.ops.derive import derive
from cctool.readers import READERS, read_declared
from cctool.synth import generate
from tests import hpctoolkit_raw
from tests.conftest import json_rows, metric_value

CPI, CPI_V4, ALLGATHER = ("hpctoolkit-cpi-database", "hpctoolkit-cpi-v4-database",
                          "hpctoolkit-allgather-database")
SPOT = "mpi_scaling_cali/343_cores.cali"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def shared(data, name: str) -> str:
    folder, _, rest = name.partition("/")
    return str(data(folder) / rest) if rest else str(data(folder))


# ------------------------------------------------------------------------------ units
@pytest.mark.parametrize(("text", "dim", "unit", "factor"), [
    ("usec", Dimension.TIME, "s", 1e-6), ("sec", Dimension.TIME, "s", 1.0),
    ("nanoseconds", Dimension.TIME, "s", 1e-9), ("ms", Dimension.TIME, "s", 1e-3),
    ("MiB", Dimension.BYTES, "B", 1024.0**2), ("bytes", Dimension.BYTES, "B", 1.0),
    ("percent of total", Dimension.PERCENT, "%", 1.0), ("Ir", Dimension.COUNT, "Ir", 1.0),
    ("", Dimension.OTHER, "unknown", 1.0),
])
def test_parse_unit(text: str, dim: Dimension, unit: str, factor: float) -> None:
    assert parse_unit(text) == (dim, unit, factor)


def test_display_scales_by_the_descriptor() -> None:
    from cctool.model.metrics import describe
    from cctool.render.values import format_value

    t, b, c = describe("t", "s"), describe("b", "B"), describe("c", "count")
    assert [format_value(v, t) for v in (3.998242, 0.0537, 2.5e-5, 7e-9)] == [
        "3.998 s", "53.70 ms", "25.00 µs", "7.000 ns"]
    assert format_value(1.5 * 1024**3, b) == "1.500 GiB"
    assert format_value(292582478217.0, c) == "292,582,478,217"
    assert format_value(-0.0, t) == "0" and format_value(42.0, c) == "42"


def test_xml_microseconds_are_held_in_seconds(data) -> None:
    gf = cctool.read(data(CPI))
    m = gf.metric("time (inc)")
    assert (m.unit, m.source_unit, m.dimension, m.combine) == ("s", "usec", Dimension.TIME,
                                                               Combine.SUM)
    # 999238 + 999390 + 1000306 + 999308 usec: the first row of each rank's metric-db
    assert gf.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(3.998242, rel=1e-15)
    assert "metric_units" not in gf.metadata  # the declaration became the descriptors


def test_every_reader_declares_a_unit_for_every_metric(data) -> None:
    """A reader that emits a metric without saying its unit fails here."""
    samples = {
        "hpctoolkit": CPI, "hpctoolkit-v4": CPI_V4, "cube": "scorep-cpi-cubex/profile.cubex",
        "caliper": "caliper-lulesh-cali/lulesh-annotation-profile.cali",
        "caliper-json": "caliper-cpi-json/cpi-callpath-profile.json",
        "cprofile": "cprofile-hatchet-pstats/cprofile-cycle.pstats",
        "gprof2dot": "gprof2dot-cpi/callgrind.dot.64042.0.1",
        "pyinstrument": "pyinstrument-hatchet-json/pyinstrument-hatchet-profile.json",
        "tau": "tau-cpi-mpi", "timemory": "timemory/wall.tree.json",
        "spotdb": "spotdb/0.cali",
    }
    repo = {"callgrind": "callgrind/callgrind.out.sample", "folded": "folded"}
    from pathlib import Path

    here = Path(__file__).resolve().parent / "data"
    missing = []
    for fmt, where in [*samples.items(), *repo.items()]:
        path = here / where if fmt in repo else Path(shared(data, where))
        if fmt == "folded":
            path = next(p for p in sorted(path.iterdir()) if p.suffix != ".md")
        gf = cctool.read(path, fmt if fmt != "spotdb" else "caliper")
        for col in gf.metric_columns:
            if gf.metric(col).unit == "unknown":
                missing.append(f"{fmt}: {col}")
    assert not missing, f"metrics without a unit: {missing}"
    assert {n for n, _ in READERS} >= set(samples) | set(repo)


# ------------------------------------------------------------------------------ diff
def test_xml_and_v4_cpi_compare_seconds_and_warn(data) -> None:
    """The XML database holds usec, v4 seconds: compared in seconds, never mixed."""
    a, b = shared(data, CPI), shared(data, CPI_V4)
    res = run("diff", a, b, "--to", "json")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    totals = out["totals"]["time (inc)"]
    # A: 3998242 usec; B: the v4 roots' CPUTIME (sec), 0.28182 + 0.044155 s
    assert (totals["A"], totals["B"]) == pytest.approx((3.998242, 0.28182 + 0.044155))
    assert out["units"]["time (inc)"] == "s"
    # v4's entry-point context (the XML database has none) is left out, and said so
    assert "B's entry-point context (application thread, main thread) left out" in res.stderr
    assert "A and B share 0 call paths of A's 34 and B's 145" in res.stderr
    assert "A has 4 ranks × 1 thread and B 4 × 2" in res.stderr
    # The gate sees the same seconds in both directions: -91.8 % one way, +1126.5 % back.
    fwd = run("diff", a, b, "--fail-if", "total time (inc) > 2%")
    back = run("diff", b, a, "--fail-if", "total time (inc) > 2%")
    assert fwd.exit_code == 0 and back.exit_code == 1
    assert "+1,127%" in back.stderr and "in s" in back.stderr
    assert "-91.8%" in run("diff", a, b).stdout.splitlines()[1]


def test_different_units_are_refused(data) -> None:
    a = cctool.read(data(CPI))
    counts = a.metric("time")
    b = cctool.read(data(CPI))
    from dataclasses import replace

    b = replace(b, metric_info={c: replace(m, unit="Ir", dimension=Dimension.COUNT)
                                for c, m in b.metric_info.items()})
    assert counts.unit == "s"
    with pytest.raises(IncompatibleProfilesError, match=r"'time( \(inc\))?' is in s \(time\)"):
        a - b


def test_library_difference_warns_about_rank_counts(data) -> None:
    a, b = cctool.read(data(CPI)), cctool.read(data(ALLGATHER))
    with pytest.warns(CctoolWarning, match="A has 4 ranks × 1 thread and B 10 × 2"):
        a - b


# ------------------------------------------------------------------------------ derived
def test_ipc_is_the_ratio_of_sums(tmp_path) -> None:
    """512 ranks summing per-rank IPCs gave 622.7; the run's IPC is a ratio of totals."""
    folder = tmp_path / "db"
    generate(folder, nodes=120, ranks=16, threads=2, metrics=3, seed=7)
    raw = hpctoolkit_raw.load(folder)
    names = raw.metric_names
    row = int(cctool.read(folder).nodes["hpctoolkit_id"][0]) - 1  # the first root's db row
    ins = raw.values[:, row, names.index("PAPI_TOT_INS (I)")].sum()
    cyc = raw.values[:, row, names.index("PAPI_TOT_CYC (I)")].sum()
    res = run("tree", str(folder), "--derive",
              'ipc = "PAPI_TOT_INS (inc)" / "PAPI_TOT_CYC (inc)"', "-m", "ipc", "--to", "json",
              "--depth", "1")
    assert res.exit_code == 0, res.stderr
    root = json_rows(res.stdout)[0]
    assert metric_value(root, "ipc") == pytest.approx(ins / cyc, rel=1e-12)
    assert "ipc [ratio]" in root
    with np.errstate(invalid="ignore"):  # thread 1 of each rank has no <program root> time
        per_file = np.nan_to_num(raw.values[:, row, names.index("PAPI_TOT_INS (I)")]
                                 / raw.values[:, row, names.index("PAPI_TOT_CYC (I)")])
    # --agg mean: the ratio of the means, the same number; --agg max: the largest rank's IPC.
    gf = derive(cctool.read(folder), 'ipc = "PAPI_TOT_INS (inc)" / "PAPI_TOT_CYC (inc)"')
    assert gf.node_values(["ipc"], agg="mean")["ipc"][0] == pytest.approx(ins / cyc)
    ranks = np.asarray(raw.ranks)
    ins_r = np.bincount(ranks, raw.values[:, row, names.index("PAPI_TOT_INS (I)")])
    cyc_r = np.bincount(ranks, raw.values[:, row, names.index("PAPI_TOT_CYC (I)")])
    assert gf.node_values(["ipc"], agg="max")["ipc"][0] == pytest.approx((ins_r / cyc_r).max())
    # Per-rank IPCs summed, as cctool did before, would be about 16 times the run's IPC.
    assert (ins_r / cyc_r).sum() > 10 * ins / cyc
    per_loc = derive(cctool.read(folder), 'ipc = "PAPI_TOT_INS (inc)" / "PAPI_TOT_CYC (inc)"',
                     per_location=True)
    assert per_loc.node_values(["ipc"])["ipc"][0] == pytest.approx(per_file.mean())


def test_time_over_time_is_one_on_any_number_of_ranks(data) -> None:
    gf = derive(cctool.read(data(CPI)), 'r = "time (inc)" / "time (inc)"')
    assert gf.node_values(["r"])["r"][0] == 1.0
    assert gf.metric("r").dimension is Dimension.RATIO


# ------------------------------------------------------------------------------ per rank
def test_scaling_per_process_time_is_per_rank(data) -> None:
    """allgather: 10 ranks × 2 threads; per-process time divides by ranks, not locations."""
    res = run("scaling", shared(data, CPI), shared(data, ALLGATHER), "--to", "json")
    rows = {r["path"]: r for r in json_rows(res.stdout)}
    root = rows["<program root>"]
    assert root["unit"] == "s"
    assert root["10"] == pytest.approx(2.6140582)  # 26140582 usec / 10 ranks
    assert root["4"] == pytest.approx(0.9995605)
    eff = run("scaling", shared(data, CPI), shared(data, ALLGATHER), "--efficiency",
              "--to", "json")
    eff_root = {r["path"]: r for r in json_rows(eff.stdout)}["<program root>"]
    # strong efficiency T4 * 4 / (T10 * 10)
    assert eff_root["10"] == pytest.approx(0.9995605 * 4 / (2.6140582 * 10), abs=1e-9)
    assert round(eff_root["10"], 3) == 0.153


def test_mean_over_ranks_sums_threads_first(data) -> None:
    gf = cctool.read(data(ALLGATHER))
    raw = hpctoolkit_raw.load(data(ALLGATHER))
    node = gf.nodes["name"].to_list().index("<program root>")
    per_rank = raw.inclusive_per_rank(int(gf.nodes["hpctoolkit_id"][node])) / 1e6  # usec -> s
    got = gf.node_values(["time (inc)"], agg="mean")["time (inc)"][node]
    assert got == pytest.approx(per_rank.mean())


# ------------------------------------------------------------------------------ imbalance
def test_imbalance_uses_the_profilers_own_statistics(data) -> None:
    res = run("imbalance", shared(data, SPOT), "--top", "20", "--to", "json")
    rows: dict[str, dict] = {}
    for r in json_rows(res.stdout):  # the most imbalanced node of each name
        rows.setdefault(r["name"], r)
    # Max time/rank / Avg time/rank of the records (cali-query), as the profile holds them
    assert rows["MPI_Wait"]["imbalance"] == pytest.approx(5.64, abs=0.005)
    assert rows["CalcQForElems"]["imbalance"] == pytest.approx(2.78, abs=0.005)
    assert rows["MPI_Wait"]["std [s]"] is None  # no per-rank values in the file
    text = run("imbalance", shared(data, SPOT), "--top", "3")
    assert "the profiler's own per-rank statistics over 343 ranks" in text.stdout
    assert "1 ranks" not in text.stdout


# ------------------------------------------------------------------------------ output
def test_output_states_units(data) -> None:
    res = run("tree", shared(data, CPI), "--depth", "1", "--color", "never")
    assert res.stdout.startswith("3.998 s 100% <program root>")
    assert "time (inc) [s]" in res.stdout
    csv = run("tree", shared(data, CPI), "--depth", "1", "--to", "csv").stdout
    assert csv.splitlines()[0] == "node,parent,name,depth,time (inc) [s]"


def test_saved_profile_keeps_descriptors(data, tmp_path) -> None:
    gf = cctool.read(data(SPOT.split("/")[0]) / SPOT.split("/")[1])
    from cctool.render.files import save
    from cctool.saved import load

    save(gf, tmp_path / "a.cct")
    back = load(tmp_path / "a.cct")
    assert back.metric_info == gf.metric_info
    assert back.metric("Max time/rank (inc)").combine is Combine.MAX
    # Read again through the registry: not converted twice.
    again = cctool.read(tmp_path / "a.cct")
    assert again.metric("Avg time/rank (inc)").unit == "s"
    assert math.isclose(again.node_values(["Avg time/rank (inc)"])["Avg time/rank (inc)"].sum(),
                        gf.node_values(["Avg time/rank (inc)"])["Avg time/rank (inc)"].sum())


def test_declared_values_stay_in_the_profilers_unit(data) -> None:
    gf = read_declared(data(CPI))
    assert gf.metadata["metric_units"] == {"time": "usec"}
    assert gf.node_values(["time (inc)"])["time (inc)"][0] == 3998242.0


# ------------------------------------------------------------------ conversion in place
def _bits(gf, col: str) -> np.ndarray:
    return gf.metrics[col].to_numpy().view(np.int64)


def test_read_converts_in_place_bit_for_bit(data) -> None:
    """read() scales the reader's own buffers: the same bits as the Polars conversion of a
    declared copy, and the location layout kept."""
    import polars as pl

    declared = read_declared(data(CPI))
    scale = {"time": 1e-6, "time (inc)": 1e-6}
    assert writable_views(read_declared(data(CPI)).metrics, scale) is not None  # the path taken
    expected = declared.metrics.with_columns(pl.col("time", "time (inc)") / 1_000_000)
    gf = cctool.read(data(CPI))
    for col in ("time", "time (inc)"):
        assert np.array_equal(_bits(gf, col), expected[col].to_numpy().view(np.int64))
    assert gf.node_values(["time (inc)"])["time (inc)"][0] == pytest.approx(3.998242, rel=1e-15)
    declared.locations  # noqa: B018  (computes the cached layout)
    again = normalise(declared)
    assert again.__dict__["_blocks"] is declared.__dict__["_blocks"]
    assert declared.metrics["time (inc)"][0] == 999238.0  # the input is left as it was


def test_in_place_multiplier_is_polars_division() -> None:
    """The in-place twin multiplies by the number Polars' scalar division uses."""
    import polars as pl

    values = np.round(np.random.default_rng(7).random(100_000) * 1e9)
    for factor in (1e-6, 1e-3, 1e-9, 60.0, 1024.0):
        polars = _scaled(pl.Series(values), factor).to_numpy()
        assert np.array_equal(polars.view(np.int64), (values * _multiplier(factor)).view(np.int64))


def _frame_with(metrics: dict) -> GraphFrame:
    return GraphFrame.from_arrays([-1, 0], {"name": ["main", "f"], "type": ["function"] * 2},
                                  {"node": [0, 1], **metrics}, inclusive=["time (inc)"],
                                  exclusive=["time"], metadata={"metric_units": {"time": "ms"}},
                                  derive_inclusive=False)


def test_in_place_refuses_columns_sharing_a_buffer() -> None:
    """Two columns over one buffer are converted by copy, never scaled twice."""
    import polars as pl

    gf = _frame_with({"time": [1.0, 2.0], "time (inc)": [3.0, 2.0]})
    inc = gf.metrics["time (inc)"]
    shared = replace(gf, metrics=gf.metrics.with_columns(inc.alias("time")))
    assert writable_views(shared.metrics, {"time": 1e-3, "time (inc)": 1e-3}) is None
    out = normalise(shared, in_place=True)
    assert out.metrics["time"].to_list() == out.metrics["time (inc)"].to_list() == [
        3.0 / 1000, 2.0 / 1000]
    assert isinstance(out.metrics, pl.DataFrame)


@pytest.mark.parametrize(("access", "writable"), [
    ("ACCESS_READ", False),
    ("ACCESS_WRITE", False),  # MAP_SHARED: the conversion would land in the file itself
    ("ACCESS_COPY", True),  # private copy-on-write: the file is safe
])
def test_in_place_writes_only_private_memory(tmp_path, access: str, writable: bool) -> None:
    import mmap

    path = tmp_path / "values"
    path.write_bytes(np.arange(4096, dtype=np.float64).tobytes())
    with open(path, "r+b") as fh, mmap.mmap(fh.fileno(), 0, access=getattr(mmap, access)) as mm:
        view = np.frombuffer(mm, dtype=np.float64)
        assert _writable(view.ctypes.data, view.ctypes.data + view.nbytes) is writable
        del view
    heap = np.zeros(1 << 20)
    assert _writable(heap.ctypes.data, heap.ctypes.data + heap.nbytes)
