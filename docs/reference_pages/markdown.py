"""Text from the code made safe to place in Markdown: prose, code spans, table cells."""

from __future__ import annotations

import re

__all__ = ["code", "github_blocks", "prose", "row"]

# Characters Python-Markdown reads as markup inside a line, escaped with a backslash; `|`
# splits a table's cells (the tables extension reads `\|` as a literal bar).
_MARKUP = re.compile(r"([\\`*_\[\]{}|])")
# A line that starts a list or a table; GitHub lets one follow a paragraph's last line.
_BLOCK_START = re.compile(r"^(?:[-*+] |\d+[.)] |\|)")
_FENCE = re.compile(r"^\s*(```|~~~)")
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


def github_blocks(markdown: str) -> str:
    """``markdown`` written for GitHub, made to read the same in Python-Markdown: a blank line
    before a list or a table that follows a paragraph's last line (GitHub starts one there;
    Python-Markdown would run it into the paragraph). Fenced code is left as it is.

    >>> github_blocks("Rules:\\n- one\\n- two\\n")
    'Rules:\\n\\n- one\\n- two\\n'
    """
    out: list[str] = []
    fenced = in_block = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _BLOCK_START.match(line):
            if out and out[-1].strip() and not in_block and not out[-1].startswith(" "):
                out.append("")
            in_block = True
        elif not line.strip():
            in_block = False
        out.append(line)
    return "\n".join(out)
