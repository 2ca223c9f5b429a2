"""The vectorised scan of experiment.xml's call path section gives exactly what lxml and the
element walk give, on real databases and on damaged copies of one (where it must either agree
or hand over to lxml)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from cctool.errors import ReaderError
from cctool.readers import read, read_declared
from cctool.readers.hpctoolkit import _xml_tree as _hpcxml_tree
from cctool.readers.hpctoolkit import xml_section as hpctoolkit_scan
from tests.conftest import SHARED_DATA
from tests.reader_checks import variants

HERE = Path(__file__).parent / "data" / "hpctoolkit"
DATABASES = [SHARED_DATA / "hpctoolkit-cpi-database", SHARED_DATA / "hpctoolkit-allgather-database",
             HERE / "acc_f3-xml-values", HERE / "inline-mdb"]


def _walk(xml: Path) -> dict[str, Any]:
    root = _hpcxml_tree.parse_xml(xml)
    return _hpcxml_tree.scan_tree(root, _hpcxml_tree.tables(root, xml), xml)


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if key in ("name", "type", "file", "module"):
            assert list(a[key]) == list(b[key]), key
        else:
            assert np.array_equal(np.asarray(a[key]), np.asarray(b[key])), key


@pytest.mark.parametrize("db", DATABASES, ids=lambda p: p.name)
def test_scan_equals_walk(db: Path) -> None:
    if not db.exists():
        pytest.skip(f"{db} is absent")
    xml = db / "experiment.xml"
    root, tables, _ = hpctoolkit_scan.parse(xml)
    nodes, summary = hpctoolkit_scan.scan(xml.read_bytes(), tables)  # no fallback here
    _same(nodes, _walk(xml))
    assert summary.count(b"<M ") == len(_hpcxml_tree.first(root, "SecCallPathProfileData"))


@pytest.mark.parametrize("db", DATABASES[:2], ids=lambda p: p.name)
def test_read_identical_frames(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both paths through the whole reader: the same node and metric tables, bit for bit."""
    if not db.exists():
        pytest.skip(f"{db} is absent")
    fast = read_declared(db)

    def refuse(*_: object) -> None:
        raise hpctoolkit_scan.Unsupported("test")

    monkeypatch.setattr(hpctoolkit_scan, "scan", refuse)
    slow = read_declared(db)
    assert_frame_equal(fast.nodes, slow.nodes)
    assert_frame_equal(fast.metrics, slow.metrics)
    assert fast.metadata == slow.metadata
    fast.validate()


@pytest.mark.parametrize("edit", [
    (b'<C i="3"', b'<C  i="3"'),  # two spaces
    (b'<C i="3"', b'<C i="3" x="1"'),  # an attribute the scan does not know
    (b'<C i="3"', b'<!-- c --><C i="3"'),  # a comment
    (b'<C i="3"', b"<C i='3'"),  # single quotes
    (b'<S i="5"', b'<S i="05"'),  # a leading zero
    (b'<S i="5"', b'<S i="5" i="5"'),  # a repeated attribute (lxml refuses it)
    (b'<C i="3"', b'<C i="&#51;"'),  # a character reference
])
def test_outside_the_dialect_falls_back(data: Callable[[str], Path], tmp_path: Path,
                                        edit: tuple[bytes, bytes]) -> None:
    db = tmp_path / "db"
    _copy(data("hpctoolkit-allgather-database"), db)
    xml = db / "experiment.xml"
    data = xml.read_bytes()
    tables = hpctoolkit_scan.parse(xml)[1]
    assert edit[0] in data
    xml.write_bytes(data.replace(edit[0], edit[1], 1))
    with pytest.raises(hpctoolkit_scan.Unsupported):
        hpctoolkit_scan.scan(xml.read_bytes(), tables)
    try:
        expected: dict[str, Any] | None = _walk(xml)
    except ReaderError:
        expected = None
    if expected is None:
        with pytest.raises(ReaderError):
            hpctoolkit_scan.parse(xml)
    else:
        _same(hpctoolkit_scan.parse(xml)[2], expected)


def test_damaged_sections_agree_with_lxml(data: Callable[[str], Path], tmp_path: Path) -> None:
    """Flipped bytes in the call path section: the scan's answer is lxml's answer."""
    src = data("hpctoolkit-allgather-database") / "experiment.xml"
    data = src.read_bytes()
    lo, hi = hpctoolkit_scan.split(data)
    xml = tmp_path / "experiment.xml"
    for seed in range(6):
        for what, damaged in variants(data[lo:hi], seed=seed, flips=20):
            if what.startswith("truncated"):
                continue
            xml.write_bytes(data[:lo] + damaged + data[hi:])
            try:
                expected: Any = _walk(xml)
            except (ReaderError, ValueError, TypeError) as exc:  # the walk's own limits
                expected = type(exc)
            try:
                got: Any = hpctoolkit_scan.parse(xml)[2]
            except (ReaderError, ValueError, TypeError) as exc:
                got = type(exc)
            if isinstance(expected, dict) and isinstance(got, dict):
                _same(got, expected)
            else:
                assert got == expected, what


def _copy(src: Path, dst: Path) -> None:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())


@pytest.mark.parametrize(("edit", "message"), [
    (('<C i="3" s="500"', '<C s="500"'), "<C> on line 300 has no i="),
    (('<C i="3" s="500" l="0">', '<C i="3" s="500" l="zz">'), "<C> on line 300 has 'zz' as l="),
])
def test_a_scope_without_an_integer_id_is_a_one_line_error(
        data: Callable[[str], Path], tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    # Outside hpcprof's dialect the element-tree walk reads the file; it names the element.
    db = tmp_path / "cpi"
    shutil.copytree(data("hpctoolkit-cpi-database"), db)
    xml = db / "experiment.xml"
    xml.write_text(xml.read_text().replace(*edit, 1))
    with pytest.raises(ReaderError, match=re.escape(message)):
        read(db)
