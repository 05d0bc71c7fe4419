"""Reading request fields with the `validation_error` details of spec part 7, rule 2.

A `Fields` reads one location (`query` or `body`), collects every problem instead of
stopping at the first, and `done()` raises one 422 naming them all:

    fields = Fields(request.query_params, "query")
    team_id = fields.uuid("team_id")
    fields.done()
    # 422: expected required property team_id to be present (query.team_id: undefined)
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolkit.sim.errors import validation_failed

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LEVELS", "Fields"]

LEVELS = ("team", "project", "environment", "service")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,255}$")


class Fields:
    """Typed access to one location's fields; problems are kept, not raised, until `done`."""

    def __init__(self, source: Mapping[str, Any], location: str) -> None:
        self._source = source
        self._location = location
        self.problems: list[str] = []

    def _where(self, name: str) -> str:
        return f"{self._location}.{name}"

    def _missing(self, name: str, where: str | None = None) -> None:
        where = where or self._where(name)
        self.problems.append(
            f"expected required property {name} to be present ({where}: undefined)"
        )

    def _invalid(self, name: str, expected: str, value: Any, where: str | None = None) -> None:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        where = where or self._where(name)
        self.problems.append(f"expected property {name} to be {expected} ({where}: {shown})")

    def has(self, name: str) -> bool:
        return self._source.get(name) is not None

    def uuid(self, name: str, required: bool = True) -> str:
        """A UUID string, lower-cased; '' when absent (and allowed) or invalid."""
        value = self._source.get(name)
        if value is None:
            if required:
                self._missing(name)
            return ""
        if not isinstance(value, str) or not _UUID.match(value):
            self._invalid(name, "a valid uuid", value)
            return ""
        return value.lower()

    def choice(self, name: str, allowed: tuple[str, ...]) -> str:
        """One of `allowed`; '' when missing or not allowed."""
        value = self._source.get(name)
        if value is None:
            self._missing(name)
            return ""
        if value not in allowed:
            self._invalid(name, f"one of {', '.join(allowed)}", value)
            return ""
        return str(value)

    def integer(self, name: str, low: int, high: int, default: int) -> int:
        value = self._source.get(name)
        if value is None:
            return default
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = low - 1
        if isinstance(value, bool) or not low <= number <= high:
            self._invalid(name, f"an integer from {low} to {high}", value)
            return default
        return number

    def timestamp(self, name: str) -> datetime | None:
        value = self._source.get(name)
        if value is None or value == "":
            return None
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            # normalise to UTC now: an offset at the edge of the calendar overflows here,
            # not later in a comparison
            return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        except (ValueError, OverflowError):
            self._invalid(name, "an ISO 8601 timestamp", value)
            return None

    def variable_items(self, name: str, with_value: bool) -> list[tuple[str, str]]:
        """`[{name, value?}]` as (name, value) pairs; value is '' when not asked for."""
        items = self._source.get(name)
        if items is None:
            self._missing(name)
            return []
        if not isinstance(items, list) or not items:
            self._invalid(name, "a non-empty array of objects", items)
            return []
        pairs = []
        for index, item in enumerate(items):
            where = f"{self._where(name)}[{index}]"
            if not isinstance(item, dict):
                self._invalid(name, "an array of objects", item, where)
                continue
            var_name, value = item.get("name"), item.get("value", "")
            if var_name is None:
                self._missing("name", f"{where}.name")
            elif not isinstance(var_name, str) or not _NAME.match(var_name):
                self._invalid("name", "a variable name like API_KEY", var_name, f"{where}.name")
            if with_value and "value" not in item:
                self._missing("value", f"{where}.value")
            elif with_value and not isinstance(value, str):
                self._invalid("value", "a string", value, f"{where}.value")
            if isinstance(var_name, str) and isinstance(value, str):
                pairs.append((var_name, value))
        return pairs

    def done(self) -> None:
        """Raise one 422 with every problem found so far."""
        if self.problems:
            raise validation_failed(self.problems)
