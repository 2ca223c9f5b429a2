"""One definition of "the same frame": unify (diff), query's squash and scaling agree."""

from __future__ import annotations

import numpy as np
import polars as pl

from cctool.graphframe import GraphFrame
from cctool.model.paths import frame_name, frame_strings


def _gf(parents: list[int], names: list[str], types: list[str], modules: list[str],
        lines: list[int], time: list[float]) -> GraphFrame:
    n = len(names)
    return GraphFrame.from_arrays(parents, {"name": names, "type": types, "module": modules,
                                            "file": ["a.c"] * n, "line": lines},
                                  {"node": list(range(n)), "time": time}, exclusive=["time"])


def test_frame_strings_follow_the_documented_rule() -> None:
    nodes = pl.DataFrame({"name": ["f", "f", "L", "L"], "type": ["function", "function",
                                                                  "loop", "loop"],
                          "module": ["a.so", "b.so", "x", "x"], "file": ["a.c"] * 4,
                          "line": [1, 2, 10, 20]})
    s = frame_strings(nodes).to_list()
    assert s[0] == s[1]  # module and a function's line are not part of the frame
    assert s[2] != s[3]  # a loop's line is
    assert frame_name(pl.Series(s)).to_list() == ["f", "f", "L", "L"]


def test_squash_and_unify_agree_on_modules() -> None:
    from cctool.model.unify import unify
    from cctool.query.squash import squash

    # main -> x -> foo [a.so], main -> y -> foo [b.so]: dropping x and y makes the two foo
    # siblings, and they are the same frame (modules differ between builds), so they merge.
    gf = _gf([-1, 0, 0, 1, 2], ["main", "x", "y", "foo", "foo"], ["function"] * 5,
             ["m", "m", "m", "a.so", "b.so"], [1, 2, 3, 4, 5], [1.0, 0.0, 0.0, 2.0, 3.0])
    out = squash(gf, ~gf.nodes["name"].is_in(["x", "y"]).to_numpy())
    assert out.nodes["name"].to_list() == ["main", "foo"]
    assert out.node_values(["time"])["time"].to_list() == [1.0, 5.0]
    out.validate()
    a = _gf([-1, 0], ["main", "foo"], ["function"] * 2, ["m", "a.so"], [1, 4], [1.0, 2.0])
    b = _gf([-1, 0], ["main", "foo"], ["function"] * 2, ["m", "b.so"], [1, 9], [1.0, 3.0])
    u = unify(a, b)
    assert u.tree.num_nodes == 2  # foo matched across the modules, as squash merged it


def test_scaling_rows_tell_loops_apart_like_diff() -> None:
    from cctool.model.paths import path_ids

    a = _gf([-1, 0, 0], ["main", "L", "L"], ["function", "loop", "loop"], ["m"] * 3,
            [1, 10, 20], [1.0, 1.0, 1.0])
    ids, labels = path_ids([a, a])
    assert len(set(ids[0].tolist())) == 3  # two loops on different lines: two rows
    assert np.array_equal(ids[0], ids[1])
    assert sorted(labels.to_list()) == ["main", "main / L", "main / L"]
