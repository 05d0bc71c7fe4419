"""What the example configuration file says of each setting, read from its comments.

``toolkit/config/platform-audit.example.toml`` (the file ``platform-audit init`` writes) puts
a comment block above each setting, the setting itself commented out when it is optional. A
setting written on the line after another, with no comment of its own, shares that one's
block (``timeout_s`` and ``deadline_s``). Comment lines indented further (``#   check = ...``)
are an example inside the block, shown as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

__all__ = ["ExampleFile", "Explained", "read_example"]

_SECTION = re.compile(r"^(?:# ?)?\[(?P<name>[A-Za-z0-9_.\-]+)\]\s*$")
_KEY = re.compile(r"^(?:# ?)?(?P<key>[a-z_]+) = (?P<value>.+?)\s*$")
# An example inside a block: indented further, or a quoted name set ("replicas.list" = ...).
_INDENTED = re.compile(r'^#(?:\s{2,}\S| ?"[^"]+" = )')


@dataclass(frozen=True)
class Explained:
    """A setting's comment block: its sentences, and the example lines inside it."""

    prose: str
    example: tuple[str, ...] = ()


@dataclass
class ExampleFile:
    """The file's opening comment, and each section's settings with their blocks; a section
    whose comments precede no setting of its own (``[endpoints]``) keeps them as its note."""

    preamble: str = ""
    settings: dict[str, dict[str, Explained]] = field(default_factory=dict)
    notes: dict[str, Explained] = field(default_factory=dict)
    shared: dict[tuple[str, str], str] = field(default_factory=dict)
    """(section, key) of a setting sharing the block of the first one written with it."""


def read_example() -> ExampleFile:
    """The example file shipped in ``toolkit.config``, read."""
    text = resources.files("toolkit.config").joinpath("platform-audit.example.toml")
    return parse_example(text.read_text("utf-8"))


def parse_example(text: str) -> ExampleFile:
    """Read each setting's comment block out of the example file's ``text``."""
    found = ExampleFile()
    section: str | None = None
    pending: list[str] = []
    shared: tuple[str, Explained] | None = None  # the first setting of the block above
    for line in text.splitlines():
        stripped = line.strip()
        section_line = _SECTION.match(stripped)
        key_line = _KEY.match(stripped)
        if section_line:
            _end_section(found, section, pending)
            section, pending, shared = section_line["name"].split(".")[0], [], None
        elif key_line and section is not None:
            key = key_line["key"]
            if pending:
                shared = (key, _explained(pending))
            elif shared is not None:
                found.shared.setdefault((section, key), shared[0])
            if shared is not None:
                found.settings.setdefault(section, {}).setdefault(key, shared[1])
            pending = []
        elif stripped.startswith("#"):
            pending.append(stripped)
            shared = None
        else:  # a blank line or anything else ends the sharing
            shared = None
    _end_section(found, section, pending)
    return found


def _end_section(found: ExampleFile, section: str | None, pending: list[str]) -> None:
    if section is None:
        found.preamble = _explained(pending).prose
    elif pending and section not in found.settings and section not in found.notes:
        found.notes[section] = _explained(pending)


def _explained(lines: list[str]) -> Explained:
    prose = [line.lstrip("#").strip() for line in lines if not _INDENTED.match(line)]
    example = [line[1:].removeprefix(" ") for line in lines if _INDENTED.match(line)]
    return Explained(" ".join(p for p in prose if p), tuple(example))
