"""``--to html`` and ``-o FILE.html`` write the interactive page in every command that has
one, the same page as ``--html FILE``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("pages")
    out = []
    for name in ("cprofile-py311", "cprofile-py312"):
        path = folder / f"{name}.cct"
        res = CliRunner().invoke(cli, ["read", str(DATA / "cprofile" / f"{name}.pstats"),
                                       "-o", str(path)])
        assert res.exit_code == 0, res.output
        out.append(str(path))
    return out[0], out[1]


def _page(path: Path) -> str:
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'id="cctool-data"' in text
    return text


@pytest.mark.parametrize("command", ["tree", "diff", "div"])
def test_suffix_and_to_write_the_page(profiles: tuple[str, str], tmp_path: Path,
                                      command: str) -> None:
    args = [command, *(profiles if command != "tree" else profiles[:1])]
    by_suffix = tmp_path / "page.html"
    res = CliRunner().invoke(cli, [*args, "-o", str(by_suffix)])
    assert res.exit_code == 0, res.output
    by_flag = tmp_path / "flag.html"
    res = CliRunner().invoke(cli, [*args, "--html", str(by_flag)])
    assert res.exit_code == 0, res.output
    by_to = tmp_path / "page.out"
    res = CliRunner().invoke(cli, [*args, "--to", "html", "-o", str(by_to)])
    assert res.exit_code == 0, res.output
    assert _page(by_suffix) == _page(by_flag) == _page(by_to)


def test_to_html_and_html_file_refused(profiles: tuple[str, str], tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["tree", profiles[0], "--to", "html",
                                   "--html", str(tmp_path / "x.html")])
    assert res.exit_code == 2
    assert "--to html and --html FILE do not go together" in res.output


def test_page_refuses_text_options_named_as_the_page(profiles: tuple[str, str],
                                                     tmp_path: Path) -> None:
    out = tmp_path / "x.html"
    res = CliRunner().invoke(cli, ["tree", profiles[0], "-o", str(out), "--precision", "3"])
    assert res.exit_code == 2
    assert "the page (--to html) and --precision do not go together" in res.output
    assert not out.exists()
