"""Snapshot ids: UUIDv7-style strings that sort by creation time (stdlib has none in 3.11).

The id's first 48 bits are the wall-clock milliseconds when the writer began, so ids sort
in creation order, and ``store gc`` can tell a long-abandoned write from one in progress.

>>> sid = new_snapshot_id()
>>> is_snapshot_id(sid)
True
"""

from __future__ import annotations

import re
import secrets
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolkit.errors import UnsafeIdError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["id_created_at", "id_list_literal", "is_snapshot_id", "new_snapshot_id", "require_id"]

_PATTERN = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")


def new_snapshot_id(now_ms: int | None = None) -> str:
    """A new UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version, 74 random bits."""
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= secrets.randbits(12) << 64
    value |= 0b10 << 62
    value |= secrets.randbits(62)
    return str(uuid.UUID(int=value))


def is_snapshot_id(value: object) -> bool:
    """Whether ``value`` is a lower-case UUIDv7 string, the only form the store writes."""
    return isinstance(value, str) and _PATTERN.match(value) is not None


def id_list_literal(values: Iterable[str]) -> str | None:
    """``'a', 'b'`` (``null`` for none): SQL literals for an ``in (...)`` list, or None if
    any value is not a snapshot id. Only ids of the strict pattern are ever written as SQL
    text; callers read other values from a table instead."""
    ids = list(values)
    if not all(is_snapshot_id(i) for i in ids):
        return None
    return ", ".join(f"'{i}'" for i in ids) or "null"


def require_id(value: object) -> str:
    """Return ``value`` if it is a snapshot id, else raise. Guards every SQL-ish predicate."""
    if not is_snapshot_id(value):
        raise UnsafeIdError(f"not a snapshot id (refused in a predicate): {value!r:.80}")
    assert isinstance(value, str)
    return value


def id_created_at(snapshot_id: str) -> datetime:
    """The wall-clock time embedded in a snapshot id."""
    ms = int(require_id(snapshot_id).replace("-", "")[:12], 16)
    return datetime.fromtimestamp(ms / 1000, tz=UTC)
