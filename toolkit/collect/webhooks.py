"""Webhooks of teams and projects, with their URLs redacted.

A webhook URL often carries a credential (userinfo, `?token=`, `?code=`, `;token=`, or a
token in the path as Slack, Discord and Teams do). It is stored without userinfo, with every
query value, path parameter value and token-like path segment masked (`redact_url`); the
scheme, host, port and the path's plain words stay for audits (plain http, private hosts),
and `has_credentials_in_url` says a secret was removed. A URL that cannot be parsed (a port
out of range, a broken IPv6 literal) is stored as `***` with only its scheme, and
`has_credentials_in_url` is null (unknown) unless its text shows userinfo.

>>> rows = map_webhooks(client.list_webhooks("team", team_id=t),        # doctest: +SKIP
...                     level="team", owner=Owner(t))
>>> rows["webhooks"][0]["url"]                                          # doctest: +SKIP
'https://hooks.example.org/in?token=***'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields
from toolkit.collect.webhook_address import host_address
from toolkit.snapshot.redaction import MASK, redact_url

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Row, Rows

__all__ = ["ENDPOINT", "map_webhooks"]

ENDPOINT = "webhooks.list"
_KNOWN = ("id", "type", "team_id", "project_id", "url", "events", "created_at")


def map_webhooks(payload: Sequence[dict[str, Any]], *, level: str, owner: Owner) -> Rows:
    """`/webhooks/list?type=level` -> `webhooks` and `webhook_events` rows."""
    conformer = Conformer(ENDPOINT, owner)
    hooks: list[Row] = []
    events: list[dict[str, Any]] = []
    for item in payload:
        row = conformer.row("webhooks", _values(conformer, item, level, owner))
        if row is None:
            continue
        hooks.append(row)
        ids = {"team_id": row["team_id"], "project_id": row["project_id"]}
        events.extend(
            {"webhook_id": row["id"], **ids, "event": event} for event in row["events"] or []
        )
    return {
        "webhooks": hooks,
        "webhook_events": conformer.rows("webhook_events", events),
        "collection_errors": conformer.drift_rows(),
    }


def _values(conformer: Conformer, item: dict[str, Any], level: str, owner: Owner) -> dict[str, Any]:
    raw_url = item.get("url")
    if raw_url is not None and not isinstance(raw_url, str):
        conformer.note("webhooks", "url", raw_url)
        raw_url = None
    url = redact_url(raw_url) if raw_url is not None else None
    address = host_address(url.host) if url and url.host else None
    project_id = item.get("project_id") if level == "project" else None
    return {
        "id": item.get("id"),
        "team_id": owner.team_id or item.get("team_id"),
        "project_id": owner.project_id or project_id,
        "type": item.get("type"),
        # a URL too broken to redact is there all the same: stored masked whole, so WEB002
        # tells it (has_credentials_in_url unknown) from a webhook without one
        "url": (url.url or MASK) if url else None,
        "url_scheme": url.scheme if url else None,
        "url_host": url.host if url else None,
        "url_port": url.port if url else None,
        "url_address": address.address if address else None,
        "url_address_kind": address.kind if address else None,
        "has_credentials_in_url": url.has_credentials if url else None,
        "events": item.get("events"),
        "created_at": item.get("created_at"),
        "extra": extra_json(unknown_fields(item, _KNOWN)),
    }
