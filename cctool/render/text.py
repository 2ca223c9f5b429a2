"""Text helpers every renderer shares: escaping names for terminals and shortening them.

Names come from profiled programs and are not to be trusted: control characters would move
the cursor or forge lines, so every text renderer passes names through :func:`printable`.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

from cctool.render.values import format_percent

# C0/C1 controls, line and paragraph separators, and bidirectional overrides: in a name they
# would move the cursor, forge a tree line, color the terminal or reverse the text around them.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PATH = re.compile(r"^\S*/\S*$")


def printable(text: str) -> str:
    """``text`` with control characters spelled as escapes (``\\n``, ``\\x1b``, ``\\u202e``)."""
    return _UNPRINTABLE.sub(_escape, text)


# The same class for Polars (Rust's regex syntax): which names need :func:`printable` at all.
_UNPRINTABLE_RUST = r"[\x00-\x1F\x7F-\x9F\u2028\u2029\u202A-\u202E\u2066-\u2069]"


def printable_series(names: pl.Series) -> pl.Series:
    """``names`` (a String Series) with control characters spelled as escapes
    (:func:`printable`; null as ""), escaping only the names that hold one."""
    names = names.fill_null("")
    bad = names.str.contains(_UNPRINTABLE_RUST).arg_true()
    if bad.len():
        names = names.scatter(bad, [printable(n) for n in names.gather(bad).to_list()])
    return names


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


# What the text faces print beyond ASCII (units, marks, elisions), as ASCII for a stdout that
# cannot encode them (PYTHONIOENCODING=ascii, a C locale): "12.5 us", "8 x 2", "a...b".
_TO_ASCII = {
    "×": "x",
    "÷": "/",
    "−": "-",
    "µ": "u",
    "…": "...",
    "–": "-",
    "—": "-",
    "·": "-",
    "≤": "<=",
    "≥": ">=",
    "±": "+/-",
    "²": "^2",
    "Δ": "d",
    "→": "->",
    "←": "<-",
    "»": ">>",
    "«": "<<",
    "◆": "*",
    "◀": "<",
    "▶": ">",
    "▕": "|",
    "▏": "|",
}


def encodable(text: str, encoding: str | None) -> str:
    """``text`` as ``encoding`` can write it: unchanged when it can, else with cctool's own
    symbols spelled in ASCII and any other character (a name's) as ``?``."""
    try:
        if codecs.lookup(encoding or "utf-8").name.startswith("utf"):
            return text  # writes everything: no pass over a large output to find out
        text.encode(encoding or "utf-8")
        return text
    except UnicodeEncodeError:
        ascii_text = text.translate(_ASCII_TABLE)
        return ascii_text.encode(encoding or "ascii", "replace").decode(encoding or "ascii")
    except LookupError:
        return text


def elide(name: str, width: int, mark: str = "…") -> str:
    """Shorten ``name`` to at most ``width`` characters, as the HTML view does: a path loses
    its folders, a C++ name its template and parameter lists and then its outer qualifiers
    (``…vector<…>::push_back(…)``); what is still too long loses its middle."""
    if len(name) <= width:
        return name
    s = name
    if _PATH.match(s):
        s = s[s.rfind("/") + 1 :] or s
    if len(s) > width:
        s = strip_nested(strip_nested(s, "<", ">", f"<{mark}>"), "(", ")", f"({mark})")
    if len(s) <= width:
        return s
    parts = s.split("::")
    for k in range(1, len(parts)):
        s = mark + "::".join(parts[k:])
        if len(s) <= width:
            return s
    if width <= len(mark):
        return mark[:width]
    head = -(-(width - len(mark)) * 3 // 5)  # ceil(0.6 * room): the head says more
    return s[:head] + mark + s[len(s) - (width - len(mark) - head) :]


_NAME_END = re.compile(r"[A-Za-z0-9_:>\]]")
_BRACKETS = {
    pair: re.compile(f"[{re.escape(pair[0])}{re.escape(pair[1])}]")
    for pair in (("<", ">"), ("(", ")"))
}


def strip_nested(s: str, open_: str, close: str, repl: str) -> str:
    """``s`` with each outermost ``open_ … close`` group that follows a name (``vector<…>``,
    ``f(…)``, ``f<…>(…)``, not ``<unknown procedure>``) replaced by ``repl``; unbalanced text
    is returned as it is."""
    if open_ not in s:
        return s
    brackets = _BRACKETS.get((open_, close)) or re.compile(
        f"[{re.escape(open_)}{re.escape(close)}]"
    )
    out: list[str] = []
    depth = 0
    start = 0  # where the text kept since the last group starts
    last = ""  # the last character kept before ``start``
    for m in brackets.finditer(s):  # steps over the brackets only, not every character
        i = m.start()
        if depth:
            depth += 1 if s[i] == open_ else -1
            if not depth:
                start = i + 1
        # as the page's CCT.stripNested: after a word character, "::", a closing ">" (a
        # function template's parameters) or "]" (operator[])
        elif s[i] == open_ and _NAME_END.match(s[i - 1] if i > start else last):
            out += (s[start:i], repl)
            last = repl[-1:]
            depth = 1
    if depth:
        return s
    out.append(s[start:])
    return "".join(out)


def elide_head(text: str, width: int, mark: str = "…") -> str:
    """Shorten a path to ``width`` characters by dropping its head, keeping the leaf."""
    if len(text) <= width or width < 5:
        return text
    tail = text[-(width - len(mark)) :]
    cut = tail.find("/")
    # Start the tail at a frame boundary when that keeps most of it.
    if 0 <= cut < len(tail) // 2:
        tail = tail[cut:]
    return mark + tail


BLOCKS = "▁▂▃▄▅▆▇█"
ASCII_LEVELS = "_.-:=+*#"
_ASCII_TABLE = str.maketrans({**_TO_ASCII, **dict(zip(BLOCKS, ASCII_LEVELS, strict=True))})


def sparkline(
    values: Sequence[float | None], *, from_zero: bool = False, ascii_only: bool = False
) -> str:
    """One character per value. ``from_zero`` (histogram counts): heights from 0 to the
    largest value, a value ≤ 0 is a blank. Otherwise (a trend): scaled between the smallest
    and largest value, a flat row sits in the middle. Missing (None/NaN) values are blanks."""
    levels = ASCII_LEVELS if ascii_only else BLOCKS
    top = len(levels) - 1
    present = [v if v is not None and math.isfinite(v) else None for v in values]
    finite = [v for v in present if v is not None]
    lo, hi = (
        (0.0, max(finite, default=0.0))
        if from_zero
        else (min(finite, default=0.0), max(finite, default=0.0))
    )
    if not finite or (from_zero and hi <= 0):
        return " " * len(values)
    out = []
    for v in present:
        if v is None or (from_zero and v <= 0):
            out.append(" ")
        elif from_zero:
            out.append(levels[min(top, math.ceil(v / hi * len(levels)) - 1)])
        elif hi == lo:
            out.append(levels[top // 2])
        else:
            out.append(levels[round((v - lo) / (hi - lo) * top)])
    return "".join(out)


def percent(value: float | None, *, signed: bool = False, missing: str = "-") -> str:
    """A percentage with one decimal, ``+`` on gains when ``signed``; NaN/None as
    ``missing``, infinities as ``+inf%``/``-inf%``."""
    if value is None or math.isnan(value):
        return missing
    if math.isinf(value):
        return "+inf%" if value > 0 else "-inf%"
    return ("+" if signed and value > 0 else "") + format_percent(value)


def markdown_cell(text: str, *, code: bool = False) -> str:
    """``text`` safe in a Markdown table cell; ``code``: for a code span, where backslash
    escapes do not work and a backtick would end the span."""
    text = printable(text)
    if code:
        return text.replace("|", "\\|").replace("`", "'")
    return text.replace("\\", "\\\\").replace("|", "\\|")
