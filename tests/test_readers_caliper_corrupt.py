"""Damaged Caliper input gives a CctoolError, never another exception; sniffing accepts the
Caliper formats and nothing else in the shared samples."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cctool.errors import CctoolError, ReaderError
from cctool.readers import detect
from cctool.readers.caliper import cali as caliper
from cctool.readers.caliper import json as caliper_json
from cctool.readers.caliper import spotdb

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SAMPLES = [
    "caliper-example-cali/example-profile.cali",
    "caliper-lulesh-cali/lulesh-annotation-profile.cali",
    "caliper-ordered-cali-mpi/230525-151723_1930647_FSY8b8cKSEEi.cali",
    "caliper-sw4-cuda-activity-profile-cali/caliper_cuda_activity_profile_summary_v2.cali",
    "caliper-timeseries-cali/230711-163829_2055495_OV0UMVFsW6yp.cali",
    "rajaperf/quartz/gcc10.3.1_1048576/O3/1/Base_Seq-default.cali",
    "caliper-cpi-json/cpi-callpath-profile.json",
    "caliper-lulesh-json/lulesh-annotation-profile.json",
    "caliper-ordered-json/caliper-region-node-order.json",
]


def reader(rel: str):  # type: ignore[no-untyped-def]
    return caliper if rel.endswith(".cali") else caliper_json


def sample(data, rel: str) -> bytes:
    folder, name = rel.split("/", 1)
    return (data(folder) / name).read_bytes()


@pytest.mark.parametrize("rel", SAMPLES)
def test_truncated_files_raise(data, tmp_path: Path, rel: str) -> None:
    raw = sample(data, rel)
    rng = random.Random(rel)
    cuts = {1, 7, len(raw) // 3, len(raw) // 2, len(raw) - 1, *rng.sample(range(1, len(raw)), 8)}
    # cut right after a complete line too: a .cali must still end with its globals record
    cuts.add(raw.rfind(b"\n", 0, len(raw) // 2) + 1)
    for cut in sorted(cuts):
        if rel.endswith(".json") and not raw[cut:].strip():
            continue  # only trailing white space cut off: still the whole document
        path = tmp_path / Path(rel).name
        path.write_bytes(raw[:cut])
        with pytest.raises(CctoolError):
            reader(rel).read(path)


@pytest.mark.parametrize("rel", SAMPLES)
def test_flipped_bytes_never_escape(data, tmp_path: Path, rel: str) -> None:
    raw = sample(data, rel)
    rng = random.Random(rel)
    for _ in range(40):
        damaged = bytearray(raw)
        for _ in range(rng.choice((1, 2, 8))):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        path = tmp_path / Path(rel).name
        path.write_bytes(bytes(damaged))
        try:
            gf = reader(rel).read(path)
        except CctoolError:
            continue
        gf.validate()  # a flip inside a number or a name still reads: it must be sound


@pytest.mark.parametrize(("text", "problem"), [
    ("", "not a .cali file"),
    ("__rec=node,id=20,attr=8,data=function,parent=3\n", "does not end with its globals"),
    ("__rec=node,id=20,attr=8,data=f,parent=3\n__rec=globals", "incomplete"),
    ("__rec=node,id=20,attr=8,data=f,parent=99\n__rec=globals\n", "parent 99"),
    ("__rec=node,id=20,attr=77,data=f\n__rec=globals\n", "attribute 77"),
    ("__rec=node,id=x,attr=8,data=f\n__rec=globals\n", "non-numeric id"),
    ("__rec=ctx,ref=5000\n__rec=globals\n", "node 5000"),
    ("__rec=ctx,attr=8=9,data=1\n__rec=globals\n", "attr and data"),
    ("__rec=node,id=20,attr=8,data=a\n__rec=node,id=20,attr=8,data=b\n__rec=globals\n",
     "defined twice"),
    ("__rec=event,x=1\n__rec=globals\n", "unknown record kind"),
    ("__rec=node,id=20,attr=8,id=21\n__rec=globals\n", "duplicate key"),
    ("__rec=node,id=20,attr=8,data=m,parent=5\n__rec=ctx,attr=20,data=abc\n__rec=globals\n",
     "non-numeric value"),
    ("__rec=node,id=20,attr=8,data=m,parent=5\n__rec=ctx,attr=20,data=nan\n__rec=globals\n",
     "non-finite"),
    ("__rec=globals\n", "no region records"),
])
def test_cali_problems_are_named(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.cali"
    path.write_text(text)
    with pytest.raises(ReaderError, match=problem) as info:
        caliper.read(path)
    assert info.value.fmt == "caliper" and info.value.path == str(path)


def test_escapes_and_continued_lines(tmp_path: Path) -> None:
    # "," "=" and "\" are escaped with "\"; Caliper writes a newline as "\" + newline
    path = tmp_path / "esc.cali"
    path.write_text(
        "__rec=node,id=20,attr=10,data=268,parent=3\n"
        "__rec=node,id=21,attr=8,data=region,parent=20\n"
        "__rec=node,id=22,attr=10,data=1,parent=5\n"
        "__rec=node,id=23,attr=8,data=sum#time.duration,parent=22\n"
        "__rec=node,id=30,attr=21,data=a\\,b\\=c\\\\d\n"
        "__rec=node,id=31,attr=21,data=two\\\nlines,parent=30\n"
        "__rec=ctx,ref=31,attr=23,data=2.5\n"
        "__rec=globals\n"
    )
    gf = caliper.read(path)
    assert gf.nodes["name"].to_list() == ["a,b=c\\d", "two\nlines"]
    assert gf.node_values(["time (inc)"])["time (inc)"].to_list() == [2.5, 2.5]
    gf.validate()


def test_sniff_accepts_caliper_and_rejects_the_rest(data) -> None:
    if not SHARED.is_dir():
        pytest.skip("shared data absent")
    everything = [p for p in SHARED.rglob("*")]
    for mod, wanted in ((caliper, ".cali"), (caliper_json, ".json")):
        accepted = {p for p in everything if mod.sniff(p)}
        expected = {p for p in everything if p.is_file() and p.suffix == wanted
                    and (wanted == ".cali" or p.parent.name.startswith("caliper-"))}
        assert accepted == expected, mod.NAME
    dirs = {p for p in everything if spotdb.sniff(p)}
    assert all(any(q.suffix == ".cali" for q in d.rglob("*")) for d in dirs)
    assert SHARED / "spotdb" in dirs and SHARED / "rajaperf" in dirs
    assert not spotdb.sniff(SHARED)


def test_registry_picks_the_caliper_readers(data) -> None:
    assert detect(data("caliper-lulesh-cali") / "lulesh-annotation-profile.cali") is caliper
    assert detect(data("caliper-ordered-json") / "caliper-region-node-order.json") is caliper_json
    assert detect(data("mpi_scaling_cali")) is spotdb
