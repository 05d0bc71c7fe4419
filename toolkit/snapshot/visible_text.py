"""Platform text made safe to show: control characters written as escapes.

Names and messages come from the platform; on a terminal an ESC starts a sequence that
recolours or clears the screen, sets its title or a link, and bidirectional overrides
reorder what is shown. Every command renders such values through :func:`visible`; JSON
escapes control characters by itself. No heavy imports: ``store ls`` and ``sql`` use it.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

# C0 and C1 controls and DEL, and the bidirectional overrides that reorder what is shown
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: object, keep: str = "\n") -> str:
    """``text`` with each control character but those in ``keep`` written as an escape
    (``\\x1b``, ``\\u202e``), for a terminal, Markdown or a spreadsheet::

        visible("x\x1b[31mred")   # 'x\\x1b[31mred': printed, no longer turns the screen red
    """
    return _CONTROL.sub(lambda m: _escape(m.group(), keep), str(text))


def _escape(char: str, keep: str) -> str:
    if char in keep:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
