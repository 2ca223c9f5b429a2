"""Writes the output shown under each command of the tutorials: what cctool prints for it.

In docs/tutorials/*.md, a ```sh block of one cctool command followed by a ```text block shows
that command's output. ``python docs/gen_outputs.py`` runs each command from the repository's
root at 100 columns and writes its stdout into the text block; ``tests/test_docs_site.py``
fails while a shown output differs from what cctool prints now.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
PAIR = re.compile(r"^```sh\n(cctool [^\n]*)\n```\n\n```text\n(.*?)^```$", flags=re.S | re.M)


def run(command: str) -> str:
    """The command's stdout as a 100-column terminal-less run prints it."""
    from click.testing import CliRunner

    from cctool.cli import cli

    here = Path.cwd()
    os.chdir(ROOT)
    try:
        res = CliRunner(env={"COLUMNS": "100", "NO_COLOR": "1"}).invoke(
            cli, shlex.split(command)[1:], catch_exceptions=False)
    finally:
        os.chdir(here)
    if res.exit_code != 0:
        raise RuntimeError(f"{command}: exit {res.exit_code}\n{res.stderr}")
    return res.stdout


def shown(page: Path) -> list[tuple[str, str]]:
    """(command, output shown) of each pair on the page."""
    return [(m.group(1), m.group(2)) for m in PAIR.finditer(page.read_text())]


def main() -> int:
    for page in sorted(TUTORIALS.glob("*.md")):
        text = page.read_text()
        new = PAIR.sub(lambda m: f"```sh\n{m.group(1)}\n```\n\n```text\n{run(m.group(1))}```",
                       text)
        page.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
