"""Meta-tests that keep the CLI honest: help, start-up imports, completions, the docs."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import COMMANDS, cli
from cctool.cli.completion import SHELLS, script

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    res = CliRunner().invoke(cli, [name, "--help"])
    assert res.exit_code == 0
    assert "Example:" in res.stdout
    cmd = cli.get_command(None, name)  # type: ignore[arg-type]
    assert cmd is not None and cmd.help and len(cmd.help.splitlines()[0]) > 10


def test_root_help_documents_exit_codes() -> None:
    res = CliRunner().invoke(cli, ["--help"])
    assert res.exit_code == 0
    for code in ("0  success", "1  a regression gate", "2  usage error, bad input",
                 "130/143  interrupted"):
        assert code in res.stdout


def test_cli_import_leaves_heavy_modules_out() -> None:
    code = (
        "import sys, cctool.cli\n"
        "from cctool.cli import cli, COMMANDS\n"
        "for name in COMMANDS: cli.get_command(None, name)\n"
        "print(sorted(m for m in ('numba', 'polars', 'numpy', 'rich', 'lxml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_starts_without_numba() -> None:
    code = (
        "import sys\nfrom cctool.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(str('numba' in sys.modules or 'polars' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr == "False"


@pytest.mark.parametrize("shell", SHELLS)
def test_completions_match_the_cli(shell: str) -> None:
    checked_in = (ROOT / "completions" / f"cctool.{shell}").read_text()
    assert checked_in == script(shell), (
        f"completions/cctool.{shell} is stale: "
        f"cctool completion {shell} > completions/cctool.{shell}"
    )


def test_completions_list_every_command() -> None:
    for shell in SHELLS:
        text = script(shell)
        for name in COMMANDS:
            assert name in text


def test_the_guide_table_mentions_every_command() -> None:
    table = (ROOT / "docs" / "guide" / "reading.md").read_text()
    for name in COMMANDS:
        assert f"| `cctool {name}" in table, name


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest" in readme and "python -m pytest" in ci
    assert "venv" in ci


def test_python_dash_m_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "cctool", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("cctool, version")


def test_reader_registry_is_consistent() -> None:
    from cctool.readers import READERS, reader_modules

    names = [name for name, _ in READERS]
    assert len(names) == len(set(names))
    for (name, _), mod in zip(READERS, reader_modules(), strict=True):
        assert mod.NAME == name
        assert callable(mod.sniff) and callable(mod.read) and mod.DESCRIPTION


# Size is a review signal, not a wall: past 400 lines a module is worth a look (one concept
# kept whole may be longer; two concepts in one file should split by concept), past 600 the
# file has to split. A hard cap at 400 had cut single concepts over files that import each
# other.
WARN_LINES, MAX_LINES = 400, 600


def _module_lines() -> dict[str, int]:
    return {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
            for p in (ROOT / "cctool").rglob("*.py")}


@pytest.mark.filterwarnings("default::UserWarning")
def test_module_size() -> None:
    lines = _module_lines()
    too_long = {m: n for m, n in lines.items() if n > MAX_LINES}
    assert not too_long, f"split these modules by concept: {too_long}"
    for module, n in sorted(lines.items()):
        if n > WARN_LINES:
            warnings.warn(f"{module} has {n} lines (over {WARN_LINES}): one concept?",
                          UserWarning, stacklevel=1)


def test_man_page_matches_the_cli() -> None:
    from cctool.cli.manpage import page

    checked_in = (ROOT / "man" / "cctool.1").read_text()
    assert checked_in == page(cli), (
        "man/cctool.1 is stale: python -m cctool.cli.manpage > man/cctool.1"
    )
    for name in COMMANDS:
        assert f".SS {name.replace('-', chr(92) + '-')}" in checked_in


def test_man_page_generator_leaves_heavy_modules_out() -> None:
    code = (
        "import sys, io, contextlib\nfrom cctool.cli import manpage\n"
        "with contextlib.redirect_stdout(io.StringIO()): manpage.main()\n"
        "print(sorted(m for m in ('numba', 'polars', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
