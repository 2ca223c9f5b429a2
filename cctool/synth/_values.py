"""Sample values: what hpcrun would have recorded per statement, rank and thread, and the
inclusive/exclusive columns hpcprof derives from them."""

from __future__ import annotations

import math

import numpy as np

from cctool.synth._tree import COSTS, Layout

PERIOD_US = 1000


class Sampler:
    """Per-statement sample counts for blocks of (rank, thread) locations."""

    def __init__(self, layout: Layout, ranks: int, threads: int, seed: int) -> None:
        rng = np.random.default_rng([seed, 0])
        kinds, roles = layout.kinds, layout.roles
        code = {k: i for i, k in enumerate(COSTS)}
        n = kinds.size
        w = np.zeros(n)
        for c, (mu, sd) in enumerate(COSTS.values()):
            m = kinds == c
            w[m] = rng.lognormal(mu, sd, int(m.sum()))
        w *= layout.trips
        # Expected samples per location: the main thread's tree, workers at 70 % of that.
        target = max(20.0 * n, 20_000.0)
        for role, share in ((0, 1.0), (1, 0.7)):
            m = roles == role
            if m.any():
                w[m] *= target * share / w[m].sum()
        polling = (kinds == code["wait"]) | (kinds == code["spin"])
        self.ipc = np.where(polling, 2.2, rng.lognormal(math.log(1.2), 0.4, n))
        self.w, self.roles, self.seed = w, roles, seed
        self.ranks, self.threads = ranks, threads

        compute0 = np.nonzero((kinds == code["compute"]) & (roles == 0))[0]
        self.imb_idx, self.imb = _imbalance(rng, w, compute0, ranks)
        work = w[compute0].sum() + (w[self.imb_idx] * (self.imb - 1.0)).sum(axis=1)
        # Ranks that finish their work early wait for the slowest one inside MPI.
        self.wait_idx = np.nonzero((kinds == code["wait"]) & (roles == 0))[0]
        self.wait_share = w[self.wait_idx] / max(w[self.wait_idx].sum(), 1e-300)
        self.wait_extra = work.max() - work
        tf = 1.0 + 0.3 * np.maximum(np.arange(threads) - 1, 0) / max(threads - 2, 1)
        self.compute1 = np.nonzero((kinds == code["compute"]) & (roles == 1))[0]
        self.spin_idx = np.nonzero((kinds == code["spin"]) & (roles == 1))[0]
        self.spin_share = w[self.spin_idx] / max(w[self.spin_idx].sum(), 1e-300)
        wwork = w[self.compute1].sum() * tf
        self.thread_factor, self.spin_extra = tf, wwork.max() - wwork

    def block(self, locs: np.ndarray, block_no: int, kinds: int) -> list[np.ndarray]:
        """Integer values per metric kind, each (len(locs), statements)."""
        rng = np.random.default_rng([self.seed, 1, block_no])
        rank, thread = np.divmod(locs, self.threads)
        main = (thread == 0)[:, None]
        lam = self.w * rng.lognormal(0.0, 0.15, (locs.size, self.w.size))
        lam *= (self.roles == 0)[None, :] == main  # each thread runs only its own tree
        if self.imb_idx.size:
            lam[:, self.imb_idx] *= self.imb[rank]
        if self.wait_idx.size:
            lam[:, self.wait_idx] += self.wait_extra[rank][:, None] * self.wait_share * main
        if self.compute1.size:
            lam[:, self.compute1] *= self.thread_factor[thread][:, None]
        if self.spin_idx.size:
            lam[:, self.spin_idx] += self.spin_extra[thread][:, None] * self.spin_share * ~main
        counts = rng.poisson(lam)
        jitter = rng.random(lam.shape)
        cpu = np.rint(counts * (PERIOD_US * (0.97 + 0.06 * jitter)))
        out = [cpu]
        if kinds > 1:
            out.append(np.rint(cpu * (2400.0 * (0.985 + 0.03 * jitter))))
        if kinds > 2:
            out.append(np.rint(out[1] * self.ipc))
        return [v.astype(np.int64) for v in out]


def _imbalance(rng: np.random.Generator, w: np.ndarray, candidates: np.ndarray,
               ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """Imbalanced statements (the 3 heaviest and 4 % more) and their factor per rank."""
    if ranks < 2 or candidates.size == 0:
        return np.zeros(0, dtype=np.int64), np.ones((ranks, 0))
    heavy = candidates[np.argsort(w[candidates], kind="stable")[::-1][:3]]
    extra = rng.choice(candidates, max(1, candidates.size // 25), replace=False)
    idx = np.unique(np.concatenate([heavy, extra]))
    r = np.arange(ranks)
    prof = np.ones((ranks, idx.size))
    for j in range(idx.size):
        shape, a = rng.integers(3), rng.uniform(0.3, 1.5)
        if shape == 0:  # a ramp over ranks (decomposition that grows with rank)
            prof[:, j] = 1.0 + a * r / (ranks - 1)
        elif shape == 1:  # a few hot ranks
            prof[rng.choice(ranks, max(1, ranks // 32), replace=False), j] = 1.0 + 2.0 * a
        else:  # half of the machine is slower
            prof[r >= ranks // 2, j] = 1.0 + a
    return idx, prof


def columns(vals: np.ndarray, lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(inclusive, exclusive) per XML row for statement values ``vals`` (locations, stmts)."""
    nrows = lay.end.size
    exc = np.zeros((vals.shape[0], nrows), dtype=np.int64)
    exc[:, lay.stmt_rows] = vals
    cum = np.zeros((vals.shape[0], nrows + 1), dtype=np.int64)
    np.cumsum(exc, axis=1, out=cum[:, 1:])  # integers, so the subtree sums are exact
    inc = cum[:, lay.end] - cum[:, :-1]
    if lay.pair_stmt.size:
        exc[:, lay.scope_rows] += np.add.reduceat(vals[:, lay.pair_stmt], lay.scope_starts, axis=1)
    return inc, exc


