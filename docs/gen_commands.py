"""Writes docs/reference/commands/: one page per command, its help exactly as cctool prints it.

Run ``python docs/gen_commands.py`` after changing a command; ``tests/test_docs_site.py``
fails while a page differs from what this writes. The help is laid out at a fixed width
(100 columns), so the pages do not depend on the terminal that writes them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

OUT = Path(__file__).resolve().parent / "reference" / "commands"
WIDTH = 100


def _context(cmd: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context the command runs in (its context_settings applied: -h beside --help),
    laid out at WIDTH columns, its arguments not parsed."""
    return cmd.make_context(name, [], parent=parent, resilient_parsing=True,
                            terminal_width=WIDTH, max_content_width=WIDTH)


def _help(cmd: click.Command, name: str, parent: click.Context | None) -> str:
    return cmd.get_help(_context(cmd, name, parent))


def _subcommands(group: click.Command, ctx: click.Context) -> list[tuple[str, click.Command]]:
    if not isinstance(group, click.Group):
        return []
    out = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            out.append((name, sub))
    return out


def pages() -> dict[str, str]:
    """File name -> text of every page (the index included)."""
    from cctool.cli import cli

    root = _context(cli, "cctool", None)
    out: dict[str, str] = {}
    rows = []
    for name, cmd in _subcommands(cli, root):
        ctx = _context(cmd, name, root)
        parts = [f"# cctool {name}\n", f"```text\n{_help(cmd, name, root)}\n```\n"]
        for sub_name, sub in _subcommands(cmd, ctx):
            parts += [f"## cctool {name} {sub_name}\n",
                      f"```text\n{_help(sub, sub_name, ctx)}\n```\n"]
        out[f"{name}.md"] = "\n".join(parts)
        short = cmd.get_short_help_str(limit=120).replace("|", "\\|")
        rows.append(f"| [`cctool {name}`]({name}.md) | {short} |")
    index = ["# Commands\n",
             "Every command's help, as `cctool COMMAND --help` prints it. Options shared by all "
             "commands come before the command's name:\n",
             f"```text\n{_help(cli, 'cctool', None)}\n```\n",
             "| command | what it does |", "| --- | --- |", *rows, ""]
    out["index.md"] = "\n".join(index)
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    want = pages()
    for old in OUT.glob("*.md"):
        if old.name not in want:
            old.unlink()
    for name, text in want.items():
        (OUT / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
