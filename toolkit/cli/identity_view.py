"""``platform-audit check``'s answer on the terminal: who the credential is, what it may
reach, when it expires. Every value from the platform is rendered as plain text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from toolkit.collect.identity import Identity
    from toolkit.pipeline.identity_probe import IdentityOutcome

__all__ = ["describe_identity"]


def describe_identity(outcome: IdentityOutcome, *, now: datetime | None = None) -> RenderableType:
    """A table for the terminal; every value from the platform is rendered as plain text."""
    ident = outcome.identity
    assert ident is not None, "describe_identity needs a successful outcome"
    now = now or datetime.now(UTC)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    rows: list[tuple[str, str]] = [
        ("platform", outcome.base_url),
        ("credential", outcome.credential),
        (
            "user",
            " ".join(x for x in (ident.user_name, f"<{ident.email}>" if ident.email else None) if x)
            or "?",
        ),
    ]
    if not ident.is_api_key:
        rows.append(("kind", "access token (not an API key): acts with the user's full rights"))
    else:
        rows += [
            ("kind", f"API key {ident.key_name or '?'}"),
            ("role", ident.role or "unknown"),
            ("access", _access_text(ident)),
            ("expires", _expiry_text(ident, now)),
            ("last used", _last_use_text(ident)),
        ]
    for label, value in rows:
        table.add_row(label, Text(value))
    notes = [Text(f"note: {p}", style="yellow") for p in ident.problems]
    return Group(Text("The credential works.", style="green"), table, *notes)


def _access_text(ident: Identity) -> str:
    if ident.access == "all":
        return "everything its creator can access"
    if not ident.resources:
        return ident.access or "unknown"
    return "limited to " + ", ".join(f"{kind} {ident_}" for kind, ident_ in ident.resources)


def _unreadable(ident: Identity, member: str) -> bool:
    return any(p.startswith(f"api_key.{member} ") for p in ident.problems)


def _last_use_text(ident: Identity) -> str:
    if ident.last_used_at is not None:
        return ident.last_used_at.isoformat()
    return "unknown (see the note below)" if _unreadable(ident, "last_used_at") else "never"


def _expiry_text(ident: Identity, now: datetime) -> str:
    expires_at = ident.expires_at
    if expires_at is None and _unreadable(ident, "expires_at"):
        return "unknown (see the note below)"
    if expires_at is None:
        return "never (consider a key that expires)"
    days = (expires_at - now).days
    if days < 0:
        return f"{expires_at.isoformat()} (expired)"
    return f"{expires_at.isoformat()} (in {days} days)"
