"""One check, one SQL file: its metadata header parsed and validated (``docs/checks.md``).

A file that breaks the contract is refused with its path and what to change, so a user's own
checks folder fails loudly instead of silently running something else. Example::

    spec = CheckSpec.load(Path("toolkit/audit/checks/resource-limits/RES001.sql"))
    spec.id, spec.severity, spec.params["min_ratio"].default
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from toolkit.errors import CheckDefinitionError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "AREAS",
    "BUILTIN_CHECKS",
    "HISTORIES",
    "OUTPUT_COLUMNS",
    "SEVERITIES",
    "CheckParam",
    "CheckSpec",
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
HISTORIES = ("snapshot", "previous", "all")
"""What a snapshot's rows of a check may depend on (the optional ``-- history:`` line):
that snapshot only, it and the committed snapshot before it, or any earlier one (the
default). The engine reads fewer snapshots for the judged rows of the first two."""
BUILTIN_CHECKS = Path(__file__).with_name("checks")
"""The checks that ship with the toolkit, one folder per area."""
_REQUIRED = ("id", "title", "severity", "area", "risk", "remediation")
_OPTIONAL = ("history",)
_HEADER_LINE = re.compile(r"--\s*(?P<key>[a-z_]+)\s*:\s*(?P<value>.*?)\s*$")
_PARAM = re.compile(r"(?P<name>[a-z][a-z0-9_]*)\s*=\s*(?P<default>[^|]+?)\s*\|\s*(?P<doc>.+)")
_ID = re.compile(r"[A-Z]{2,5}[0-9]{3}")


@dataclass(frozen=True)
class CheckParam:
    """A threshold the SQL reads as ``$name``; configuration may override the default."""

    name: str
    default: int | float | str
    doc: str


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
        """Read and validate one check file; :class:`CheckDefinitionError` names what is wrong."""
        return parse_check(path.read_text(encoding="utf-8"), path)

    def bind(self, overrides: Mapping[str, object] | None = None) -> dict[str, object]:
        """The parameter values for DuckDB: defaults, then ``overrides`` (declared names only)."""
        values: dict[str, object] = {name: p.default for name, p in self.params.items()}
        for name, value in (overrides or {}).items():
            if name not in self.params:
                known = ", ".join(self.params) or "none"
                raise CheckDefinitionError(
                    f"configuration sets {self.id}.{name}, which {self.id} does not declare "
                    f"(its parameters: {known}); remove or rename the setting"
                )
            values[name] = _typed(self, self.params[name], value)
        return values


def _typed(spec: CheckSpec, param: CheckParam, value: object) -> object:
    """``value`` if it has the kind of its default (a number for a number, text for text);
    else the setting is refused here, not by DuckDB's conversion error mid-audit."""
    numeric = isinstance(param.default, int | float)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and not is_number:
        raise CheckDefinitionError(
            f"configuration sets {spec.id}.{param.name} = {value!r}, but {spec.id} reads it as "
            f"a number (default {param.default}): write a number, without quotes"
        )
    if not numeric and not isinstance(value, str):
        raise CheckDefinitionError(
            f"configuration sets {spec.id}.{param.name} = {value!r}, but {spec.id} reads it as "
            f"text (default {param.default!r}): write it in quotes"
        )
    return value


def parse_check(text: str, path: Path) -> CheckSpec:
    """Parse a check's text; ``path`` names the file in errors and fixes the expected id."""
    header: dict[str, str] = {}
    params: dict[str, CheckParam] = {}
    body: list[str] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _HEADER_LINE.match(line)
        if match is None:
            body = lines[index:]
            break
        key, value = match["key"], match["value"]
        if key == "param":
            param = _param(value, path)
            params[param.name] = param
        elif key in header:
            raise CheckDefinitionError(f"{path}: header key {key!r} appears twice")
        else:
            header[key] = value
    for key in _REQUIRED:
        if not header.get(key):
            raise CheckDefinitionError(f"{path}: the header needs a '-- {key}: ...' line")
    _validate(header, path)
    sql = "\n".join(body).strip().rstrip(";")
    if not sql:
        raise CheckDefinitionError(f"{path}: no SQL after the header")
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


def _param(text: str, path: Path) -> CheckParam:
    match = _PARAM.fullmatch(text)
    if match is None:
        raise CheckDefinitionError(
            f"{path}: param line {text!r} must read 'name = default | one sentence'"
        )
    raw = match["default"]
    default: int | float | str
    try:
        default = int(raw)
    except ValueError:
        try:
            default = float(raw)
        except ValueError:
            default = raw.strip("'\"")
    return CheckParam(match["name"], default, match["doc"])


def discover_checks(folders: Iterable[Path]) -> list[CheckSpec]:
    """Every ``*.sql`` below the folders, parsed; a duplicate id across folders is refused."""
    found: dict[str, CheckSpec] = {}
    for folder in folders:
        if not folder.is_dir():
            raise CheckDefinitionError(f"checks folder {folder} does not exist")
        for path in sorted(folder.rglob("*.sql")):
            spec = CheckSpec.load(path)
            if spec.id in found:
                raise CheckDefinitionError(
                    f"{path}: check {spec.id} is also defined in {found[spec.id].path}"
                )
            found[spec.id] = spec
    return sorted(found.values(), key=lambda s: s.id)
