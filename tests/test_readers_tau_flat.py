"""TAU flat profiles and depth-limited call paths: one root per file, holding the run.

Files: tests/data/tau (README.md gives their sources; totals.json the top-level timers'
inclusive sums read with grep/awk).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cctool.errors import CctoolWarning
from cctool.readers import read_declared as read
from cctool.readers.trees import tau as reader

DATA = Path(__file__).resolve().parent / "data" / "tau"
HEADER = (
    "# Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>TAU_CALLPATH"
    "</name><value>on</value></attribute><attribute><name>TAU_CALLPATH_DEPTH</name><value>2"
    "</value></attribute></metadata>\n"
)


def root_total(gf) -> float:
    return float(gf.node_values(["time (inc)"])["time (inc)"].gather(gf.roots).sum())


def test_flat_mpi_profile_hangs_every_timer_under_the_application() -> None:
    gf = read(DATA / "adios-xmain-8ranks")
    assert gf.nodes["name"].gather(gf.roots).to_list() == [".TAU application"]
    assert gf.children(0).size == 26 and gf.num_ranks == 8
    # rank 0: ".TAU application" 1 11367 33815669 62483749
    app = gf.metrics.filter((pl.col("node") == 0) & (pl.col("rank") == 0))
    assert app["time (inc)"].item() == 62483749 and app["time"].item() == 33815669
    assert root_total(gf) == 500091472
    gf.validate()


def test_flat_profile_without_application_timer_uses_main() -> None:
    gf = read(DATA / "wrap-param-2ranks")
    roots = gf.nodes["name"].gather(gf.roots).to_list()
    assert roots == ["int main(int, char **) C"]
    assert gf.children(int(gf.roots[0])).size == 7
    # "int main(...)" Incl: 1049725 (rank 0) + 1048975 (rank 1)
    assert root_total(gf) == 1049725 + 1048975
    gf.validate()


def test_flat_threads_each_keep_their_top_level_timer() -> None:
    gf = read(DATA / "openmp-2threads")
    assert gf.num_threads == 2
    # thread 0: "int main(int, char **)" Incl 2586970; thread 1: ".TAU application" 2581083
    assert root_total(gf) == 2586970 + 2581083
    gf.validate()


def test_cut_call_paths_join_their_one_context(tmp_path: Path) -> None:
    # Constructed lines in TAU's layout with TAU_CALLPATH_DEPTH=2: "b => c" and "c => d" are
    # deeper paths cut to their last two frames; b and c have one context each.
    lines = [
        '".TAU application" 1 1 10 100 0 GROUP="TAU_USER"',
        '"a" 1 1 20 90 0 GROUP="TAU_USER"',
        '"b" 1 1 30 70 0 GROUP="TAU_USER"',
        '"c" 1 1 25 40 0 GROUP="TAU_USER"',
        '"d" 1 0 15 15 0 GROUP="TAU_USER"',
        '".TAU application => a" 1 1 20 90 0 GROUP="TAU_CALLPATH"',
        '"a => b" 1 1 30 70 0 GROUP="TAU_CALLPATH"',
        '"b => c" 1 1 25 40 0 GROUP="TAU_CALLPATH"',
        '"c => d" 1 0 15 15 0 GROUP="TAU_CALLPATH"',
    ]
    (tmp_path / "profile.0.0.0").write_text(
        f"{len(lines)} templated_functions_MULTI_TIME\n" + HEADER + "\n".join(lines) + "\n"
    )
    gf = reader.read(tmp_path)
    assert gf.nodes["name"].to_list() == [".TAU application", "a", "b", "c", "d"]
    assert gf.nodes["depth"].to_list() == [0, 1, 2, 3, 4]
    assert root_total(gf) == 100
    gf.validate()


def test_cut_call_path_with_two_contexts_is_left_out_with_a_warning(tmp_path: Path) -> None:
    lines = [
        '".TAU application" 1 2 10 100 0 GROUP="TAU_USER"',
        '"a" 1 1 20 50 0 GROUP="TAU_USER"',
        '"b" 1 1 20 40 0 GROUP="TAU_USER"',
        '"c" 2 1 20 30 0 GROUP="TAU_USER"',
        '"d" 1 0 10 10 0 GROUP="TAU_USER"',
        '".TAU application => a" 1 1 20 50 0 GROUP="TAU_CALLPATH"',
        '".TAU application => b" 1 1 20 40 0 GROUP="TAU_CALLPATH"',
        '"a => c" 1 0 10 15 0 GROUP="TAU_CALLPATH"',
        '"b => c" 1 1 10 15 0 GROUP="TAU_CALLPATH"',
        '"c => d" 1 0 10 10 0 GROUP="TAU_CALLPATH"',
    ]
    (tmp_path / "profile.0.0.0").write_text(
        f"{len(lines)} templated_functions_MULTI_TIME\n" + HEADER + "\n".join(lines) + "\n"
    )
    with pytest.warns(CctoolWarning, match=r"1 call path cut at TAU_CALLPATH_DEPTH=2"):
        gf = reader.read(tmp_path)
    assert "d" not in gf.nodes["name"].to_list()
    assert gf.roots.tolist() == [0] and root_total(gf) == 100
    gf.validate()
