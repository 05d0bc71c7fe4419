"""The entries of a waivers file, checked one by one: required keys, selectors, globs that
can match, a date that exists, and messages that show a bad value cut short and say how to
write it in the file's language (reading the file itself: :mod:`toolkit.audit.waivers.file`).

>>> parse_waivers({"waivers": [{"check": "RES002", "service": "batch-*", "reason": "r",
...     "owner": "o", "expires": "2099-06-30"}]})[0].selector
'service batch-*'
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any

from toolkit.errors import WaiverError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SELECTORS", "Waiver", "parse_waivers"]

SELECTORS = ("team", "project", "environment", "service")
_KEYS = {"check", "resources", "reason", "owner", "expires", *SELECTORS}
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}")
_SHOWN_CHARS = 80
"""A value longer than this, shown in a message, is cut."""


@dataclass(frozen=True, kw_only=True)
class Waiver:
    """One accepted finding (or group of them) until ``expires`` (inclusive)."""

    check: str
    reason: str
    owner: str
    expires: date
    resources: tuple[str, ...] | None = None
    team: str | None = None
    project: str | None = None
    environment: str | None = None
    service: str | None = None

    @property
    def selector(self) -> str:
        """What the waiver matches, as text for reports."""
        parts = [f"ids {', '.join(self.resources)}"] if self.resources else []
        parts += [f"{name} {getattr(self, name)}" for name in SELECTORS if getattr(self, name)]
        return "; ".join(parts)


def parse_waivers(data: Any, where: str = "waivers", *, from_yaml: bool = False) -> list[Waiver]:
    """Validate already-parsed data: ``{"waivers": [{...}, ...]}`` (``from_yaml`` words the
    hints for YAML). Top-level keys starting with ``x-`` are ignored. No ``waivers`` key, or
    a YAML ``waivers:`` with every entry commented out, is no waivers; any other value that
    is not a list is refused, so a slip never silently waives nothing."""
    form = _list_form(from_yaml)
    if not isinstance(data, dict):
        raise WaiverError(
            f"{where}: the file must hold one list named 'waivers' ({form}), not {_shown(data)}"
        )
    if extra := sorted(str(k) for k in data if k != "waivers" and not str(k).startswith("x-")):
        close = difflib.get_close_matches(extra[0], ["waivers"], n=1)
        hint = (
            "; did you mean 'waivers'?" if close else
            "; YAML anchors may go inside an entry or under a key starting with 'x-' (x-common)"
            if from_yaml else ""
        )  # fmt: skip
        raise WaiverError(
            f"{where}: top-level key{'s' * (len(extra) > 1)} {', '.join(map(repr, extra))} "
            f"{'are' if len(extra) > 1 else 'is'} not understood: the file may hold only the "
            f"'waivers' list ({form}){hint}"
        )
    entries = data.get("waivers")
    if entries is None:
        return []
    if isinstance(entries, dict):
        fix = (
            "start each entry with '- ' under 'waivers:'" if from_yaml else
            "in TOML write each one under [[waivers]] (two brackets), not [waivers]"
        )  # fmt: skip
        raise WaiverError(f"{where}: 'waivers' must be a list of entries, not a table: {fix}")
    if not isinstance(entries, list):
        raise WaiverError(
            f"{where}: 'waivers' must be a list of entries ({form}), not {_shown(entries)}"
        )
    return [
        _waiver(entry, f"{where}: waiver #{n}", from_yaml)
        for n, entry in enumerate(entries, start=1)
    ]


def _list_form(from_yaml: bool) -> str:
    """How the file writes its list of waivers, in the file's own language."""
    return "'- ' items under 'waivers:' in YAML" if from_yaml else "[[waivers]] entries in TOML"


def _waiver(entry: Any, where: str, from_yaml: bool) -> Waiver:
    if not isinstance(entry, dict):
        raise WaiverError(f"{where} must be a table of check, selector, reason, owner, expires")
    if isinstance(entry.get("check"), str):
        where = f"{where} ({entry['check']})"
    for key in entry:
        if key not in _KEYS:
            close = difflib.get_close_matches(str(key), sorted(_KEYS), n=1)
            known = ", ".join(sorted(_KEYS))
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {known}"
            raise WaiverError(f"{where}: unknown key {key!r}{hint}")
    for key in ("check", "reason", "owner"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            fix = _as_text(key, value, from_yaml)
            raise WaiverError(f"{where}: '{key}' must be text, not {_shown(value)}: {fix}")
        if not isinstance(value, str) or not value.strip():
            raise WaiverError(f"{where}: '{key}' is required and must be non-empty text")
    resources = entry.get("resources")
    if resources is not None and (
        not isinstance(resources, list)
        or not resources
        or not all(isinstance(r, str) and r for r in resources)
    ):
        raise WaiverError(f"{where}: 'resources' must be a non-empty list of resource ids")
    globs = {name: entry.get(name) for name in SELECTORS}
    for name, value in globs.items():
        if value is not None and not isinstance(value, str):
            raise WaiverError(
                f"{where}: '{name}' must be a name or glob such as 'web-*', not "
                f"{_shown(value)}: {_as_text(name, value, from_yaml)}"
            )
        if value is not None and not value:
            raise WaiverError(f"{where}: '{name}' must be a name or glob such as 'web-*'")
        if value is not None and (problem := _glob_problem(value)):
            raise WaiverError(f"{where}: '{name}' = {_shown(value)} {problem}")
    if resources is None and not any(globs.values()):
        raise WaiverError(
            f"{where}: say what it waives: 'resources' (ids) or a glob on "
            f'{", ".join(SELECTORS)} (use service = "*" to waive the check everywhere)'
        )
    return Waiver(
        check=entry["check"],
        reason=entry["reason"].strip(),
        owner=entry["owner"].strip(),
        expires=_expiry(entry.get("expires"), where),
        resources=tuple(resources) if resources else None,
        **globs,
    )


def _as_text(key: str, value: object, from_yaml: bool) -> str:
    """How to write ``value``, which is not text, as the text ``key`` takes, in the file's
    own language (YAML reads a bare ``no`` or ``on`` as a boolean, ``2026`` as a number)."""
    assign = f"{key}{':' if from_yaml else ' ='}"
    if from_yaml and isinstance(value, bool):
        return "put it in quotes, as YAML reads a bare no, yes, on or off as true or false"
    if not isinstance(value, list | dict):
        return f"put it in quotes ({assign} {_shown(_shown(value))})"
    texts = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    if len(texts) == len(value) == 1:
        return f"write the one value, not a list ({assign} {_shown(texts[0])})"
    if texts and len(texts) == len(value) and key == "check":
        return "write one waiver per check"
    if texts and len(texts) == len(value) and key in SELECTORS:
        return "write one glob matching them all, or one waiver per name"
    example = {"check": '"RES002"', **dict.fromkeys(SELECTORS, '"web-*"')}.get(key, '"..."')
    return f"write one value in quotes ({assign} {example})"


def _glob_problem(glob: str) -> str | None:
    """Why ``glob`` can match no name under DuckDB's ``GLOB``, which matches it silently false:
    an unclosed ``[`` set (a ``]`` first in a set, after any ``!``, is a member), a trailing
    ``\\``, a set of backwards ranges only, or a set holding a non-ASCII character (a set
    matches one byte). ``tests/audit/test_audit_waivers.py`` checks this against DuckDB."""
    at, end = 0, len(glob)
    while at < end:
        if glob[at] == "\\":
            if at + 1 == end:
                return "ends in a lone \\, which escapes nothing, so it matches nothing: remove it"
            at += 2
            continue
        if glob[at] != "[":
            at += 1
            continue
        negated = glob.startswith("!", at + 1)
        first = pos = at + 1 + negated
        ranges: list[str] = []
        empty = True
        while pos < end and (glob[pos] != "]" or pos == first):
            if pos + 2 < end and glob[pos + 1] == "-" and glob[pos + 2] != "]":
                ranges.append(glob[pos : pos + 3])
                empty = empty and glob[pos] > glob[pos + 2]
                pos += 3
            else:
                empty, pos = False, pos + 1
        if pos == end:
            return (
                "opens a [ set that is never closed, so it matches nothing: close it with ], "
                "or write [[] for a literal ["
            )
        if empty and not negated:
            return f"matches nothing: its range {ranges[0]} is backwards; write it low to high"
        if other := next((c for c in glob[at:pos] if not c.isascii()), None):
            return (
                f"holds {other!r} in a [...] set, but {other!r} is not ASCII and a set matches "
                "one byte, so it never matches: write the character itself, or use *"
            )
        at = pos + 1
    return None


def _expiry(value: Any, where: str) -> date:
    """A date, inclusive: a waiver holds to the end of that day, UTC. A date and time is
    refused rather than cut to its date (a time of day would look honoured and not be)."""
    if value is None:
        raise WaiverError(
            f"{where}: 'expires' is required, a date such as 2026-06-30 (every waiver ends)"
        )
    text = value if isinstance(value, str) else None
    if text is not None and text != text.strip() and _DATE.fullmatch(text.strip()):
        raise WaiverError(
            f"{where}: 'expires' = {_shown(value)} has a space before or after the date: "
            f"write {_shown(text.strip())}"
        )
    if isinstance(value, datetime) or (text is not None and _DATE_TIME.match(text)):
        raise WaiverError(
            f"{where}: 'expires' = {_shown(value)} is a date and time: give a date (YYYY-MM-DD); "
            "a waiver holds to the end of that day, UTC"
        )
    if isinstance(value, date):
        return value
    if text is not None and _DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise WaiverError(
        f"{where}: 'expires' = {_shown(value)} is not a date: give one such as 2026-06-30 "
        "(YYYY-MM-DD)"
    )


def _shown(value: object) -> str:
    """A value as the file would write it (``true``, ``"text"``, ``[1, 2]``), not as Python's
    repr, cut after :data:`_SHOWN_CHARS` characters. A list or table inside itself (a YAML
    alias of its own anchor, ``&c [*c]``) is shown as ``[...]`` or ``{...}``."""
    shown = ""
    for piece in _pieces(value, ()):
        shown += piece
        if len(shown) > _SHOWN_CHARS:
            return shown[: _SHOWN_CHARS - 3] + "..."
    return shown


def _pieces(value: object, inside: tuple[int, ...]) -> Iterator[str]:
    """:func:`_shown`'s text, piece by piece, so an exponential YAML (aliases of aliases)
    is cut without being written out; ``inside`` holds the lists and tables around it."""
    if isinstance(value, date | time):
        yield value.isoformat()
    elif isinstance(value, list | dict):
        brackets = "[]" if isinstance(value, list) else "{}"
        if id(value) in inside:
            yield f"{brackets[0]}...{brackets[1]}"
            return
        yield brackets[0]
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        for n, (key, item) in enumerate(items):
            yield ", " if n else ""
            if isinstance(value, dict):
                yield from _pieces(key, ())
                yield ": "
            yield from _pieces(item, (*inside, id(value)))
        yield brackets[1]
    else:
        yield json.dumps(value, default=str, ensure_ascii=False)
