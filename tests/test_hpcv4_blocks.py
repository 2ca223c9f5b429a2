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
    monkeypatch.setattr(kernels, "cores", lambda: 1)
    one = cctool.read(db.path)
    monkeypatch.setattr(kernels, "cores", lambda: 3)
    three = cctool.read(db.path)
    assert one.metrics.columns == three.metrics.columns
    assert one.metrics.equals(three.metrics)
    assert one.metrics.select(pl.col("time").sum()).item() > 0
