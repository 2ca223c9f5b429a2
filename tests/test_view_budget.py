"""The views' display order by tree levels, and the page's size budget per embedded view:
on the GAMESS profile's real views (38,491 bottom-up rows), checked against the
preorder kernel's order and against the uncapped rows' own sums."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from cctool import read
from cctool.kernels import _reference
from cctool.ops.views import compute
from cctool.ops.views._order import levels, siblings_sorted, sorted_preorder, subtree_sizes
from cctool.ops.views._rows import kernel_order
from cctool.render.html._budget import cap
from cctool.render.html._views import table_views
from tests.conftest import SHARED_DATA


@pytest.fixture(scope="module")
def gamess(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    src = SHARED_DATA / "hpctoolkit-gamess"
    if not src.is_dir():
        pytest.skip(f"real profiles not available: {src} is absent")
    copy = tmp_path_factory.mktemp("gamess") / src.name
    shutil.copytree(src, copy)
    return read(copy)


def test_order_by_levels_is_the_kernels_order(gamess) -> None:  # type: ignore[no-untyped-def]
    parent = gamess.parent_array.astype(np.int64)
    for key in (
        gamess.node_values("time (inc)")
        if "time (inc)" in gamess.metric_columns
        else np.arange(parent.size, dtype=np.float64),
        np.zeros(parent.size),
        -np.arange(parent.size, dtype=np.float64),
    ):
        assert np.array_equal(
            sorted_preorder(parent, np.asarray(key, float)),
            kernel_order(parent, np.asarray(key, float)),
        )
    depth = levels(parent)
    assert depth is not None
    sizes = subtree_sizes(parent, depth)
    ones = _reference.subtree_sums(np.ones((1, parent.size)), parent)[0]
    assert np.array_equal(sizes, ones.astype(np.int64))
    assert sizes[gamess.roots].sum() == parent.size


def test_rows_numbered_level_after_level_sort_only_their_siblings(gamess) -> None:  # type: ignore[no-untyped-def]
    view = compute(gamess, "bottom-up")
    rows = view.rows
    by_level = np.argsort(rows["depth"].to_numpy(), kind="stable")  # as bottom-up makes them
    new = np.empty_like(by_level)
    new[by_level] = np.arange(by_level.size)
    up = rows["parent"].fill_null(-1).to_numpy()[by_level]
    parent = np.where(up >= 0, new[np.maximum(up, 0)], -1).astype(np.int64)
    assert (np.diff(parent) >= 0).all()
    key = rows[view.inclusive].to_numpy()[by_level]
    for k in (key, np.zeros(parent.size), np.round(key, -3)):  # ties among siblings too
        assert np.array_equal(siblings_sorted(parent, -k), np.lexsort((-k, parent)))
        assert np.array_equal(sorted_preorder(parent, k), kernel_order(parent, k))
    # and the order is the view's own
    assert np.array_equal(by_level[sorted_preorder(parent, key)], np.arange(parent.size))


def test_a_cycle_or_a_deep_chain_goes_to_the_kernels() -> None:
    assert sorted_preorder(np.array([1, 0, -1]), np.ones(3)) is None
    chain = np.arange(-1, 3000)  # 3,001 levels
    assert levels(chain) is None


def test_budget_merges_the_lightest_rows_and_keeps_the_sums(gamess) -> None:  # type: ignore[no-untyped-def]
    view = compute(gamess, "bottom-up", max_rows=100_000)
    rows = view.rows
    parent = rows["parent"].fill_null(-1).to_numpy().astype(np.int64)
    exc = rows[view.exclusive].to_numpy()
    inc = rows[view.inclusive].to_numpy()
    capped = cap(parent, exc, inc, additive=True, budget=5_000)
    assert capped is not None
    n, kept = capped.parent.size, capped.keep >= 0
    assert n <= 5_000 and (capped.parent < np.arange(n)).all()
    assert kept.sum() + capped.merged == rows.height  # every row kept or merged, once
    assert capped.count[~kept].sum() == capped.merged and (capped.count[kept] == 0).all()
    assert np.array_equal(capped.exc[kept], exc[capped.keep[kept]])
    # the top level and every kept row's children add up as before
    assert capped.inc[capped.parent < 0].sum() == pytest.approx(inc[parent < 0].sum())
    assert np.nansum(capped.exc) == pytest.approx(np.nansum(exc))
    before = np.bincount(parent[parent >= 0], weights=inc[parent >= 0], minlength=parent.size)
    after = np.bincount(
        capped.parent[capped.parent >= 0], weights=capped.inc[capped.parent >= 0], minlength=n
    )
    np.testing.assert_allclose(after[kept], before[capped.keep[kept]], rtol=1e-12)
    # the heaviest rows are the ones kept
    assert inc[capped.keep[kept]].min() >= np.sort(inc)[-int(kept.sum()) - 50]
    assert cap(parent, exc, inc, additive=True, budget=rows.height) is None


def test_page_says_how_many_rows_were_merged(gamess) -> None:  # type: ignore[no-untyped-def]
    views = table_views(gamess, gamess.default_metric)
    bu = views["bottom-up"]
    assert bu["n"] <= 25_000
    assert "lightest are merged into [N smaller nodes] rows" in bu["note"]
    assert any(str(v).endswith("smaller nodes]") for v in bu["name"]["values"])
    assert "merged" in bu["role"]["values"]
