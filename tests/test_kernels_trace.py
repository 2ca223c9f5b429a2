"""trace_line: one line of a trace.db decoded, the compiled kernel against its NumPy twin."""

from __future__ import annotations

import numpy as np
import pytest

from cctool import kernels
from cctool.kernels import _jit, _reference
from cctool.kernels._reference_trace import TraceProblem

IMPLS = [pytest.param(_jit, id="numba"), pytest.param(_reference, id="numpy")]
_ELEM = np.dtype([("timestamp", "<u8"), ("ctx", "<u4")])


def _raw(stamps: list[int], ctx: list[int]) -> np.ndarray:
    elems = np.zeros(len(stamps), dtype=_ELEM)
    elems["timestamp"], elems["ctx"] = stamps, ctx
    return elems.view(np.uint8)


def _decode(impl, raw: np.ndarray, node_of: np.ndarray, origin: int, ran_only: bool):
    view = raw.view()
    view.flags.writeable = False
    got = impl.trace_line(view, kernels._as_i64(node_of), origin, ran_only)
    return [a.tolist() for a in got[:3]], int(got[3]), int(got[4])


NODE_OF = np.array([-1, 0, 1, -1, 2, -2], dtype=np.int64)  # ctx 3: no node; 5: unknown
BIG = 1_700_000_000_000_000_000  # ns since the epoch: past float64's exact integers


@pytest.mark.parametrize("impl", IMPLS)
def test_running_samples_end_at_the_next_element(impl) -> None:
    raw = _raw([BIG, BIG + 5, BIG + 5, BIG + 9, BIG + 12], [1, 2, 0, 4, 1])
    assert _decode(impl, raw, NODE_OF, BIG, False) == (
        [[BIG, BIG + 5, BIG + 9], [BIG + 5, BIG + 5, BIG + 12], [0, 1, 2]], 0, 0)
    # ran_only: the sample that lasts no time is left out too.
    assert _decode(impl, raw, NODE_OF, BIG, True) == (
        [[BIG, BIG + 9], [BIG + 5, BIG + 12], [0, 2]], 0, 0)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(("stamps", "ctx", "origin", "problem", "value"), [
    ([5, 4, 6], [1, 1, 1], 0, TraceProblem.UNSORTED, 0),
    ([5, 6, 7], [1, 1, 1], 6, TraceProblem.BEFORE_ORIGIN, 0),
    ([5, 6, 7, 8], [3, 9, 5, 1], 0, TraceProblem.UNKNOWN_CONTEXT, 9),  # before ctx 3's
    ([5, 6, 7], [1, 3, 1], 0, TraceProblem.NO_NODE, 3),
    ([5, 6, 7], [1, 1, 9], 0, TraceProblem.NONE, 0),  # the last element never runs
])
def test_a_line_with_a_problem_names_it(impl, stamps, ctx, origin, problem, value) -> None:
    got = _decode(impl, _raw(stamps, ctx), NODE_OF, origin, False)
    assert got[1:] == (int(problem), value)


@pytest.mark.parametrize("ran_only", [False, True])
def test_the_kernel_equals_its_twin_on_random_lines(ran_only: bool) -> None:
    rng = np.random.default_rng(3)
    node_of = np.arange(-1, 40, dtype=np.int64)
    for n in [0, 1, 2, 3, 50, 1000]:
        stamps = (BIG + np.cumsum(rng.integers(0, 3, n))).tolist()
        ctx = rng.integers(0, 41, n).tolist()
        raw = _raw(stamps, ctx)
        # an odd offset into a larger buffer: elements at any alignment
        shifted = np.zeros(raw.size + 1, dtype=np.uint8)[1:]
        shifted[:] = raw
        assert _decode(_jit, shifted, node_of, BIG, ran_only) == _decode(
            _reference, raw, node_of, BIG, ran_only)
