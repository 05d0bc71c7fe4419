"""Key-scope exposure over a period, per audited credential, from the snapshots' own tables.

Per snapshot: the credential's role and expiry (``credentials``), how many services it can
read the configuration of (the ``credential_reach`` view, as the report's reach trend), and
in verified mode whether a probe saw it reach what its claimed scope excludes
(``credential_probes``: ``observed_visible`` and not ``expected_visible``). As for findings
(:mod:`toolkit.review.timeline`), a snapshot's state holds until the next snapshot; a
partial snapshot without the credential's row carries the state before it. An API key
"never expires" when it has no expiry and ``/users/me`` reported none (an expiry it could
not read is KEY008's, not this). Example::

    keys = key_exposure(con, moments, period.start, ends_at)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.review.figures import KeyExposure
from toolkit.review.timeline import DAY_SECONDS, seconds_true

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    import duckdb

    from toolkit.review.observations import Moment

__all__ = ["key_exposure"]

_PER_SNAPSHOT = r"""
with creds as (
    select snapshot_id, name as credential, any_value(key_name) as key_name,
        any_value(role) as role, bool_or(role = 'admin') as admin,
        bool_or(coalesce(is_api_key, false) and expires_at is null and coalesce(len(list_filter(
            problems, lambda p: regexp_matches(p, '^api_key(\.expires_at)? '))), 0) = 0)
            as never_expiring
    from credentials group by all
),
reach as (
    select snapshot_id, credential_name as credential,
        count(*) filter (where resource_type = 'service' and can_read_config) as services
    from credential_reach group by all
),
probes as (
    select snapshot_id, credential_name as credential,
        bool_or(coalesce(observed_visible, false) and expected_visible = false) as exceeded
    from credential_probes group by all
)
select c.*, coalesce(r.services, 0) as services, p.exceeded
from creds c
left join reach r using (snapshot_id, credential)
left join probes p using (snapshot_id, credential)
order by credential
"""


def key_exposure(
    con: duckdb.DuckDBPyConnection, moments: Sequence[Moment], start: datetime, end: datetime
) -> list[KeyExposure]:
    """Each credential's exposure over ``[start, end)``; ``con`` has the store's views and
    the audit's derived ones (:func:`toolkit.audit.ensure_views`)."""
    cursor = con.execute(_PER_SNAPSHOT)
    names = [d[0] for d in cursor.description]
    per_key: dict[str, dict[str, dict[str, Any]]] = {}
    for row in cursor.fetchall():
        record = dict(zip(names, row, strict=True))
        per_key.setdefault(record["credential"], {})[record["snapshot_id"]] = record
    return [_exposure(name, rows, moments, start, end) for name, rows in sorted(per_key.items())]


def _exposure(
    name: str,
    rows: dict[str, dict[str, Any]],
    moments: Sequence[Moment],
    start: datetime,
    end: datetime,
) -> KeyExposure:
    states: list[dict[str, Any] | None] = []
    for moment in moments:
        row = rows.get(moment.snapshot_id)
        if row is None and moment.status == "partial" and states:
            row = states[-1]  # not collected there: as it was
        states.append(row)
    times = [m.snapshot_at for m in moments]
    in_force = [
        i
        for i, at in enumerate(times)
        if at < end and (i + 1 == len(times) or times[i + 1] > start)
    ]

    def days(test: Any) -> float:
        flags = [s is not None and bool(test(s)) for s in states]
        return seconds_true(times, flags, start, end) / DAY_SECONDS

    shown = [s for s in (states[i] for i in in_force) if s is not None]
    probed = any(s["exceeded"] is not None for s in shown)
    return KeyExposure(
        credential=name,
        key_name=shown[-1]["key_name"] if shown else None,
        role=shown[-1]["role"] if shown else None,
        largest_reach=max((int(s["services"]) for s in shown), default=0),
        admin_days=days(lambda s: s["admin"]),
        never_expiring_days=days(lambda s: s["never_expiring"]),
        exposed_days=days(lambda s: s["admin"] or s["never_expiring"]),
        exceeded_days=days(lambda s: s["exceeded"]) if probed else None,
    )
