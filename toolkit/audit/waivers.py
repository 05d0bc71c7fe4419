"""Waivers: findings a team accepted for a while, as data with a reason, an owner and an expiry.

A TOML file (or YAML, same shape) holds a list of waivers::

    [[waivers]]
    check = "RES002"
    service = "batch-*"              # glob on a name: team, project, environment, service
    reason = "The job runner caps memory itself."
    owner = "alice@example.com"
    expires = 2026-06-30

    [[waivers]]
    check = "VAR001"
    resources = ["7f0c...", "91ab..."]   # or exact resource ids
    reason = "..."
    owner = "..."
    expires = 2026-03-31

``expires`` is a date (YYYY-MM-DD): the waiver holds to the end of that day, UTC; a date
and time is refused, not cut to its date. A YAML file (``.yaml`` or ``.yml``; every other
suffix is read as TOML) may not give a key twice in one entry. Besides ``waivers`` the file
may hold only keys starting with ``x-``, ignored, where YAML anchors can live
(``x-common: &common {...}``, then ``<<: *common`` in an entry). ``check`` is one exact id; a
glob (``*``, ``?``, ``[a-z]``, ``\\`` escaping the next character) that can match nothing, such as
an unclosed ``[``, is refused.

A waived finding is shown as waived, never dropped. A waiver holds findings in alarm: a
resolved finding it matches is resolved, not waived, and counted as such. A finding two
waivers match shows the one the report keeps (the unexpired one lasting longest, the earlier
entry among equals). A waiver past its expiry date stops hiding its findings and is itself
reported; an active waiver that matches no finding in alarm is reported as stale, and one
that ends within :data:`EXPIRING_DAYS` as expiring, so the gate it holds open does not fail
by surprise. An id of ``resources`` that matches no finding in alarm is named
(``stale_ids``), and a waiver whose every finding another unexpired waiver holds as long or
longer is a duplicate (``covered_by``): remove it, not renew it.
A waiver for a check this audit did not run (``--check``, ``--skip``) is unchecked, neither
stale nor active; one naming no check at all is refused (:func:`require_known_checks`),
since it could never match. Matching runs in DuckDB (``GLOB``), next to the findings.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import json
import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.audit.lifecycle import query_frame
from toolkit.errors import WaiverError
from toolkit.text_file import NotUtf8, read_utf8

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Sequence

    import duckdb
    import pandas as pd

__all__ = [
    "ATTENTION",
    "EXPIRING_DAYS",
    "SELECTORS",
    "WAIVER_STATUSES",
    "Waiver",
    "apply_waivers",
    "load_waivers",
    "parse_waivers",
    "require_known_checks",
]

SELECTORS = ("team", "project", "environment", "service")
EXPIRING_DAYS = 14
"""A waiver still hiding findings that ends within this many days is reported as expiring."""
WAIVER_STATUSES = ("active", "expiring", "expired", "stale", "duplicate", "unchecked")
"""A waiver report's statuses: ``expiring``, ``expired``, ``stale`` and ``duplicate`` (every
finding it matches is held by another waiver lasting at least as long: remove it, no need to
renew it) ask for someone to act; ``unchecked`` says the audit did not run the waiver's check."""
ATTENTION = ("expiring", "expired", "stale", "duplicate")
"""The statuses of waivers someone has to renew, fix or remove."""
_KEYS = {"check", "resources", "reason", "owner", "expires", *SELECTORS}
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}")
WAIVERS = "audit_waivers"
_SHOWN_CHARS = 80
"""A value longer than this, shown in a message, is cut."""
_SCHEMA = pa.schema(
    [
        ("idx", pa.int64()),
        ("check_id", pa.string()),
        ("resource_ids", pa.list_(pa.string())),
        *((name, pa.string()) for name in SELECTORS),
        ("selector", pa.string()),
        ("reason", pa.string()),
        ("owner", pa.string()),
        ("expires", pa.date32()),
        ("expired", pa.bool_()),
        ("days_left", pa.int32()),
    ]
)


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


def load_waivers(path: Path) -> list[Waiver]:
    """Read a ``.toml``, ``.yaml`` or ``.yml`` file; :class:`WaiverError` names a bad entry."""
    text = _read_text(path)
    from_yaml = path.suffix.lower() in (".yaml", ".yml")
    try:
        data = _yaml(text, path) if from_yaml else tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(
            f"{path} is not valid TOML ({exc}): fix the line it names{_suffix_hint(path, text)}"
        ) from exc
    except RecursionError:  # both parsers recurse once per level of [[[...]]]
        raise WaiverError(
            f"{path} nests lists or tables too deep to read: a waiver holds text, a date and "
            "a list of ids"
        ) from None
    return parse_waivers(data, str(path), from_yaml=from_yaml)


def _read_text(path: Path) -> str:
    """The file as text (a UTF-8 byte-order mark is dropped, as Windows editors write one).
    Not only a regular file: a pipe (``--waivers <(sops -d waivers.toml)``) is read too."""
    fix = "fix [audit] waivers or --waivers"
    if path.is_dir():
        raise WaiverError(f"waivers file {path} is a folder, not a file: {fix}")
    if not path.exists():
        raise WaiverError(f"waivers file {path} does not exist: {fix}")
    try:
        return read_utf8(path)
    except NotUtf8 as exc:
        raise WaiverError(f"{exc}, or {fix} if it names the wrong file") from None
    except OSError as exc:
        raise WaiverError(
            f"cannot read waivers file {path} ({exc.strerror or exc}): {fix}"
        ) from None


def _suffix_hint(path: Path, text: str) -> str:
    """Why a file failed to parse when it was never meant to be in that language: the
    suffix decides, .yaml or .yml for YAML and anything else for TOML."""
    if path.suffix.lower() in (".yaml", ".yml"):
        if re.search(r"^\s*\[\[?waivers\]", text, re.MULTILINE):
            return f"; it looks like TOML, which is read from a .toml file: rename {path}"
        return ""
    if path.suffix.lower() != ".toml":
        return "; the suffix picks the parser: name the file .toml, or .yaml (or .yml) for YAML"
    if re.search(r"^\s*-?\s*waivers\s*:", text, re.MULTILINE):
        return f"; it looks like YAML, which is read only from a .yaml or .yml file: rename {path}"
    return ""


def _yaml(text: str, path: Path) -> Any:
    """The document; an empty one (nothing but comments) holds no waivers, as in TOML."""
    import yaml

    try:
        data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise WaiverError(
            f"{path} is not valid YAML ({exc}): fix the line it names{_suffix_hint(path, text)}"
        ) from exc
    return {} if data is None else data


@functools.cache
def _strict_loader() -> type:
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the
    last silently, so a waiver would hide another resource than the one first written) and
    a date that does not exist (PyYAML raises a bare ``ValueError``)."""
    import yaml
    from yaml.constructor import ConstructorError

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[object] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str | int | float | bool):
                    continue  # the base class refuses an unhashable key itself
                if key in seen:
                    raise ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"found {key!r} twice; keep one (a key may appear once per entry)",
                        key_node.start_mark,
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_timestamp(self, node: Any) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except ValueError as exc:
                raise ConstructorError(
                    None, None, f"{node.value!r} is not a real date ({exc})", node.start_mark
                ) from None

    StrictLoader.add_constructor(
        "tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp
    )
    return StrictLoader


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


def waiver_table(waivers: Sequence[Waiver], today: date) -> pa.Table:
    """The waivers as an Arrow table for DuckDB (``idx`` is the entry's 1-based position)."""
    rows = [
        {
            "idx": n,
            "check_id": w.check,
            "resource_ids": list(w.resources) if w.resources else None,
            **{name: getattr(w, name) for name in SELECTORS},
            "selector": w.selector,
            "reason": w.reason,
            "owner": w.owner,
            "expires": w.expires,
            "expired": w.expires < today,
            "days_left": (w.expires - today).days,
        }
        for n, w in enumerate(waivers, start=1)
    ]
    return pa.Table.from_pylist(rows, schema=_SCHEMA)


_MATCHES = """
create or replace temp table audit_waiver_matches as
select f.check_id, f.resource_id, f.state, w.idx, w.expired, w.expires
from audit_findings f
join audit_waivers w
  on w.check_id = f.check_id
 and (w.resource_ids is null or list_contains(w.resource_ids, f.resource_id))
 and (w.team is null or coalesce(f.team_name, '') glob w.team)
 and (w.project is null or coalesce(f.project_name, '') glob w.project)
 and (w.environment is null or coalesce(f.environment_name, '') glob w.environment)
 and (w.service is null or coalesce(f.service_name, f.resource_name, '') glob w.service)
"""

# The waiver shown on a finding in alarm (a resolved one is resolved, not waived, as the
# report's stale and duplicate waivers count only findings in alarm): an active one first,
# else an expired one (shown, but not hiding it); the one lasting longest, then the earliest
# entry of the file, so that it is the one the report keeps, never one it calls a duplicate.
_WAIVED = """
with chosen as (
    select check_id, resource_id, first(idx order by expired, expires desc, idx) as idx
    from audit_waiver_matches
    where state <> 'resolved'
    group by check_id, resource_id
)
select
    f.* exclude (severity_rank),
    coalesce(not w.expired, false) as waived,
    case when w.idx is null then null when w.expired then 'expired' else 'active' end
        as waiver_status,
    w.owner as waiver_owner,
    w.reason as waiver_reason,
    w.expires as waiver_expires
from audit_findings f
left join chosen c using (check_id, resource_id)
left join audit_waivers w on w.idx = c.idx
order by
    f.severity_rank,
    array_position(['new', 'regressed', 'open', 'resolved'], f.state),
    f.check_id,
    f.resource_name,
    f.resource_id
"""

_REPORT = """
with live as (  -- each waiver's matches still in alarm (or fixed, not yet resolved)
    select distinct idx, check_id, resource_id from audit_waiver_matches where state <> 'resolved'
),
counted as (
    select w.*, count(m.idx) filter (where m.state <> 'resolved') as matched
    from audit_waivers w
    left join audit_waiver_matches m on m.idx = w.idx
    group by all
),
shared as (  -- how many of a waiver's live matches another waiver matches too
    select a.idx, b.idx as other, count(*) as n
    from live a join live b using (check_id, resource_id)
    where a.idx <> b.idx
    group by all
),
covered as (  -- by an unexpired waiver lasting as long (the earlier entry among equals)
    select s.idx, first(s.other order by wb.expires desc, s.other) as covered_by
    from shared s
    join audit_waivers wa on wa.idx = s.idx
    join audit_waivers wb on wb.idx = s.other
    where s.n = (select count(*) from live l where l.idx = s.idx)
      and not wb.expired
      and (wb.expires > wa.expires or (wb.expires = wa.expires and wb.idx < wa.idx))
    group by s.idx
),
idle as (  -- ids of a 'resources' list that match no live finding
    select w.idx, string_agg(r.id, ', ' order by r.pos) as stale_ids
    from audit_waivers w,
         unnest(w.resource_ids) with ordinality as r(id, pos)
    where not exists (select 1 from live l where l.idx = w.idx and l.resource_id = r.id)
    group by w.idx
)
select
    idx as entry,
    check_id,
    selector,
    owner,
    reason,
    expires,
    days_left,
    matched,
    case
        when expired then 'expired'
        when check_id not in (select check_id from audit_checks) then 'unchecked'
        when matched = 0 then 'stale'
        when v.covered_by is not null then 'duplicate'
        when days_left <= $expiring_days then 'expiring'
        else 'active'
    end as status,
    case when not expired and matched > 0 then i.stale_ids end as stale_ids,
    case when not expired and matched > 0 then v.covered_by end as covered_by
from counted
left join covered v using (idx)
left join idle i using (idx)
order by idx
"""


def apply_waivers(
    con: duckdb.DuckDBPyConnection, waivers: Iterable[Waiver], today: date
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Findings with their waiver columns, and the waiver report: each entry's ``expires``,
    ``days_left`` (negative once expired), how many findings it ``matched``, its ``status``
    (:data:`WAIVER_STATUSES`), ``stale_ids`` (the ids of its ``resources`` that match no
    finding in alarm, comma-separated, else null) and ``covered_by`` (for a duplicate, the
    entry that holds its findings, else null).

    Reads ``audit_findings`` and ``audit_checks`` (see :mod:`toolkit.audit.lifecycle`).
    """
    import pandas as pd

    con.register(WAIVERS, waiver_table(list(waivers), today))
    con.execute(_MATCHES)
    report = query_frame(con, _REPORT, {"expiring_days": EXPIRING_DAYS})
    # an entry number, or None (not NaN, which pandas makes of a null integer)
    report["covered_by"] = pd.Series(
        [None if pd.isna(v) else int(v) for v in report["covered_by"]], dtype=object
    )
    return query_frame(con, _WAIVED), report


def require_known_checks(
    waivers: Sequence[Waiver], known: Collection[str], where: str = "waivers"
) -> None:
    """Refuse a waiver whose check id no check has (``known``: every id that could run,
    skipped ones too): a misspelt id would never match, and the finding it meant to waive
    would fail the gate with the waiver looking right."""
    for n, waiver in enumerate(waivers, start=1):
        if waiver.check in known:
            continue
        if any(c in waiver.check for c in "*?["):
            ids = fnmatch.filter(sorted(known), waiver.check.upper())
            more = f", and {len(ids) - 5} more" if len(ids) > 5 else ""
            hint = f"ids it would cover: {', '.join(ids[:5])}{more}" if ids else ""
            raise WaiverError(
                f"{where}: waiver #{n} ({waiver.check}): 'check' must be one exact check id, "
                f"not a glob: write one waiver per check "
                f"({hint or '`platform-audit checks` lists them'})"
            )
        close = [waiver.check.upper()] if waiver.check.upper() in known else []
        close = close or difflib.get_close_matches(waiver.check, sorted(known), n=1)
        hint = f"did you mean {close[0]}?" if close else "`platform-audit checks` lists them"
        raise WaiverError(f"{where}: waiver #{n} ({waiver.check}): no check has this id; {hint}")


def waivers_from(source: Path | Sequence[Waiver] | None, default: Path | None) -> list[Waiver]:
    """Waivers given directly, read from a path, or from the configured file (else none)."""
    if source is None:
        return load_waivers(default) if default is not None else []
    if isinstance(source, PurePath):
        return load_waivers(Path(source))
    return list(source)
