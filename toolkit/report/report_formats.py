"""The report formats, and the file names that choose one.

A leaf module: the settings check a report path, and the command line picks a format from
``--out``, without importing the report code::

    format_of(Path("weekly.md"))    # 'markdown'
    format_of(Path("weekly.pdf"))   # None: print the HTML report to PDF from a browser
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["REPORT_FORMATS", "REPORT_SUFFIXES", "format_of", "suffixes_text"]

REPORT_FORMATS = ("html", "markdown", "json", "csv")
REPORT_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".json": "json",
                   ".csv": "csv"}  # fmt: skip


def format_of(path: Path) -> str | None:
    """The format ``path``'s suffix names (any case), or None for any other name."""
    return REPORT_SUFFIXES.get(path.suffix.lower())


def suffixes_text(suffixes: Iterable[str] = REPORT_SUFFIXES) -> str:
    """'.html, .htm, .md, .json or .csv' (or ``suffixes`` so listed), for messages."""
    names = list(suffixes)
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
