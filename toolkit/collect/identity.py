"""Who a credential is: ``/users/me`` parsed leniently.

The shape of ``/users/me`` is an assumption (``docs/spec/api-facts.md``), so the parser never
guesses: what it cannot read it reports in ``problems``, and the audit says so plainly instead of
crashing. Example::

    identity = parse_identity(client.me())
    identity.role, identity.access, identity.resources, identity.problems
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

__all__ = ["Identity", "parse_identity"]

_ROLES = ("viewer", "editor", "admin")
_LEVELS = ("team", "project", "environment", "service")


@dataclass(frozen=True, kw_only=True)
class Identity:
    """The calling user and, for an API key, its role and limits."""

    user_id: str | None
    user_name: str | None
    email: str | None
    is_api_key: bool
    key_id: str | None = None
    key_name: str | None = None
    role: str | None = None
    access: str | None = None
    resources: tuple[tuple[str, str], ...] = ()
    created_at: datetime | None = None
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    problems: tuple[str, ...] = field(default=())


def _text(record: Mapping[str, Any], key: str, problems: list[str], where: str) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    problems.append(f"{where}.{key} should be a string, got {type(value).__name__}")
    return None


def _time(
    record: Mapping[str, Any], key: str, problems: list[str], where: str, *, cannot_tell: str
) -> datetime | None:
    """A time member or None for an explicit null; an absent member is a problem, not a null.

    The key-scope checks read a problem that starts with ``api_key.<member>`` as "cannot
    tell" (KEY008 reports it), so an absent or unreadable time is never taken for "never".
    """
    if key not in record:
        problems.append(f"{where}.{key} is missing; cannot tell {cannot_tell}")
        return None
    value = _text(record, key, problems, where)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        problems.append(f"{where}.{key} is not an ISO 8601 time: {value[:40]!r}")
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_identity(payload: object) -> Identity:
    """Read the ``data`` of ``/users/me``; anything unexpected becomes a ``problems`` entry."""
    problems: list[str] = []
    me: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    if not isinstance(payload, Mapping):
        problems.append(f"/users/me answered {type(payload).__name__}, not an object")
    key = me.get("api_key")
    user = partial(
        Identity,
        user_id=_text(me, "id", problems, "user"),
        user_name=_text(me, "name", problems, "user"),
        email=_text(me, "email", problems, "user"),
    )
    if key is None:
        if "api_key" not in me:
            problems.append("/users/me has no api_key member; cannot tell the key's role or scope")
        return user(is_api_key=False, problems=tuple(problems))
    if not isinstance(key, Mapping):
        problems.append(f"api_key should be an object or null, got {type(key).__name__}")
        return user(is_api_key=True, problems=tuple(problems))
    role = _text(key, "role", problems, "api_key")
    if role is not None and role not in _ROLES:
        problems.append(f"api_key.role {role!r} is not one of {', '.join(_ROLES)}")
    access = _text(key, "access", problems, "api_key")
    if access is not None and access not in ("all", "limited"):
        problems.append(f"api_key.access {access!r} is neither 'all' nor 'limited'")
    return user(
        is_api_key=True,
        key_id=_text(key, "id", problems, "api_key"),
        key_name=_text(key, "name", problems, "api_key"),
        role=role,
        access=access,
        resources=_resources(key.get("resources"), problems),
        created_at=_created_at(key, problems),
        # spec 2.11: a key expires "from 1 day to 1 year, or never", and shows its last use:
        # an explicit null is "never" (expires, used), an absent member is "cannot tell"
        expires_at=_time(key, "expires_at", problems, "api_key", cannot_tell="when it expires"),
        last_used_at=_time(
            key, "last_used_at", problems, "api_key", cannot_tell="when it was last used"
        ),
        problems=tuple(problems),
    )


def _created_at(key: Mapping[str, Any], problems: list[str]) -> datetime | None:
    """Every key was created at some time: unlike the other times, null has no meaning."""
    created = _time(key, "created_at", problems, "api_key", cannot_tell="the key's age")
    if key.get("created_at", "") is None:
        problems.append("api_key.created_at is null; cannot tell the key's age")
    return created


def _resources(value: object, problems: list[str]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(f"api_key.resources should be a list, got {type(value).__name__}")
        return ()
    found: list[tuple[str, str]] = []
    for item in value:
        kind = item.get("type") if isinstance(item, Mapping) else None
        ident = item.get("id") if isinstance(item, Mapping) else None
        if isinstance(kind, str) and isinstance(ident, str):
            if kind not in _LEVELS:
                problems.append(f"api_key.resources has an unknown type {kind!r}")
            found.append((kind, ident))
        else:
            problems.append(f"api_key.resources has an entry without type and id: {str(item)[:60]}")
    return tuple(found)
