"""Text helpers every renderer shares: escaping names for terminals and shortening them.

Names come from profiled programs and are not to be trusted: control characters would move
the cursor or forge lines, so every text renderer passes names through :func:`printable`.
"""

from __future__ import annotations

import re

# C0/C1 controls, line and paragraph separators, and bidirectional overrides: in a name they
# would move the cursor, forge a tree line, color the terminal or reverse the text around them.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PATH = re.compile(r"^\S*/\S*$")


def printable(text: str) -> str:
    """``text`` with control characters spelled as escapes (``\\n``, ``\\x1b``, ``\\u202e``)."""
    return _UNPRINTABLE.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def elide(name: str, width: int, mark: str = "…") -> str:
    """Shorten ``name`` to at most ``width`` characters, as the HTML view does: a path loses
    its folders, a C++ name its template and parameter lists and then its outer qualifiers
    (``…vector<…>::push_back(…)``); what is still too long loses its middle."""
    if len(name) <= width:
        return name
    s = name
    if _PATH.match(s):
        s = s[s.rfind("/") + 1:] or s
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
    return s[:head] + mark + s[len(s) - (width - len(mark) - head):]


def strip_nested(s: str, open_: str, close: str, repl: str) -> str:
    """``s`` with each outermost ``open_ … close`` group that follows a name (``vector<…>``,
    ``f(…)``, not ``<unknown procedure>``) replaced by ``repl``; unbalanced text is returned
    as it is."""
    out: list[str] = []
    depth = 0
    for ch in s:
        if ch == open_ and (depth > 0 or (out and (out[-1][-1:].isalnum() or out[-1] == "_"))):
            if depth == 0:
                out.append(repl)
            depth += 1
        elif ch == close and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out) if depth == 0 else s
