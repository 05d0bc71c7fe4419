"""How a record becomes a row of a declared table: each column's converter, and plans
worked out once per shape of record rather than once per row.

A column's converter takes a non-null value to the Python value of the column's Arrow type,
strings through the masking rule of the column's kind (`toolkit.snapshot.column_masking`),
or answers `WRONG`. `Conformer.row` (`toolkit.collect.conform`) asks `fast_row` first: the
types of a record's values (its *shape*) say which columns need converting, and which
converter, once for every record of that shape; a record with a required column missing, or
a value its converter refuses, takes the column-by-column path that reports the drift.

A string that a masking rule leaves unchanged (most ids, names, statuses) is remembered,
up to `_KEPT_LIMIT` per rule, and not looked at again: only strings that are stored as
they are, so nothing held here is more than the snapshot keeps.

>>> fast_row("teams", {"id": "t1", "name": "core"})
{'id': 't1', 'name': 'core', 'description': None, 'created_at': None, 'extra': None}
>>> fast_row("teams", {"id": "t1", "name": 42}) is None  # drift: the slow path reports it
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.snapshot.column_masking import Rule, masker
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID, Kind
from toolkit.snapshot.schema_tables import TABLES

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["WRONG", "Column", "columns", "fast_row"]

WRONG = object()
"""What a converter answers for a value its column cannot hold."""

Convert = Callable[[Any], Any]
Column = tuple[str, type | None, Convert, bool]
"""(name, exact Python type or None, converter, nullable) of a declared column."""
_Masked = tuple[int, set[str], Rule]
_Converted = tuple[int, Convert]

_SHAPES_LIMIT = 1_024  # plans kept per table; a server changing shapes forever starts over
_KEPT_LIMIT = 4_096  # unchanged strings remembered per masking rule
_KEPT_LENGTH = 128  # longer strings (free text) are not remembered


@functools.cache
def columns(table: str) -> tuple[tuple[Column, ...], frozenset[str]]:
    """Each declared column's (name, exact type, converter, nullable), and every name.

    Worked out once per table. A value whose type is exactly the column's Python type
    (`str`, `bool`, `int`, `float`) is its own conversion and skips the converter, unless
    the column's kind masks it (every string column a server writes): such a column has no
    exact type.
    """
    declared = TABLES[table]
    found = tuple(
        (
            column.name,
            None if masker(column.kind) is not None else _exact_type(column.type),
            _converter(column.type, mask=_rule(column.kind)),
            column.nullable,
        )
        for column in declared.columns
        if column.name not in (SNAPSHOT_ID, SNAPSHOT_AT)
    )
    return found, frozenset(declared.arrow_schema.names)


class _Plan:
    """What a record of one shape needs: the strings to mask, as (position, the strings
    its rule keeps, the rule), and the other values to convert, as (position, converter)."""

    __slots__ = ("others", "strings")

    def __init__(
        self,
        strings: tuple[tuple[int, set[str], Rule], ...],
        others: tuple[tuple[int, Convert], ...],
    ) -> None:
        self.strings = strings
        self.others = others


class _Plans:
    """The plans of one table, per shape (the type of each column's value)."""

    def __init__(self, table: str) -> None:
        self.columns, _ = columns(table)
        self.names = tuple(name for name, *_ in self.columns)
        # The rule a string column's string goes through, called without the converter's
        # isinstance (the shape says it is a str); None for columns of other types.
        self.masks = tuple(
            _remembering(masker(column.kind)) if pa.types.is_string(column.type) else None
            for column in TABLES[table].columns
            if column.name not in (SNAPSHOT_ID, SNAPSHOT_AT)
        )
        self.plans: dict[tuple[type, ...], _Plan | None] = {}

    def plan(self, shape: tuple[type, ...]) -> _Plan | None:
        """What a record of `shape` needs; None when a required column is null (the record
        is dropped, and the column-by-column path says why)."""
        if shape in self.plans:
            return self.plans[shape]
        if len(self.plans) >= _SHAPES_LIMIT:
            self.plans.clear()
        strings: list[_Masked] = []
        others: list[_Converted] = []
        plan: _Plan | None = None
        for i, ((_name, exact, convert, nullable), kind) in enumerate(
            zip(self.columns, shape, strict=True)
        ):
            mask = self.masks[i]
            if kind is type(None):
                if not nullable:
                    break
            elif kind is str and mask is not None:
                strings.append((i, *mask))
            elif kind is not exact:
                others.append((i, convert))
        else:
            plan = _Plan(tuple(strings), tuple(others))
        self.plans[shape] = plan
        return plan


@functools.cache
def _plans(table: str) -> _Plans:
    return _Plans(table)


def fast_row(table: str, values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The row of `values` when no column drifts and no required one is missing, else None.

    `values` holds declared columns only (the caller checks).
    """
    plans = _plans(table)
    found: list[Any] = list(map(values.get, plans.names))
    plan = plans.plan(tuple(map(type, found)))
    if plan is None:
        return None
    for i, kept, mask in plan.strings:
        text = found[i]
        if text not in kept:
            found[i] = mask(text)
    for i, convert in plan.others:
        value = convert(found[i])
        if value is WRONG:
            return None
        found[i] = value
    return dict(zip(plans.names, found, strict=True))


@functools.cache
def _remembering(rule: Rule | None) -> tuple[set[str], Rule] | None:
    """The strings `rule` has left unchanged, and `rule` remembering them; None for no rule."""
    if rule is None:
        return None
    kept: set[str] = set()

    def masked(value: str) -> str:
        if value in kept:
            return value
        out = rule(value)
        if out == value and len(value) <= _KEPT_LENGTH:
            if len(kept) >= _KEPT_LIMIT:
                kept.clear()
            kept.add(value)
        return out

    return kept, masked


def _rule(kind: Kind | None) -> Rule | None:
    """The masking rule of `kind`, remembering the strings it keeps; None if it keeps all."""
    remembering = _remembering(masker(kind))
    return None if remembering is None else remembering[1]


def _exact_type(kind: pa.DataType) -> type | None:
    """The Python type whose values `_converter(kind)` returns unchanged; None if none."""
    if pa.types.is_string(kind):
        return str
    if pa.types.is_boolean(kind):
        return bool
    if pa.types.is_integer(kind):
        return int
    if pa.types.is_floating(kind):
        return float
    return None


def _converter(kind: pa.DataType, *, mask: Rule | None = None) -> Convert:
    """The function taking a non-null value to the Python value of Arrow type `kind`
    (strings through the masking rule `mask`, when there is one)."""
    if pa.types.is_string(kind) and mask is not None:
        return lambda value: mask(value) if isinstance(value, str) else WRONG
    if pa.types.is_string(kind):
        return lambda value: value if isinstance(value, str) else WRONG
    if pa.types.is_boolean(kind):
        return lambda value: value if isinstance(value, bool) else WRONG
    if pa.types.is_integer(kind):
        return _integer
    if pa.types.is_floating(kind):
        return _floating
    if pa.types.is_timestamp(kind):
        return _timestamp
    if pa.types.is_list(kind):
        return functools.partial(_list, _converter(kind.value_type, mask=mask))
    return lambda value: WRONG if isinstance(value, bool) else value


def _integer(value: Any) -> Any:
    if isinstance(value, bool):
        return WRONG
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else WRONG


def _floating(value: Any) -> Any:
    if isinstance(value, bool):
        return WRONG
    return float(value) if isinstance(value, int | float) else WRONG


def _list(item: Convert, value: Any) -> Any:
    if not isinstance(value, list):
        return WRONG
    items = [None if member is None else item(member) for member in value]
    return WRONG if any(member is WRONG for member in items) else items


def _timestamp(value: Any) -> Any:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        return WRONG
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return WRONG
    if parsed.tzinfo is UTC:  # "Z" or "+00:00": as most servers write their times
        return parsed
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
