"""Framework files: found by name in this folder and the configured ones, read and validated.

A framework file is TOML named for its id (``soc2.toml``): a title and version, then
requirements, each mapping checks with a sentence saying why the check is evidence for it,
and the checks it leaves out on purpose, with a reason::

    id = "soc2"
    title = "SOC 2 Trust Services Criteria"
    version = "2017 (points of focus revised 2022)"

    [[requirements]]
    id = "CC6.1"
    title = "Logical access to systems and data is restricted"

    [[requirements.checks]]
    check = "KEY001"
    why = "An admin key may delete resources and manage access; ..."

    [[unmapped]]
    check = "VAR009"
    reason = "It qualifies the evidence of other checks rather than being evidence itself."

Users add their own from folders (``[audit] frameworks = ["frameworks"]``); an id may be
defined once. Loading refuses a file that maps a check no catalogue has, lists a requirement
twice, or gives a mapping no reason, naming the file, the requirement and what to do::

    soc2 = load_framework("soc2", extra_dirs=settings.audit_frameworks)
    available_frameworks()                      # ["cis", "iso27001", "soc2"]
    check_coverage({s.id for s in Catalogue.load().specs})  # every check accounted for
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.frameworks.model import Framework, Mapping, Requirement
from toolkit.errors import ConfigError, NotUtf8, read_utf8

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable
    from collections.abc import Mapping as MappingOf

__all__ = [
    "BUILTIN_FRAMEWORKS",
    "FrameworkFile",
    "available_frameworks",
    "check_coverage",
    "known_check_ids",
    "load_framework",
    "read_framework",
]

BUILTIN_FRAMEWORKS = Path(__file__).parent
"""The folder of the frameworks that ship with the toolkit (soc2, iso27001, cis)."""
_TOP_KEYS = {"id", "title", "version", "requirements", "unmapped"}
_SETTING = "[audit] frameworks"


@dataclass(frozen=True)
class FrameworkFile:
    """A framework as its file defines it: the framework, where it was read from, and the
    checks it leaves out on purpose (check id -> reason)."""

    framework: Framework
    path: Path
    unmapped: MappingOf[str, str]


def available_frameworks(extra_dirs: Iterable[Path] = ()) -> list[str]:
    """The ids of the built-in frameworks and of those in ``extra_dirs``, sorted."""
    return sorted(_framework_paths(tuple(extra_dirs)))


def load_framework(
    name_or_path: str | Path,
    extra_dirs: Iterable[Path] = (),
    *,
    known_checks: Collection[str] | None = None,
) -> Framework:
    """The framework named (``soc2``, any case) or read from a ``.toml`` path, validated:
    every check it maps is in ``known_checks`` (default: the built-in checks; pass
    :func:`known_check_ids` of the configured folders when users map their own checks)."""
    return read_framework(name_or_path, extra_dirs, known_checks=known_checks).framework


def read_framework(
    name_or_path: str | Path,
    extra_dirs: Iterable[Path] = (),
    *,
    known_checks: Collection[str] | None = None,
) -> FrameworkFile:
    """As :func:`load_framework`, with the file's path and its ``unmapped`` checks."""
    path = _find(name_or_path, tuple(extra_dirs))
    known = _builtin_check_ids() if known_checks is None else frozenset(known_checks)
    return _parse(path, _read_toml(path), known)


def known_check_ids(folders: Iterable[Path] = ()) -> frozenset[str]:
    """The ids of the built-in checks and of those in ``folders`` (``[audit] checks``):
    what a framework may map, whether or not a configuration runs it."""
    return _builtin_check_ids() | {spec.id for spec in discover_checks(folders)}


def check_coverage(check_ids: Iterable[str], extra_dirs: Iterable[Path] = ()) -> None:
    """Refuse a check of ``check_ids`` that no framework maps and none lists as
    ``unmapped``: a new check must say what it is evidence for (or why nothing)."""
    ids = set(check_ids)
    covered: set[str] = set()
    dirs = tuple(extra_dirs)
    for name in available_frameworks(dirs):
        found = read_framework(name, dirs, known_checks=ids | _builtin_check_ids())
        covered |= set(found.framework.check_ids()) | set(found.unmapped)
    missing = sorted(ids - covered)
    if missing:
        raise ConfigError(
            f"check(s) {', '.join(missing)} are mapped in no framework and listed in no "
            f"framework file's unmapped checks ({BUILTIN_FRAMEWORKS}/*.toml): map each to "
            "the requirements it is evidence for ([[requirements.checks]] with check and "
            "why), or add it under [[unmapped]] with a reason"
        )


@functools.cache
def _builtin_check_ids() -> frozenset[str]:
    return frozenset(spec.id for spec in discover_checks([BUILTIN_CHECKS]))


def _framework_paths(extra_dirs: tuple[Path, ...]) -> dict[str, Path]:
    """Framework id (the file's stem) -> file, built-in first; an id defined twice is refused."""
    found: dict[str, Path] = {}
    for folder in (BUILTIN_FRAMEWORKS, *extra_dirs):
        if folder != BUILTIN_FRAMEWORKS:
            _require_folder(folder)
        for path in sorted(folder.glob("*.toml")):
            if path.name.startswith("."):
                continue  # an editor's lock file, a macOS copy's ._ file
            name = path.stem.lower()
            if name in found and found[name].resolve() != path.resolve():
                raise ConfigError(_duplicate(path, name, found[name]))
            found[name] = path
    return found


def _require_folder(folder: Path) -> None:
    if not folder.is_dir():
        what = "a file" if folder.is_file() else "not there"
        raise ConfigError(
            f"{_SETTING} names {folder}, which is {what}: name a folder of framework .toml "
            "files (relative to the config file), or remove it"
        )
    if not any(p for p in folder.glob("*.toml") if not p.name.startswith(".")):
        raise ConfigError(
            f"{_SETTING} names {folder}, which holds no framework file: add <id>.toml files "
            "to it, or remove it from the setting"
        )


def _duplicate(path: Path, name: str, first: Path) -> str:
    if first.parent == BUILTIN_FRAMEWORKS:
        return (
            f"{path}: framework {name} is built in ({first}); give yours an id of its own "
            "(its id line and file name)"
        )
    return f"{path}: framework {name} is also defined in {first}; rename one (ids are unique)"


def _find(name_or_path: str | Path, extra_dirs: tuple[Path, ...]) -> Path:
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith(".toml") or "/" in text:
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise ConfigError(f"framework file {path} does not exist: fix the path")
        return path
    paths = _framework_paths(extra_dirs)
    if text.lower() not in paths:
        raise ConfigError(
            f"no framework is named {text!r}: the frameworks are {', '.join(sorted(paths))} "
            f'(add your own with {_SETTING} = ["folder"], or give a .toml file\'s path)'
        )
    return paths[text.lower()]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_utf8(path))
    except NotUtf8 as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read framework file {path} ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}): fix the line it names") from None


def _parse(path: Path, raw: dict[str, Any], known: frozenset[str]) -> FrameworkFile:
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(unknown)}; a framework file holds "
            f"{', '.join(sorted(_TOP_KEYS))}"
        )
    if raw.get("id") != path.stem:
        raise ConfigError(
            f'{path}: its id must be its file name, id = "{path.stem}" (found {raw.get("id")!r})'
        )
    title = _text(raw, "title", f"{path}")
    version = str(raw.get("version", ""))
    entries = raw.get("requirements")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[requirements]]: add one per requirement, with its checks")
    requirements: list[Requirement] = []
    for entry in entries:
        requirement = _requirement(path, entry, known)
        if any(r.id == requirement.id for r in requirements):
            raise ConfigError(
                f"{path}: requirement {requirement.id} is listed twice; merge its checks into "
                "one [[requirements]] entry"
            )
        requirements.append(requirement)
    framework = Framework(raw["id"], title, version, tuple(requirements))
    return FrameworkFile(
        framework, path, _unmapped(path, raw.get("unmapped", []), framework, known)
    )


def _requirement(path: Path, entry: object, known: frozenset[str]) -> Requirement:
    if not isinstance(entry, dict) or set(entry) - {"id", "title", "checks"}:
        raise ConfigError(
            f"{path}: each [[requirements]] holds id, title and [[requirements.checks]] only"
        )
    requirement_id = _text(entry, "id", f"{path}: a requirement")
    where = f"{path}: requirement {requirement_id}"
    title = _text(entry, "title", where)
    items = entry.get("checks", [])
    mappings: list[Mapping] = []
    for item in items if isinstance(items, list) else [items]:
        if not isinstance(item, dict) or set(item) != {"check", "why"}:
            raise ConfigError(
                f"{where}: each [[requirements.checks]] needs check (an id) and why (a "
                "sentence saying why the check is evidence for the requirement), nothing else"
            )
        check_id = _text(item, "check", where)
        why = _text(item, "why", f"{where}, check {check_id}")
        if check_id not in known:
            raise ConfigError(
                f"{where} maps check {check_id}, which no check has: fix the id "
                "(`platform-audit checks` lists them), or add the folder that holds it to "
                "[audit] checks"
            )
        if any(m.check_id == check_id for m in mappings):
            raise ConfigError(f"{where} maps check {check_id} twice; keep one")
        mappings.append(Mapping(check_id, why))
    if not mappings:
        raise ConfigError(f"{where} maps no check: add [[requirements.checks]] or remove it")
    return Requirement(requirement_id, title, tuple(mappings))


def _unmapped(
    path: Path, entries: object, framework: Framework, known: frozenset[str]
) -> dict[str, str]:
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: unmapped must be [[unmapped]] entries (check, reason)")
    unmapped: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"check", "reason"}:
            raise ConfigError(f"{path}: each [[unmapped]] needs check and reason, nothing else")
        check_id = _text(entry, "check", f"{path}: [[unmapped]]")
        where = f"{path}: [[unmapped]] {check_id}"
        reason = _text(entry, "reason", where)
        if check_id not in known:
            raise ConfigError(f"{where} names no check: fix the id or remove the entry")
        if framework.requirements_of(check_id) or check_id in unmapped:
            raise ConfigError(
                f"{where} is also mapped (or listed twice) in this file; keep one of them"
            )
        unmapped[check_id] = reason
    return unmapped


def _text(table: MappingOf[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{where}: {key} must be non-empty text, e.g. {key} = "..."')
    return value.strip()
