"""``python -m cctool.kernels``: compile and cache every kernel now (for images and install
scripts), so that no command waits for Numba's compiler or runs the NumPy twins meanwhile."""

from __future__ import annotations

import sys

from cctool.kernels import _ahead


def main(argv: list[str]) -> int:
    if argv == ["--background"]:
        return _ahead.background_main()
    if argv:
        print("usage: python -m cctool.kernels", file=sys.stderr)
        return 2
    print(f"compiled; marker {_ahead.compile_all()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
