"""Format detection across the repository's sample folders: each profile is detected as the
format of its folder, and no reader of the pprof, speedscope, chrome-trace or Austin formats
claims any other file there (program sources, READMEs, totals.json, other formats); the
../shared/data samples are checked in each reader's own tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cctool.readers import detect
from cctool.readers.stacks import _austin, pprof, speedscope
from cctool.readers.traces import chrome as chrome_trace

DATA = Path(__file__).parent / "data"
FORMAT = {"pprof": "pprof", "speedscope": "speedscope", "chrome-trace": "chrome-trace",
          "austin": "folded", "folded": "folded", "callgrind": "callgrind"}


def _profiles(folder: str) -> set[Path]:
    totals = DATA / folder / "totals.json"
    if totals.exists():
        return {DATA / folder / e["path"] for e in json.loads(totals.read_text())["files"]}
    return {p for p in (DATA / folder).iterdir() if p.name.startswith(("python.", "callgrind."))}


@pytest.mark.parametrize("folder", sorted(FORMAT))
def test_each_sample_is_detected_as_its_folders_format(folder: str) -> None:
    found = _profiles(folder)
    assert found
    for path in found:
        if path.is_dir():  # the parts of one run (callgrind's thread files, dumps)
            continue
        assert detect(path).NAME == FORMAT[folder], path


def test_new_readers_claim_nothing_else() -> None:
    claims = {"pprof": pprof.sniff, "speedscope": speedscope.sniff,
              "chrome-trace": chrome_trace.sniff,
              "austin": lambda p: _austin.looks_like_austin(p.read_bytes()[:4096])}
    for folder in FORMAT:
        for path in sorted(p for p in (DATA / folder).iterdir() if p.is_file()):
            for name, sniff in claims.items():
                if name != folder or path not in _profiles(folder):
                    assert not sniff(path), (name, path)
