"""One check, one SQL file: its metadata header parsed and validated (``docs/checks.md``).

A file that breaks the contract is refused with its path and what to change, so a user's own
checks folder fails loudly instead of silently running something else. Example::

    spec = CheckSpec.load(Path("toolkit/audit/checks/resource-limits/RES001.sql"))
    spec.id, spec.severity, spec.params["min_ratio"].default
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from toolkit.audit.check_values import MOVED_PARAMS, CheckParam, checked_value, shared_default
from toolkit.errors import CheckDefinitionError, NotUtf8, read_utf8

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "AREAS",
    "BUILTIN_CHECKS",
    "HISTORIES",
    "OUTPUT_COLUMNS",
    "SEVERITIES",
    "STATUSES",
    "CheckParam",
    "CheckSpec",
    "created_names",
    "discover_checks",
    "parse_check",
]

SEVERITIES = ("critical", "high", "medium", "low", "info")
AREAS = (
    "resource-limits",
    "replicas",
    "deployments",
    "variables",
    "key-scope",
    "volumes",
    "backups",
    "webhooks",
    "templates",
    "security",
)
OUTPUT_COLUMNS = (
    "snapshot_id",
    "resource_type",
    "resource_id",
    "resource_name",
    "team_id",
    "project_id",
    "environment_id",
    "service_id",
    "status",
    "reason",
    "evidence",
)
STATUSES = ("alarm", "ok", "unknown")
"""A check row's ``status``: the resource is in alarm, is fine, or could not be judged from
what the snapshot holds (a value the platform reported that the check does not know, a
comparison with a snapshot that lacks it): a finding with an ``unknown`` row is not observed
there, so it keeps its state, and neither ends nor starts an episode."""
HISTORIES = ("snapshot", "previous", "all")
"""What a snapshot's rows of a check may depend on (the optional ``-- history:`` line):
that snapshot only, it and the committed snapshot before it, or any earlier one (the
default). The engine reads fewer snapshots for the judged rows of the first two."""
BUILTIN_CHECKS = Path(__file__).with_name("checks")
"""The checks that ship with the toolkit, one folder per area."""
_REQUIRED = ("id", "title", "severity", "area", "risk", "remediation")
_OPTIONAL = ("history",)
_HEADER_KEYS = (*_REQUIRED, *_OPTIONAL, "param")
# A header line, read in any case so a mis-cased key is refused as such, not as a comment.
_HEADER_LINE = re.compile(r"--\s*(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.*?)\s*$")
_PARAM = re.compile(r"(?P<name>[a-z][a-z0-9_]*)\s*=\s*(?P<default>[^|]+?)\s*\|\s*(?P<doc>.+)")
_ID = re.compile(r"[A-Z]{2,5}[0-9]{3}")
# What is not code in a check's SQL: dollar-quoted, quoted and double-quoted text, comments.
_NOT_CODE = re.compile(
    r"\$(?P<tag>[A-Za-z_]*)\$.*?\$(?P=tag)\$|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/",
    re.DOTALL,
)
_PARAM_REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class CheckSpec:
    """A parsed check: its metadata, its parameters and its SQL (header stripped)."""

    id: str
    title: str
    severity: str
    area: str
    risk: str
    remediation: str
    params: Mapping[str, CheckParam]
    sql: str
    path: Path
    history: str = "all"
    """One of :data:`HISTORIES`."""

    @classmethod
    def load(cls, path: Path) -> CheckSpec:
        """Read and validate one check file; :class:`CheckDefinitionError` names what is wrong.

        A UTF-8 byte-order mark (Windows editors write one) is dropped."""
        try:
            text = read_utf8(path)
        except NotUtf8 as exc:
            raise CheckDefinitionError(str(exc)) from None
        except OSError as exc:
            raise CheckDefinitionError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        return parse_check(text, path)

    def bind(
        self, overrides: Mapping[str, object] | None = None, *, where: str = "configuration"
    ) -> dict[str, object]:
        """The parameter values for DuckDB: defaults, then ``overrides`` (declared names only).

        An override DuckDB could not use, or that would quietly change what the check means
        (see :func:`toolkit.audit.check_values.checked_value`), is refused naming
        ``[checks.ID] name`` in ``where`` (the config file)."""
        values: dict[str, object] = {name: p.default for name, p in self.params.items()}
        for name, value in (overrides or {}).items():
            if name not in self.params:
                known = ", ".join(self.params) or "none"
                moved = MOVED_PARAMS.get((self.id, name))
                fix = f"move it to {moved}" if moved else "remove or rename the setting"
                raise CheckDefinitionError(
                    f"{where}: [checks.{self.id}] sets {name}, which {self.id} does not declare "
                    f"(its parameters: {known}); {fix}"
                )
            values[name] = checked_value(self.id, self.params[name], value, where)
        return values


def parse_check(text: str, path: Path) -> CheckSpec:
    """Parse a check's text; ``path`` names the file in errors and fixes the expected id."""
    header: dict[str, str] = {}
    params: dict[str, CheckParam] = {}
    lines = text.splitlines()
    pairs = _header_lines(lines, path)
    for key, value in pairs:
        if key == "param":
            param = _param(value, path)
            if param.name in params:
                raise CheckDefinitionError(
                    f"{path}: param {param.name!r} is declared twice; keep one '-- param:' line"
                )
            params[param.name] = param
        elif key in header:
            raise CheckDefinitionError(f"{path}: header key {key!r} appears twice")
        else:
            header[key] = value
    for key in _REQUIRED:
        if not header.get(key):
            raise CheckDefinitionError(f"{path}: the header needs a '-- {key}: ...' line")
    _validate(header, path)
    sql = "\n".join(lines[len(pairs) :]).strip().rstrip(";")
    if not sql:
        raise CheckDefinitionError(f"{path}: no SQL after the header")
    _require_declared(sql, params, path)
    params = {name: _read_as(param, sql) for name, param in params.items()}
    return CheckSpec(
        id=header["id"],
        title=header["title"],
        severity=header["severity"],
        area=header["area"],
        risk=header["risk"],
        remediation=header["remediation"],
        params=MappingProxyType(params),
        sql=sql,
        path=path,
        history=header.get("history", "all"),
    )


def _header_lines(lines: list[str], path: Path) -> list[tuple[str, str]]:
    """The ``(key, value)`` of each ``-- key: value`` line the file opens with (its header).

    Free comments may follow the header (a blank line or any other comment ends it), but a
    header line among the comments before the SQL, or a known key in another case, is
    refused: it would not be read, and the error would name what it left out instead."""
    header: list[tuple[str, str]] = []
    end: int | None = None
    for index, line in enumerate(lines):
        if end is not None and line.strip() and not line.lstrip().startswith("--"):
            break  # the SQL starts: its comments are its own
        match = _HEADER_LINE.match(line)
        key = match["key"] if match else ""
        if key.lower() in _HEADER_KEYS and key != key.lower():
            raise CheckDefinitionError(
                f"{path}: line {index + 1} ({_quoted(line)}) spells the header key "
                f"{key.lower()!r} as {key!r}; header keys are lower case: write "
                f"'-- {key.lower()}: ...'"
            )
        if end is None and match and key == key.lower():
            header.append((key, match["value"]))
        elif end is None:
            end = index
        elif key in _HEADER_KEYS:
            blank = lines[end].strip() in ("", "--")
            fix = (
                f"remove line {end + 1}" if blank else f"move line {index + 1} above line {end + 1}"
            )
            raise CheckDefinitionError(
                f"{path}: the header ended at line {end + 1} ({_quoted(lines[end])}), so line "
                f"{index + 1} ({_quoted(line)}) is not read as a header line; the header is "
                f"one block of '-- key: value' lines at the top of the file: {fix} (free "
                "comments go below the header)"
            )
    return header


def _quoted(line: str) -> str:
    """A line of the file for an error: ``a blank line``, or its text, cut when long."""
    text = line.strip()
    if not text:
        return "a blank line"
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _validate(header: Mapping[str, str], path: Path) -> None:
    check_id = header["id"]
    if check_id != path.stem:
        raise CheckDefinitionError(
            f"{path}: header id {check_id!r} differs from the file name; rename the file to "
            f"{check_id}.sql or fix the id"
        )
    if not _ID.fullmatch(check_id):
        raise CheckDefinitionError(f"{path}: id {check_id!r} must look like RES001")
    if header["severity"] not in SEVERITIES:
        raise CheckDefinitionError(
            f"{path}: severity {header['severity']!r} is not one of {', '.join(SEVERITIES)}"
        )
    if header["area"] not in AREAS:
        raise CheckDefinitionError(
            f"{path}: area {header['area']!r} is not one of {', '.join(AREAS)}"
        )
    if header.get("history", "all") not in HISTORIES:
        raise CheckDefinitionError(
            f"{path}: history {header['history']!r} is not one of {', '.join(HISTORIES)}"
        )
    unknown = set(header) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise CheckDefinitionError(f"{path}: unknown header key(s) {', '.join(sorted(unknown))}")


def _require_declared(sql: str, params: Mapping[str, CheckParam], path: Path) -> None:
    """Refuse a ``$name`` no ``-- param:`` line declares, and a declared one the SQL never
    reads: DuckDB would say only "Values were not provided" or "argument count mismatch"."""
    code = _NOT_CODE.sub(" ", sql)
    read = set(_PARAM_REF.findall(code))
    for name in sorted(read - set(params)):
        raise CheckDefinitionError(
            f"{path}: the SQL reads ${name}, which no '-- param:' line declares; add "
            f"'-- param: {name} = <default> | <one sentence>' to the header"
        )
    for name in params:
        if name not in read:
            raise CheckDefinitionError(
                f"{path}: declares param {name!r}, but the SQL never reads ${name}; use it or "
                "remove its '-- param:' line"
            )


@cache
def _regex_list_macros() -> tuple[str, ...]:
    """Macros (``views/*.sql``) that read a parameter as comma-separated regular
    expressions: ``secret_name``, and the table macros that pass theirs on to it
    (``secret_ages($min_length, $secret_names, $not_secret_names)``)."""
    found = ["secret_name"]
    for path in sorted(Path(__file__).with_name("views").glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        if "secret_name(" in _NOT_CODE.sub(" ", text):
            found += created_names(text)
    return tuple(dict.fromkeys(found))


def created_names(sql: str) -> list[str]:
    """The views and macros ``sql`` creates (``create or replace macro owner_of(...)``),
    comments and quoted text aside."""
    return _CREATED.findall(_NOT_CODE.sub(" ", sql))


_CREATED = re.compile(
    r"\bcreate\s+(?:or\s+replace\s+)?(?:temp\w*\s+)?(?:view|macro|function)\s+(\w+)",
    re.IGNORECASE,
)


def _read_as(param: CheckParam, sql: str) -> CheckParam:
    """``param`` with how the SQL reads it: as a regular expression, as a comma list."""
    if isinstance(param.default, int | float):
        return param
    ref = rf"\${param.name}\b"
    code = _NOT_CODE.sub(" ", sql)
    # passed to a macro of views/ that splits it and reads each item as a regular expression
    macro = any(re.search(rf"\b{m}\([^)]*{ref}", code) for m in _regex_list_macros())
    regex = macro or any("regexp_" in line and re.search(ref, line) for line in code.splitlines())
    listed = re.search(rf"(?:string_split|str_split|replace)\(\s*{ref}\s*,\s*','", sql)
    return replace(param, regex=regex, listed=macro or listed is not None)


def _param(text: str, path: Path) -> CheckParam:
    match = _PARAM.fullmatch(text)
    if match is None:
        raise CheckDefinitionError(
            f"{path}: param line {text!r} must read 'name = default | one sentence'"
        )
    raw = shared_default(match["default"], f"{path}: param {match['name']}")
    default: int | float | str
    try:
        default = int(raw)
    except ValueError:
        try:
            default = float(raw)
        except ValueError:
            default = raw.strip("'\"")
    return CheckParam(match["name"], default, match["doc"])


def discover_checks(folders: Iterable[Path], *, where: str | None = None) -> list[CheckSpec]:
    """Every ``*.sql`` below the folders, parsed once (a folder may be listed twice, or
    inside another); a duplicate id across files is refused.

    Hidden files and folders (``._RES001.sql`` of a macOS copy, an editor's ``.#RES001.sql``
    lock) are skipped. A folder that is missing, not a folder, or holds no check file is a
    :class:`CheckDefinitionError`; ``where`` names the setting that listed the folders
    (``"platform-audit.toml: [audit] checks"``)."""
    found: dict[str, CheckSpec] = {}
    read: set[Path] = set()
    for folder in folders:
        _require_folder(folder, where)
        paths = [
            path
            for path in sorted(folder.rglob("*.sql"))
            if not any(part.startswith(".") for part in path.relative_to(folder).parts)
        ]
        if not paths:
            raise CheckDefinitionError(_empty_folder(folder, where))
        for path in paths:
            if path.resolve() in read:
                continue  # a folder listed twice, or inside another listed ("checks/sub")
            read.add(path.resolve())
            spec = CheckSpec.load(path)
            if spec.id in found:
                raise CheckDefinitionError(_duplicate(path, spec.id, found[spec.id].path))
            found[spec.id] = spec
    return sorted(found.values(), key=lambda s: s.id)


def _duplicate(path: Path, check_id: str, first: Path) -> str:
    """Why a second file with ``check_id`` is refused, and what to do (a built-in check is
    replaced by leaving it out and giving yours an id of its own)."""
    if first.is_relative_to(BUILTIN_CHECKS):
        return (
            f"{path}: {check_id} is a built-in check ({first}); to replace it, give yours "
            f"an id of its own (its `-- id:` line and file name) and leave the built-in out "
            f'with `[audit] skip = ["{check_id}"]`'
        )
    return f"{path}: check {check_id} is also defined in {first}; rename one (ids are unique)"


def _require_folder(folder: Path, where: str | None) -> None:
    named = f"{where} names {folder}" if where else f"checks folder {folder}"
    if folder.is_file():
        raise CheckDefinitionError(
            f"{named}, which is a file; name the folder that holds the check files"
        )
    if not folder.is_dir():
        fix = "fix the path (relative to the config file) or remove it" if where else ""
        raise CheckDefinitionError(f"{named}, which does not exist" + (f"; {fix}" if fix else ""))


def _empty_folder(folder: Path, where: str | None) -> str:
    named = f"{where} names {folder}" if where else f"checks folder {folder}"
    near = sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if ".sql" in p.name.lower() and p.is_file() and not p.name.startswith(".")
    )
    hint = f" ({', '.join(near[:3])} do not end in .sql)" if near else ""
    return (
        f"{named}, which holds no check file{hint}: a check is one <ID>.sql file such as "
        "ACME001.sql (see docs/checks.md); add one, or remove the folder from the setting"
    )
