"""The v4 reader's block columns: pruned slots dropped in place, profiles on threads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import cctool
from cctool import kernels
from cctool.readers.hpctoolkit import _v4_blocks as blocks
from cctool.synth import generate


def _blocks(planes: int, nloc: int, slots: int, seed: int) -> tuple[blocks.Blocks, np.ndarray]:
    got = blocks.Blocks({}, np.zeros(slots, dtype=bool), np.zeros(planes, dtype=bool))
    block = blocks._mapped((planes, nloc, slots), got)
    block[...] = np.random.default_rng(seed).random(block.shape)
    got.columns = {c: block[c] for c in range(planes)}
    return got, block.copy()


@pytest.mark.parametrize(("nloc", "slots", "kept"), [(70, 3000, 2100), (5, 700, 699), (33, 9, 0)])
def test_kept_columns_are_the_gathered_slots(nloc: int, slots: int, kept: int) -> None:
    got, want = _blocks(2, nloc, slots, seed=nloc)
    keep = np.sort(np.random.default_rng(1).choice(slots, kept, replace=False))
    out = blocks.kept_columns(got, keep)
    assert not got.columns
    for c in range(2):
        assert np.array_equal(out[c], np.take(want[c], keep, axis=1).reshape(-1))


def test_kept_columns_without_pruning_are_the_planes() -> None:
    got, want = _blocks(3, 8, 50, seed=2)
    out = blocks.kept_columns(got, None)
    for c in range(3):
        assert np.array_equal(out[c], want[c].reshape(-1))
        assert np.shares_memory(out[c], got.memory[0][1])  # no copy


@pytest.mark.parametrize(("planes", "keep_all"), [([0, 2], False), ([0, 1, 2], True)])
def test_kept_planes_of_one_block_lie_side_by_side(planes: list[int], keep_all: bool) -> None:
    """The kept planes of one block end up one after the other from its start, in column
    order (plane 1 left out: plane 2 moves to the second place), for one subtree pass;
    without pruning, planes that lie so already stay where they are."""
    got, want = _blocks(3, 40, 600, seed=3)
    got.block = got.memory[0][1].reshape(3, 40, 600)
    got.columns = {c: got.block[c] for c in planes}
    keep = None if keep_all else np.sort(np.random.default_rng(4).choice(600, 450, False))
    out = blocks.kept_columns(got, keep)
    assert got.stacked is not None
    order, flat = got.stacked
    assert order == planes and not got.columns
    assert np.shares_memory(flat, got.memory[0][1])
    for j, c in enumerate(order):
        exp = want[c] if keep is None else np.take(want[c], keep, axis=1)
        size = exp.size
        assert np.array_equal(out[c], exp.reshape(-1))
        assert np.array_equal(flat[j * size : (j + 1) * size], out[c])


@pytest.mark.parametrize("compiled", [True, False])
def test_profiles_on_threads_give_the_same_bits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    db = generate(tmp_path / "v4", nodes=400, ranks=64, threads=1, metrics=2, seed=5, fmt="v4")
    # 0: the compiled kernel; past the database's values: the NumPy twin
    monkeypatch.setattr(kernels, "PROFILE_COSTS_COMPILED_WORK", 0 if compiled else 1 << 62)
    monkeypatch.setenv("CCTOOL_NO_BACKGROUND_COMPILE", "1")
    monkeypatch.setattr(blocks, "_THREADED_VALUES", 0)  # threads for the twin's small profiles
    monkeypatch.setattr(kernels, "cores", lambda: 1)
    one = cctool.read(db.path)
    monkeypatch.setattr(kernels, "cores", lambda: 3)
    three = cctool.read(db.path)
    assert one.metrics.columns == three.metrics.columns
    assert one.metrics.equals(three.metrics)
    assert one.metrics.select(pl.col("time").sum()).item() > 0


class _Bytes:
    """A profile.db's bytes read as ``Db.array`` reads them."""

    def __init__(self, data: bytes) -> None:
        self.data = np.frombuffer(data, dtype=np.uint8)

    def array(self, dt: np.dtype, off: int, count: int) -> np.ndarray:
        return np.ndarray((int(count),), dtype=dt, buffer=self.data, offset=int(off))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("uniform", [True, False])
def test_per_metric_costs_give_the_twins_bits(seed: int, uniform: bool) -> None:
    """One metric at a time, the bits of ``profile_own_costs`` (the NumPy twin), with unknown
    contexts, owners that are not kept, roots, a metric id without a column and rounding
    noise; each metric at each context (``uniform``) or contexts holding different numbers
    of values, in any metric order, a metric twice or none. A context id past the tables or
    an index that does not match the values is left to the twin, the plane untouched."""
    from cctool.kernels import _reference
    from cctool.readers.hpctoolkit import _v4_per_metric as per_metric
    from cctool.readers.hpctoolkit._v4_db import IDX, VAL

    rng = np.random.default_rng(seed)
    ids, slots, e, ncols = 90, 40, 60, 3
    # per context id: its owner's slot (-1 unknown, ``slots`` not kept) and its parent's
    first = rng.integers(-1, slots + 1, ids)
    second = np.where(rng.random(ids) < 0.8, rng.integers(0, slots + 1, ids), -1)
    # slot 0: context 0's value less its children's (contexts 1 and 2) is rounding noise
    first[first == 0], second[second == 0] = 3, 3
    first[:3], second[:3] = [0, 1, 2], [-1, 0, 0]
    column = np.full(1 << 16, -1, dtype=np.int64)
    column[[4, 7, 9]] = [2, 0, 1]  # metric 5: no column
    metrics = np.array([7, 4, 9, 5])
    k = metrics.size
    count = np.full(e, k) if uniform else np.append([k, k, k], rng.integers(0, 6, e - 3))
    val = np.zeros(int(count.sum()), dtype=VAL)
    val["metric"] = np.tile(metrics, e) if uniform else rng.choice(metrics, val.size)
    val["metric"][: 3 * k] = np.tile(metrics, 3)
    val["value"] = rng.lognormal(size=val.size)
    val["value"][::5] = 0.1  # repeated values: exact cancellations and rounding noise
    # slot 0 in column 0 (metric 7): 0.3 - 0.1 - 0.2 = -2.8e-17, noise; in column 1 (metric
    # 9): 1.5e-9 of terms adding up to 2, cleared; in column 2 (metric 4): 2.5e-9, kept
    val["value"][: 3 * k] = [0.3, 1, 1, 7, 0.1, 0.5, 0.5, 7, 0.2, 0.5 - 2.5e-9, 0.5 - 1.5e-9, 7]
    idx = np.zeros(e, dtype=IDX)
    idx["ctx"] = np.append([0, 1, 2], np.sort(rng.choice(np.arange(3, ids), e - 3, False)))
    idx["start"] = np.cumsum(count) - count
    info = np.zeros(
        1, dtype=[("nvalues", "<u8"), ("values", "<u8"), ("nctxs", "<u4"), ("ctxs", "<u8")]
    )[0]
    info["nvalues"], info["values"], info["nctxs"], info["ctxs"] = val.size, 0, e, val.nbytes
    tables = per_metric.cell_tables(first, second, slots)
    got = np.zeros((ncols, 2, slots))
    assert per_metric.own_costs(
        _Bytes(val.tobytes() + idx.tobytes()), info, tables, column, got[:, 1]
    )
    want = np.zeros((ncols, slots))
    at = idx["ctx"].astype(np.intp)
    _reference.profile_own_costs(
        first[at], second[at], count, column[val["metric"]], val["value"].copy(), want
    )
    assert np.array_equal(got[:, 1], want) and not got[:, 0].any()
    assert (want[:2, 0] == 0).all() and want[2, 0] > 2e-9  # cleared, kept
    assert (want == 0).any() and (want != 0).any()
    for broken in ("ctx", "start"):
        bad = idx.copy()
        bad[broken][-1 if broken == "ctx" else 0] = ids if broken == "ctx" else 1
        untouched = np.zeros((ncols, slots))
        data = val.tobytes() + bad.tobytes()
        assert not per_metric.own_costs(_Bytes(data), info, tables, column, untouched)
        assert not untouched.any()


@pytest.mark.parametrize("name", ["generated", "loops-perf.nostruct.d", "small.nostruct.d"])
def test_per_metric_path_reads_as_the_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A database read one metric at a time and through the twin alone: the same frame, bit
    for bit; generated (each metric at each context) and hpcprof's (contexts holding
    different metric scopes)."""
    from cctool.readers.hpctoolkit import _v4_per_metric as per_metric

    if name == "generated":
        path = generate(
            tmp_path / "v4", nodes=300, ranks=8, threads=1, metrics=2, seed=7, fmt="v4"
        ).path
    else:
        path = Path(__file__).parent / "data" / "hpctoolkit-v4" / name
    monkeypatch.setattr(kernels, "PROFILE_COSTS_COMPILED_WORK", 1 << 62)
    monkeypatch.setattr(kernels, "_impl", None)  # the NumPy path even after a compiled test
    calls: list[bool] = []
    own_costs = per_metric.own_costs

    def counted(*args: object) -> bool:
        calls.append(own_costs(*args))  # type: ignore[arg-type]
        return calls[-1]

    monkeypatch.setattr(per_metric, "own_costs", counted)
    fast = cctool.read(path)
    assert calls and all(calls)
    monkeypatch.setattr(per_metric, "own_costs", lambda *args: False)
    twin = cctool.read(path)
    assert fast.metrics.equals(twin.metrics) and fast.nodes.equals(twin.nodes)
    assert fast.metrics.select(pl.exclude("node", "rank", "thread")).sum().row(0)[0] != 0
