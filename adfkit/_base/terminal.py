"""Agent text made inert for a terminal: control characters shown, never obeyed.

Names, models, tool names and messages come from agent files that anyone may have written. A
terminal obeys escape sequences (ESC, CSI, OSC: clear the screen, retitle the window, write
hyperlinks), and bidirectional-override characters reorder what is shown. Human CLI output goes
through :func:`printable`.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embedding/override/isolate
# characters (U+202A-U+202E, U+2066-U+2069).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``, ``\\u202e``).

    Examples
    --------
    >>> printable("agent\\x1b]0;pwned\\x07 ok")
    'agent\\\\x1b]0;pwned\\\\x07 ok'
    >>> printable("two\\nlines\\tand a tab")
    'two\\nlines\\tand a tab'
    """
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
