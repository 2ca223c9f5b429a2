"""The HPCToolkit reader's metric-db decoding gives exactly what the plain algorithms give."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cctool import kernels
from cctool.kernels import _jit, _reference
from cctool.readers.hpctoolkit import xml as hpctoolkit

IMPLS = [pytest.param(_jit, id="numba"), pytest.param(_reference, id="numpy")]


def _write_dbs(folder: Path, values: np.ndarray) -> list[tuple[int, int, Path]]:
    """One metric-db per (files, rows, metrics) slice of ``values``, as hpcprof-mpi names them."""
    files, rows, metrics = values.shape
    head = b"HPCPROF-metricdb__00.10b" + rows.to_bytes(4, "big") + metrics.to_bytes(4, "big")
    out = []
    for i in range(files):
        p = folder / f"1.prog-{i // 2:06d}-{i % 2:03d}-a8c00400-{100 + i}-0.metric-db"
        p.write_bytes(head + values[i].astype(">f8").tobytes())
        out.append((i // 2, i % 2, p))
    return out


def _expected(values: np.ndarray, keep: np.ndarray, child: np.ndarray, parent: np.ndarray,
              exclusive: list[bool]) -> np.ndarray:
    """Pair by pair, then fancy indexing: the plain algorithm."""
    vals = values.copy()
    for m, exc in enumerate(exclusive):
        if exc:
            for c, p in zip(child, parent, strict=True):
                vals[:, p, m] -= vals[:, c, m]
    return np.stack([vals[:, keep, m].reshape(-1) for m in range(values.shape[2])])


@pytest.mark.parametrize("keep", ["all", "some", "repeated", "more than rows"])
@pytest.mark.parametrize("batch_bytes", [1, 10_000, 1 << 20])
@pytest.mark.parametrize("compiled", [False, True])
def test_read_metric_dbs_matches_plain_algorithm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str, batch_bytes: int, compiled: bool
) -> None:
    rng = np.random.default_rng(1)
    files, rows, metrics = 7, 50, 4
    values = rng.standard_normal((files, rows, metrics)) * 10 ** rng.uniform(-3, 6, (files, rows,
                                                                                       metrics))
    idx = {"all": np.arange(rows), "some": np.sort(rng.choice(rows, 30, replace=False)),
           "repeated": np.array([3, 3, 0, 49, 7]), "more than rows": np.arange(60) % 50}[keep]
    child, parent = np.array([11, 12, 13, 14, 12]), np.array([0, 0, 5, 0, 5])
    exclusive = [False, True, False, True]
    monkeypatch.setattr(hpctoolkit, "_BATCH_BYTES", batch_bytes)
    monkeypatch.setattr(hpctoolkit, "_NUMPY_BATCH_BYTES", batch_bytes)
    monkeypatch.setattr(kernels, "METRIC_DB_COMPILED_WORK", 0 if compiled else 1 << 62)
    monkeypatch.setattr(kernels, "_impl", _jit if compiled else None)
    got = hpctoolkit.read_metric_dbs(_write_dbs(tmp_path, values), rows, idx, (child, parent),
                                      exclusive)
    np.testing.assert_array_equal(got, _expected(values, idx, child, parent, exclusive))


@pytest.mark.parametrize("impl", IMPLS)
def test_metric_db_rows_subtracts_statement_costs(impl) -> None:
    values = np.array([[[10.0], [4.0], [3.0], [99.0]], [[20.0], [5.0], [5.0], [99.0]]])
    raw = values.astype(">f8").view(np.uint64)
    pairs = (np.array([1, 2]), np.array([0, 0]))  # rows 1 and 2 are statements of scope 0
    out = np.zeros((1, 6))
    impl.metric_db_rows(raw, np.array([0, 1, 2]), *pairs, np.array([True]), out, 0)
    np.testing.assert_array_equal(out[0], [3.0, 4.0, 3.0, 10.0, 5.0, 5.0])


def test_first_broken_file_in_order_is_reported(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from cctool.errors import ReaderError

    files = _write_dbs(tmp_path, np.ones((9, 20, 2)))
    for _, _, p in (files[3], files[7]):
        p.write_bytes(p.read_bytes()[:100])
    monkeypatch.setattr(hpctoolkit, "_BATCH_BYTES", 1)  # one file per batch, on two threads
    monkeypatch.setattr(kernels, "_impl", _jit)
    with pytest.raises(ReaderError, match=files[3][2].name):
        hpctoolkit.read_metric_dbs(files, 20, np.arange(20), (np.zeros(0), np.zeros(0)),
                                    [False, False])
