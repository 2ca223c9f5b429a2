"""timemory 3.3 trees: the ``graph`` layout (no MPI) and the ``mpi`` layout (4 ranks).

Files: tests/data/timemory (README.md: timemory 3.3.0rc4, the programs and commands).
Expected values are timemory's own, from the flat ``wall.json`` of the same runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cctool.errors import ReaderError
from cctool.readers import read_declared as read

DATA = Path(__file__).resolve().parent / "data" / "timemory"


def flat(folder: str) -> dict[str, float]:
    doc = json.loads((DATA / folder / "wall.json").read_text())
    entries = doc["timemory"]["wall_clock"]["ranks"][0]["graph"]
    return {e["prefix"].split("|_")[-1].replace(">>> ", "").strip(): e["entry"]["repr_data"]
            for e in entries}


def test_graph_layout_reads() -> None:
    gf = read(DATA / "graph-threads" / "wall.tree.json")
    want = flat("graph-threads")
    inc = gf.node_values(["wall_clock (inc)"])
    names = gf.nodes["name"].to_list()
    for name in ("main", "setup", "worker", "solve", "step"):
        assert inc["wall_clock (inc)"][names.index(name)] == pytest.approx(want[name], rel=1e-12)
    assert gf.nodes["name"].gather(gf.roots).to_list() == ["main"]
    assert gf.metadata["threads_combined"] == [[1, 2]]  # timemory merged the two workers
    assert gf.metadata["metric_units"] == {"wall_clock": "s", "laps": "count"}
    gf.validate()


def test_mpi_layout_of_the_same_release() -> None:
    gf = read(DATA / "mpi-4ranks" / "wall.tree.json")
    assert gf.num_ranks == 4
    total = gf.node_values(["wall_clock (inc)"])["wall_clock (inc)"].gather(gf.roots).sum()
    assert total == pytest.approx(flat("mpi-4ranks")["main_loop"], rel=1e-9)
    gf.validate()


def test_flat_json_is_refused_with_a_pointer_to_the_tree() -> None:
    with pytest.raises(ReaderError, match=r"flat 'ranks' list.*tree.json"):
        read(DATA / "graph-threads" / "wall.json", "timemory")
