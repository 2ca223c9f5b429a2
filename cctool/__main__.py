"""``python -m cctool`` and the ``cctool`` command (``pyproject.toml``'s script).

The command line is imported inside the guard: a Ctrl-C while it is still loading exits
130 with one line, as it does once a command runs (:func:`cctool.cli.main`), instead of a
``KeyboardInterrupt`` traceback of whichever module was being imported.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from cctool.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)  # cctool.cli.EXIT_INTERRUPTED, which could not be imported
    run()


if __name__ == "__main__":
    main()
