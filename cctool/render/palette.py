"""The colours of call paths in trace views: one categorical palette, given out by weight.

Colouring each function by a hash of its name makes neighbours alike (``main``,
``MPI_Recv`` and ``MPI_Init`` can come out as three close greens). Trace views instead rank
the call paths they show (cut at the view's depth) by their time in the shown window over
the shown locations, heaviest first (ties: the smaller node id), and give the ``i``-th path
``PALETTE[i]``: Kenneth Kelly's colours of maximum contrast (1965), in an order that keeps
each colour distinct in hue from the ones just before it, without white, black and grey
(the idle and background colours). Paths past the palette get no palette colour (the text
leaves them uncoloured; the page falls back to a colour per function name).

Each colour is the xterm 256-colour entry nearest to Kelly's, and the page uses that entry's
RGB, so a path has exactly the same colour in a 256-colour terminal and in the page.
"""

from __future__ import annotations

__all__ = ["PALETTE", "Colour", "rgb_of", "style_of", "xterm256"]

# Kelly's colours of maximum contrast (white, black and grey left out), ordered so that
# the first few differ in hue as well as lightness.
_KELLY = (0xF3C300, 0x875692, 0xA1CAF1, 0xBE0032, 0x008856, 0xF38400, 0x0067A5, 0xC2B280,
          0xE68FAC, 0x604E97, 0x8DB600, 0xF99379, 0xB3446C, 0xDCD300, 0x882D17, 0xF6A600,
          0x654522, 0xE25822, 0x2B3D26)
_CUBE = (0, 95, 135, 175, 215, 255)  # the levels of xterm's 6x6x6 colour cube


def _xterm_rgb(index: int) -> tuple[int, int, int]:
    """The RGB of an xterm colour from 16 to 255 (the cube, then 24 greys)."""
    if index >= 232:
        v = 8 + 10 * (index - 232)
        return v, v, v
    i = index - 16
    return _CUBE[i // 36], _CUBE[i // 6 % 6], _CUBE[i % 6]


def xterm256(rgb: tuple[int, int, int]) -> int:
    """The entry of xterm's colour cube (16..231) nearest to ``rgb``, channel by channel."""
    def level(v: int) -> int:
        return min(range(6), key=lambda k: abs(_CUBE[k] - v))

    return 16 + 36 * level(rgb[0]) + 6 * level(rgb[1]) + level(rgb[2])


Colour = tuple[int, tuple[int, int, int]]  # (xterm index, its RGB)

# Kelly's colours in the cube; two that fall on one entry keep the first's place.
PALETTE: tuple[Colour, ...] = tuple(
    (i, _xterm_rgb(i))
    for i in dict.fromkeys(xterm256(((c >> 16) & 255, (c >> 8) & 255, c & 255))
                           for c in _KELLY))


def style_of(rank: int) -> str:
    """The Rich style of the path ranked ``rank`` (0: the heaviest); "" past the palette."""
    return f"color({PALETTE[rank][0]})" if 0 <= rank < len(PALETTE) else ""


def rgb_of(rank: int) -> tuple[int, int, int] | None:
    """The RGB of the path ranked ``rank`` in the page; None past the palette."""
    return PALETTE[rank][1] if 0 <= rank < len(PALETTE) else None
