"""Every Python example of the README and the site runs: each ```python block, line by line
as a notebook cell would, in one namespace per block, with the placeholder paths
(``"db/"``, ``"trials/"``, ... see ``tests/test_examples.py``) mapped to real profiles.

Blocks that need what a test cannot have are skipped by name, with the reason: a Slurm
cluster (``SLURMCluster``) or a notebook front end to draw a widget in (``cctool.widget``;
the widget's model is tested in ``tests/test_widget.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_examples import ALLGATHER, PLACES, ROOT, _place, made  # noqa: F401

NEEDS = {"SLURMCluster": "a Slurm cluster", "cctool.widget": "a notebook front end"}


def python_blocks() -> list[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [(f"{p.relative_to(ROOT)}#{i}", b) for p in pages
            for i, b in enumerate(re.findall(r"^```python\n(.*?)^```", p.read_text(),
                                             flags=re.S | re.M))]


BLOCKS = python_blocks()


def _mapped(code: str, made: Path) -> str:  # noqa: F811
    """The block with each quoted placeholder path replaced by the real one."""
    def real(m: re.Match[str]) -> str:
        token = m.group(2)
        places = _place(token, made) if token in PLACES or token.startswith(
            ("tests/data/", "../shared/data/")) else [token]
        return m.group(1) + (places[0] if len(places) == 1 else token) + m.group(1)
    return re.sub(r"(['\"])([^'\"\n]+)\1", real, code)


@pytest.mark.parametrize("where, code", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_python_example_runs(where: str, code: str, made: Path) -> None:  # noqa: F811
    for marker, what in NEEDS.items():
        if marker in code:
            pytest.skip(f"{where} needs {what}")
    import cctool
    from cctool.api import read

    namespace: dict[str, object] = {"cctool": cctool}
    if "gf1" in code or "gf2" in code:
        namespace["gf1"] = read(_place("db/", made)[0])
        namespace["gf2"] = read(_place("new/", made)[0])
    if re.search(r"\bgf\b", code) and "gf =" not in code:
        namespace["gf"] = read(_place("db/", made)[0])
    for n, line in enumerate(_mapped(code, made).splitlines(), 1):
        statement = line.split("  #")[0].rstrip()
        if not statement or statement.startswith("#"):
            continue
        try:
            exec(compile(statement, f"{where}:{n}", "exec"), namespace)  # noqa: S102
        except Exception as exc:  # noqa: BLE001 (the line and its error are the report)
            pytest.fail(f"{where} line {n}: {line.strip()}\n  {type(exc).__name__}: {exc}")


def test_every_block_is_collected() -> None:
    assert len(BLOCKS) >= 5 and any("reference/api.md" in w for w, _ in BLOCKS)
    assert ALLGATHER in PLACES["new/"][1]
