"""Caliper runs read together (cctool.readers.caliper.batch) give the summaries and statistics
of reading them one by one, bit for bit, on files written by Caliper itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cctool.ensemble import run_paths
from cctool.errors import ReaderError
from cctool.ops.runs import RunSummary, SummaryRequest, summarize_paths
from cctool.ops.stats import StatsOptions, ensemble_stats
from cctool.readers.caliper.batch import read_groups

HERE = Path(__file__).resolve().parent / "data"
ENSEMBLE = HERE / "caliper-ensemble"


def one_by_one(files: list[str], metrics: tuple[str | None, ...], agg: str) -> list[RunSummary]:
    request = SummaryRequest(None, metrics, agg)
    return [request(f) for f in files]


def assert_same(fast: list[RunSummary], slow: list[RunSummary]) -> None:
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        assert (a.path, a.facts, a.metadata) == (b.path, b.facts, b.metadata)
        assert (a.columns, a.units, a.inclusive) == (b.columns, b.units, b.inclusive)
        assert list(a.names) == list(b.names)
        assert np.array_equal(a.parent, b.parent) and np.array_equal(a.depth, b.depth)
        assert a.frame_columns.equals(b.frame_columns)
        assert a.values.keys() == b.values.keys()
        for k in a.values:
            assert a.values[k].tobytes() == b.values[k].tobytes(), (a.path, k)


@pytest.mark.parametrize("metrics, agg", [((None,), "mean"), ((None, "Max time/rank (inc)"), "max"),
                                          ((), "mean")])
def test_ensemble_folder_is_one_group_and_matches(metrics: tuple[str | None, ...],
                                                  agg: str) -> None:
    files = run_paths([str(ENSEMBLE)], None)
    groups, alone = read_groups(files)
    assert [len(g.paths) for g in groups] == [10] and alone == []  # base and slow: one program
    fast = summarize_paths(files, None, metrics, agg)
    assert_same(fast, one_by_one(files, metrics, agg))
    if metrics:
        opts = StatsOptions(percentiles=(10.0, 90.0))
        assert ensemble_stats(fast, opts).table.equals(ensemble_stats(one_by_one(
            files, metrics, agg), opts).table)


@pytest.mark.parametrize("name", ["rajaperf", "mpi_scaling_cali", "spotdb",
                                  "caliper-timeseries-cali"])
def test_shared_caliper_ensembles_match(data, name: str) -> None:
    files = run_paths([str(data(name))], None)
    fast = summarize_paths(files, None, (None,), "mean")
    assert_same(fast, one_by_one(files, (None,), "mean"))


def test_main_root_time_is_calipers_own(tmp_path: Path) -> None:
    """Per run, the root's inclusive time is cali-query's (README of caliper-ensemble)."""
    files = run_paths([str(ENSEMBLE)], None)
    fast = summarize_paths(files, None, ("Total time (inc)",), "mean")
    roots = [s.values["Total time (inc)"][0] for s in fast]
    expected = [3.164930, 2.227690, 1.617860, 1.704910, 2.108660,
                1.843680, 1.966110, 1.719850, 1.448410, 1.086750]
    assert [s.names[0] for s in fast] == ["main"] * 10
    assert roots == pytest.approx(expected, abs=5e-7)


def _copy(tmp_path: Path) -> list[Path]:
    dst = tmp_path / "runs"
    shutil.copytree(ENSEMBLE, dst)
    return sorted(dst.rglob("*.cali"))


def test_a_run_that_does_not_fit_is_read_alone(tmp_path: Path) -> None:
    files = _copy(tmp_path)
    # Another `Node order` for one snapshot: a field that decides the tree, not a value.
    text = files[3].read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("__rec=ctx"))
    fields = line.split(",data=")[1].split("=")
    fields[6] = "99"  # min#min#aggregate.slot
    files[3].write_text(text.replace(line, line.split(",data=")[0] + ",data=" + "=".join(fields)))
    paths = [str(f) for f in files]
    groups, alone = read_groups(paths)
    assert alone == [3] and sum(len(g.paths) for g in groups) == 9
    assert_same(summarize_paths(paths, None, (None,), "mean"),
                one_by_one(paths, (None,), "mean"))


@pytest.mark.parametrize("at", [0, 6])
@pytest.mark.parametrize("batch", [3, 1024])
def test_a_run_whose_number_does_not_parse_is_read_alone(tmp_path: Path, at: int, batch: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The numbers of a group's runs are parsed together, ``batch`` runs at a time: a run
    # with one that does not parse leaves the group; when it is the first (the template),
    # so do the rest, as before.
    monkeypatch.setattr("cctool.readers.caliper.batch._PARSE_RUNS", batch)
    files = _copy(tmp_path)
    text = files[at].read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("__rec=ctx"))
    head, data = line.split(",data=")
    fields = data.split("=")
    fields[-1] = fields[-1] + "x"
    files[at].write_text(text.replace(line, head + ",data=" + "=".join(fields)))
    paths = [str(f) for f in files]
    groups, alone = read_groups(paths)
    assert alone == ([at] if at else list(range(len(files))))
    assert sum(len(g.paths) for g in groups) == len(files) - len(alone)
    with pytest.raises(ReaderError) as fast:
        summarize_paths(paths, None, (None,), "mean")
    with pytest.raises(ReaderError) as slow:
        one_by_one(paths, (None,), "mean")
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("damage", ["truncate", "nan"])
def test_a_broken_run_gives_the_readers_error(tmp_path: Path, damage: str) -> None:
    files = _copy(tmp_path)
    text = files[4].read_text()
    if damage == "truncate":
        files[4].write_text(text[: len(text) // 2])
    else:
        line = next(ln for ln in text.splitlines() if ln.startswith("__rec=ctx"))
        head, data = line.split(",data=")
        files[4].write_text(text.replace(line, head + ",data=nan" + data[data.index("="):]))
    paths = [str(f) for f in files]
    with pytest.raises(ReaderError) as fast:
        summarize_paths(paths, None, (None,), "mean")
    with pytest.raises(ReaderError) as slow:
        one_by_one(paths, (None,), "mean")
    assert str(fast.value) == str(slow.value)
    assert files[4].name in str(fast.value)


def test_later_tails_read_against_the_first_equal_their_full_parse() -> None:
    from cctool.readers.caliper.batch import _cut, _tail_metadata

    files = run_paths([str(ENSEMBLE)], None)
    (group,), _ = read_groups(files)
    assert group.plan is not None and "opts:output" in group.plan.fed[176]  # differs per run
    for path, meta in zip(group.paths, group.metadata, strict=True):
        cut = _cut(path)
        assert cut is not None
        full = _tail_metadata(group, Path(path), cut[1].split("\n")[:-1])
        assert full is not None and list(meta.items()) == list(full.items())


def test_tails_that_differ_in_values_or_attributes_give_the_readers_metadata(
        tmp_path: Path) -> None:
    files = _copy(tmp_path)
    edits = {3: ("data=Base_Seq,", "data=Other_Seq,"),  # a value: read against the first tail
             5: (",data=variant,", ",data=flavour,"),  # an attribute's name: parsed in full
             6: (",data=2.15.0-dev", ",data=2.16")}
    for i, (old, new) in edits.items():
        text = files[i].read_text()
        assert text.count(old) == 1
        files[i].write_text(text.replace(old, new))
    paths = [str(f) for f in files]
    groups, alone = read_groups(paths)
    assert alone == [] and len(groups) == 1
    fast = summarize_paths(paths, None, (None,), "mean")
    assert_same(fast, one_by_one(paths, (None,), "mean"))
    assert fast[3].metadata["variant"] == "Other_Seq" and "flavour" in fast[5].metadata
    assert fast[6].metadata["cali.caliper.version"] == "2.16"


def test_snapshot_pieces_are_the_fields_a_pattern_finds() -> None:
    # _pieces splits by string searches what this pattern splits; a snapshot line without a
    # data field after its first gives None (the run is read alone).
    import re

    from cctool.readers.caliper.batch import _pieces

    pattern = re.compile(r"(\n__rec=ctx,(?:[^,\n]*,)+?)data=([^\n]*)")
    data = Path(__file__).parent / "data"
    heads = ["\n" + f.read_text(errors="replace") for f in sorted(data.glob("caliper*/**/*.cali"))]
    heads += ["\n__rec=node,id=1,data=x\n__rec=ctx,ref=1,attr=2,data=3=4\n__rec=node,data=5",
              "\n__rec=ctx,data=1,attr=2,data=3\n", "\n__rec=ctx,ref=1,data=\n"]
    assert len(heads) > 3
    for head in heads:
        assert _pieces(head) == pattern.split(head)
    assert _pieces("\n__rec=ctx,ref=1,attr=2\n__rec=node,id=3,data=4") is None



def _heads(files: list[str]) -> list[str]:
    from cctool.readers.caliper.batch import _cut

    cuts = [_cut(f) for f in files]
    return [c[0] for c in cuts if c is not None]


def test_a_layout_tells_a_structure_as_the_pieces_do() -> None:
    # A later run is told by its group's layout (whole lines compared) instead of by
    # _structure's search of every snapshot line: both must say the same of every head,
    # the run's data fields when its structure is the group's, None otherwise.
    from cctool.readers.caliper.batch import _Layout, _structure

    files = run_paths([str(ENSEMBLE)], None)
    heads = _heads(files)
    others = _heads([str(f) for f in sorted(HERE.glob("caliper*/**/*.cali"))])
    ctx = next(ln for ln in heads[1].split("\n") if ln.startswith("__rec=ctx,"))
    edits = [heads[1].replace(ctx, ctx + ",x=1", 1),  # data no longer last
             heads[1].replace(ctx, ctx + "\\=1", 1),  # an escape in the data field
             heads[1].replace(ctx, ctx.replace(",data=", ",data=1,data=", 1), 1),
             heads[1].replace(ctx, ctx.replace("ref=", "ref=9=", 1), 1),  # another node
             heads[1].replace(ctx + "\n", ctx + "\n__rec=node,id=999,attr=8,data=x\n", 1),
             heads[1].replace(ctx + "\n", "", 1), heads[1] + ctx + "\n", heads[1][:-1]]
    key, datas = _structure(heads[0]) or ((), [])
    layout = _Layout.of(heads[0], datas)
    assert layout is not None
    for head in heads + others + edits:
        parts = _structure(head)
        assert layout.datas(head) == (parts[1] if parts and parts[0] == key else None)
    assert all(layout.datas(h) is not None for h in heads)
    assert not any(layout.datas(h) for h in edits)


@pytest.mark.parametrize("head, later", [
    ("__rec=node,id=1,data=x\n__rec=ctx,data=1,attr=2,data=3=4\n",
     ["__rec=node,id=1,data=x\n__rec=ctx,data=1,attr=2,data=5=6\n",
      "__rec=node,id=1,data=x\n__rec=ctx,data=1,attr=2,data=3,data=4\n",
      "__rec=node,id=1,data=x\n__rec=ctx,data=1,attr=2,data=\n"]),
    ("__rec=ctx,ref=1,attr=2,data=3\n__rec=ctx,ref=2,attr=2,data=4\n",
     ["__rec=ctx,ref=1,attr=2,data=7\n__rec=ctx,ref=2,attr=2,data=8\n",
      "__rec=ctx,ref=1,attr=2,data=7\n__rec=ctx,ref=2,attr=3,data=8\n"]),
])
def test_layouts_of_odd_snapshot_lines(head: str, later: list[str]) -> None:
    from cctool.readers.caliper.batch import _Layout, _structure

    key, datas = _structure(head) or ((), [])
    layout = _Layout.of(head, datas)
    assert layout is not None and layout.datas(head) == datas
    for other in later:
        parts = _structure(other)
        assert layout.datas(other) == (parts[1] if parts and parts[0] == key else None)


def test_runs_of_several_structures_in_turn_are_grouped_by_structure() -> None:
    # Runs of two structures taking turns: each run misses the previous run's layout and
    # is told by its structure; the groups and summaries are the reader's.
    from cctool.readers.caliper.batch import _cut, _structure

    ensemble = run_paths([str(ENSEMBLE)], None)
    scaling = [str(p) for p in sorted(HERE.glob("caliper-scaling/*/np1.cali"))]
    paths = [p for i, run in enumerate(ensemble) for p in (run, scaling[i % len(scaling)])]
    groups, alone = read_groups(paths)
    keys: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(paths):
        cut = _cut(p)
        parts = None if cut is None else _structure(cut[0])
        assert parts is not None
        keys.setdefault(parts[0], []).append(i)
    assert sorted(g.index for g in groups) == sorted(keys.values()) and alone == []
    assert_same(summarize_paths(paths, None, (None,), "mean"),
                one_by_one(paths, (None,), "mean"))


def test_numbers_are_parsed_here_when_no_thread_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # The numbers are parsed on a thread; where none can start (an address-space limit),
    # in the reading thread, with the same summaries.
    from concurrent.futures import ThreadPoolExecutor

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("can't start new thread")

    files = run_paths([str(ENSEMBLE)], None)
    threaded = summarize_paths(files, None, (None,), "mean")
    monkeypatch.setattr(ThreadPoolExecutor, "submit", refuse)
    monkeypatch.setattr("cctool.readers.caliper.batch._PARSE_RUNS", 3)
    groups, alone = read_groups(files)
    assert [len(g.paths) for g in groups] == [10] and alone == []
    assert_same(summarize_paths(files, None, (None,), "mean"), threaded)


@pytest.mark.parametrize("metric, agg", [("Total time (inc)", "mean"), ("Max time/rank (inc)",
                                                                         "max")])
def test_runs_of_one_tree_give_the_path_table_of_a_grouping(metric: str, agg: str) -> None:
    # Runs read together share one tree, so stats lays their values out by path and run
    # without Polars grouping them: the same table, bit for bit, as the grouping of the same
    # runs given each its own tree, odd values included (-0.0, NaN, infinities).
    from dataclasses import replace

    from cctool.ops.stats import path_values

    files = run_paths([str(ENSEMBLE)], None)
    fast = summarize_paths(files, None, (metric,), agg)
    odd = np.array([-0.0, np.nan, np.inf, -np.inf, 5e-324])
    for i, run in enumerate(fast[:5]):
        run.values[metric][i + 1] = odd[i]
    assert len({id(r.names) for r in fast}) == 1  # one tree: the table is laid out
    own = [replace(r, names=r.names.copy()) for r in fast]  # a tree each: it is grouped
    laid, grouped = path_values(fast, metric), path_values(own, metric)
    assert laid.values.schema == grouped.values.schema and laid.values.height == 670
    for col in laid.values.columns:
        assert laid.values[col].to_numpy().tobytes() == grouped.values[col].to_numpy().tobytes()
    assert laid.labels.equals(grouped.labels) and np.array_equal(laid.parent, grouped.parent)


def test_integer_values_of_one_tree_keep_the_groupings_types() -> None:
    # Integer values (a count) of runs of one tree: a mean of one integer is a float in
    # Polars' grouping, so they are grouped as before, not laid out.
    from dataclasses import replace

    from cctool.ops.stats import path_values

    metric = "Total time (inc)"
    files = run_paths([str(ENSEMBLE)], None)
    runs = [replace(r, values={metric: (r.values[metric] * 1e6).astype(np.int64)},
                    merge={metric: "mean"})
            for r in summarize_paths(files, None, (metric,), "mean")]
    assert len({id(r.names) for r in runs}) == 1
    own = [replace(r, names=r.names.copy()) for r in runs]
    laid, grouped = path_values(runs, metric), path_values(own, metric)
    assert laid.values.schema["value"] == pl.Float64 and laid.values.equals(grouped.values)
