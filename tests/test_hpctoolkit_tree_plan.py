"""One plan of a v4 database's context tree for the reader and the scanners: a tree whose
contexts form a cycle is refused with the same one line whether the database is read whole,
streamed in parts under a memory budget, or read on worker processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.readers.hpctoolkit import v4
from cctool.readers.hpctoolkit.in_parts import open_v4
from cctool.readers.hpctoolkit.tree_plan import tree_plan

DB = Path(__file__).resolve().parent / "data" / "hpctoolkit-v4" / "small.nostruct.d"
CYCLE = "meta.db's contexts form a cycle"


def _cyclic(tree_of: Any) -> Any:
    """``tree_of`` with one node made its own grandchild: a kept context ``a`` below a root
    whose kept child ``b`` becomes ``a``'s parent (``a -> b -> a`` reaches no root)."""
    def cyclic(meta: dict[str, Any]) -> dict[str, np.ndarray]:
        tree = dict(tree_of(meta))
        parent = tree["parent"].copy()
        kept = tree["kept"]
        a = next(i for i in np.flatnonzero(kept) if parent[i] >= 0
                 and (kept & (parent == i)).any())
        parent[a] = int(np.flatnonzero(kept & (parent == a))[0])
        tree["parent"] = parent
        return tree
    return cyclic


@pytest.fixture()
def cyclic_db(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(v4, "tree_of", _cyclic(v4.tree_of))
    return DB


def test_the_reader_and_the_scanner_share_one_plan() -> None:
    meta = v4.meta_of(DB)
    plan = tree_plan(meta, v4.tree_of(meta), ValueError)
    scanned = open_v4(DB).scan.tree
    for name in ("ids", "index", "table", "ctx_parent", "owner", "slot", "ctx_of_node",
                 "parent", "column"):
        assert np.array_equal(getattr(scanned, name), getattr(plan, name)), name


@pytest.mark.parametrize("args, env", [
    (["tree", "--to", "json"], {}),
    (["tree", "--agg", "mean", "--to", "json"], {"CCTOOL_MEMORY_BUDGET": "1000"}),
    (["tree", "--agg", "max", "--stream"], {}),
    (["imbalance"], {}),
    (["imbalance", "--stream"], {}),
    (["imbalance", "--jobs", "2"], {}),
    (["read"], {}),
])
def test_a_cycle_is_one_line_whole_or_in_parts(cyclic_db: Path, args: list[str],
                                               env: dict[str, str]) -> None:
    res = CliRunner().invoke(cli, [args[0], str(cyclic_db), *args[1:]], env=env)
    assert res.exit_code == 2, res.output
    assert res.stderr.strip().splitlines()[-1] == f"Error: hpctoolkit-v4: {DB}/profile.db: {CYCLE}"
    assert "Traceback" not in res.stderr and not res.stdout
