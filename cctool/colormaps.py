"""The colormaps of every view, in one place (imports nothing, so the CLI can list them).

Terminal views draw six colors per map, for values from high to low (fraction of the
largest shown value). The HTML page draws its maps in the browser (``model.js`` holds their
stops) and offers, besides the terminal's, single-hue maps and ``auto`` (single-hue for
values of one sign, diverging otherwise).
"""

from __future__ import annotations

TERMINAL: dict[str, tuple[str, ...]] = {
    "RdYlGn": ("#d73027", "#fc8d59", "#fee08b", "#d9ef8b", "#91cf60", "#1a9850"),
    "viridis": ("#fde725", "#7ad151", "#22a884", "#2a788e", "#414487", "#440154"),
    "magma": ("#fcfdbf", "#fe9f6d", "#de4968", "#8c2981", "#3b0f70", "#000004"),
    "grey": ("#ffffff", "#d9d9d9", "#bdbdbd", "#969696", "#737373", "#525252"),
}
PAGE: tuple[str, ...] = ("auto", "reds", "blues", "viridis", "magma", "grey", "RdYlGn", "RdBu")
