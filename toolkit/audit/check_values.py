"""Which values configuration may give a check's parameter (``[checks.ID] name = value``).

The kind of a parameter's default decides what it accepts, so that a setting DuckDB cannot
use, or one that silently changes what the check means, is refused here with the setting
and the config file named, not mid-audit with the built-in check's file blamed::

    checked_value("KEY006", param, 7.5, "platform-audit.toml")
    # CheckDefinitionError: platform-audit.toml: [checks.KEY006] max_idle_days = 7.5 ...

- a number default takes a finite number (``nan`` and ``inf`` never compare true, so the
  check would never alarm); one whose default is positive takes no negative number;
- a whole-number default takes a whole number (``7.0`` reads as 7) of at most
  :data:`MAX_WHOLE` (DuckDB's day counts and intervals overflow beyond);
- a default written ``{NAME}`` is one of :data:`SHARED_DEFAULTS`, defined once in code;
- a text default takes text; a regular expression (:attr:`CheckParam.regex`) must compile
  as DuckDB's RE2 reads it and may not be empty (it would match every name); a comma list
  (:attr:`CheckParam.listed`) may hold no empty item.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from types import MappingProxyType

from toolkit.errors import CheckDefinitionError
from toolkit.snapshot.secret_names import NOT_SECRET_NAMES, SECRET_NAMES

__all__ = [
    "MAX_WHOLE",
    "MOVED_PARAMS",
    "SHARED_DEFAULTS",
    "CheckParam",
    "checked_value",
    "regex_problem",
    "shared_default",
]

MAX_WHOLE = 10_000_000
"""The largest whole-number threshold: ten million days is 27,000 years, and DuckDB's dates
overflow at about a hundred million days."""
SHARED_DEFAULTS = MappingProxyType(
    {"SECRET_NAMES": ",".join(SECRET_NAMES), "NOT_SECRET_NAMES": ",".join(NOT_SECRET_NAMES)}
)
"""Defaults defined once in code and named in a header as ``{NAME}`` (``-- param:
secret_names = {SECRET_NAMES} | ...``): what a secret's name is, which the free-text
scrubber reads too (:mod:`toolkit.snapshot.secret_names`)."""
_SHARED = re.compile(r"\{(?P<name>[A-Z_]+)\}")


def shared_default(raw: str, param: str) -> str:
    """A header's default as written, or the shared default its ``{NAME}`` names; ``param``
    (``<file>: param <name>``) names it in the error for a name that is not one."""
    shared = _SHARED.fullmatch(raw)
    if shared is None:
        return raw
    if shared["name"] not in SHARED_DEFAULTS:
        known = ", ".join(f"{{{name}}}" for name in SHARED_DEFAULTS)
        raise CheckDefinitionError(
            f"{param} defaults to {raw}, which names no shared default; use one of {known} "
            "or write the value"
        )
    return SHARED_DEFAULTS[shared["name"]]


MOVED_PARAMS = {
    ("REP004", "env_pattern"): (
        "[audit] production_pattern, which REP004, KEY003 and VAR007 all read"
    ),
}
"""Parameters a built-in check no longer takes, and the setting that took their place."""


@dataclass(frozen=True)
class CheckParam:
    """A threshold the SQL reads as ``$name``; configuration may override the default.

    How the SQL reads a text parameter decides which values configuration may give it:
    ``regex`` when a line passes it to a ``regexp_`` function (the value must compile, as
    DuckDB's RE2 reads it, and not be empty, which would match every name); ``listed``
    when the SQL splits it on commas (no item may be empty); both when it goes to a macro
    of :func:`_regex_list_macros`."""

    name: str
    default: int | float | str
    doc: str
    regex: bool = False
    listed: bool = False


def checked_value(check_id: str, param: CheckParam, value: object, where: str) -> object:
    """``value`` as DuckDB receives it, or a :class:`CheckDefinitionError` that names
    ``[checks.ID] name`` and ``where`` (the config file) and says what to write."""
    setting = f"{where}: [checks.{check_id}] {param.name} = {_shown(value)}"
    default = param.default
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            fix = "not true or false" if isinstance(value, bool) else "without quotes"
            raise CheckDefinitionError(
                f"{setting}, but {check_id} reads it as a number (default {default}): "
                f"write a number, {fix}"
            )
        return _number(setting, check_id, default, value)
    if not isinstance(value, str):
        raise CheckDefinitionError(
            f"{setting}, but {check_id} reads it as text (default {_shown(default)}): "
            "write it in quotes"
        )
    return _text(setting, check_id, param, value)


def _number(setting: str, check_id: str, default: int | float, value: int | float) -> int | float:
    if not math.isfinite(value):
        raise CheckDefinitionError(
            f"{setting} is not a finite number, and no value compares with it (the check "
            f"would never alarm): write a number such as {default}"
        )
    if default > 0 and value < 0:
        raise CheckDefinitionError(
            f"{setting} is negative, but {check_id} counts it from 0 up (default {default}): "
            "write 0 or more"
        )
    if isinstance(default, float):
        return value
    if value != int(value):
        raise CheckDefinitionError(
            f"{setting}, but {check_id} reads a whole number (default {default}): write one "
            "without a fraction"
        )
    if abs(value) > MAX_WHOLE:
        raise CheckDefinitionError(
            f"{setting} is too large: write a whole number up to {MAX_WHOLE} (default {default})"
        )
    return int(value)


def _text(setting: str, check_id: str, param: CheckParam, value: str) -> str:
    items = value.split(",") if param.listed else [value]
    if any(not item.strip() for item in items):
        empty = "an empty item" if param.listed and value.strip() else "nothing"
        what = " (an empty pattern matches every name)" if param.regex else ""
        raise CheckDefinitionError(
            f"{setting} holds {empty}{what}: give {_kind(param)} (default "
            f"{_shown(param.default)}); to run without {check_id}, add it to [audit] skip"
        )
    if param.regex:
        for item in items:
            problem = regex_problem(item)
            if problem is not None:
                raise CheckDefinitionError(
                    f"{setting}: {_shown(item)} is not a regular expression DuckDB reads "
                    f"({problem}); fix it (RE2 syntax: no look-around, no back-references)"
                )
    return value


def _kind(param: CheckParam) -> str:
    if param.regex:
        return "comma-separated regular expressions" if param.listed else "a regular expression"
    return "comma-separated names" if param.listed else "some text"


def regex_problem(pattern: str) -> str | None:
    """DuckDB's own complaint about ``pattern`` (RE2 differs from Python's ``re``)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("select regexp_matches('', $pattern)", {"pattern": pattern})
    except duckdb.Error as exc:
        return str(exc).removeprefix("Invalid Input Error: ")
    finally:
        con.close()
    return None


def _shown(value: object) -> str:
    """A value as the config file writes it (``true``, ``"text"``), not as Python's repr."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf, -inf: as TOML writes them
    return json.dumps(value)
