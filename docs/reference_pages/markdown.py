"""Text from the code made safe to place in Markdown: prose, code spans, table cells."""

from __future__ import annotations

import re

__all__ = ["code", "prose", "row"]

# Characters Python-Markdown reads as markup inside a line, escaped with a backslash; `|`
# splits a table's cells (the tables extension reads `\|` as a literal bar).
_MARKUP = re.compile(r"([\\`*_\[\]{}|])")
# A docstring's reStructuredText role before a literal (:class:`Kind`): the literal stays.
_ROLE = re.compile(r":[a-z]+:`")


def prose(text: str) -> str:
    """``text`` shown as written, on one line (a table cell or a list item is one): markup
    characters escaped, HTML's special characters as entities; text between backticks, as
    the toolkit's messages mark commands and settings, becomes a code span.

    >>> prose("globs such as VAR0* | <b>; `platform-audit checks` lists them")
    'globs such as VAR0\\\\* \\\\| &lt;b&gt;; `platform-audit checks` lists them'
    """
    flat = _ROLE.sub("`", " ".join(text.split())).replace("``", "`")
    parts = flat.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: no code spans, all escaped
        parts = [flat]
    return "".join(code(part) if i % 2 else _escaped(part) for i, part in enumerate(parts))


def _escaped(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKUP.sub(r"\\\1", text)


def code(text: str) -> str:
    """An inline code span holding ``text`` exactly (backticks inside get a longer fence).

    >>> code("a`b")
    '`` a`b ``'
    """
    flat = " ".join(str(text).split())
    if "`" not in flat:
        return f"`{flat}`"
    return f"`` {flat} ``"


def row(*cells: str) -> str:
    """One line of a Markdown table; the cells are already escaped."""
    return "| " + " | ".join(cell or " " for cell in cells) + " |"
