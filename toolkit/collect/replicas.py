"""Replicas (pods), their aggregated health, and the events they carry.

`/replicas/list` answers for a whole environment at once (its items carry the ids of their
service and ancestors), so the crawl asks once per environment, not once per service.
`/replicas/health` exists per service only and gives the expected count and the overall
health.

>>> rows = map_replica_list(client.list_replicas("environment", team_id=t,   # doctest: +SKIP
...                         project_id=p, environment_id=e), owner=Owner(t, p, e))
>>> rows = map_replica_health(client.replica_health(t, p, e, s),            # doctest: +SKIP
...                           owner=Owner(t, p, e, s))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields
from toolkit.collect.duplicate_keys import drop_duplicates
from toolkit.collect.replica_events import event_rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["HEALTH_ENDPOINT", "LIST_ENDPOINT", "map_replica_health", "map_replica_list"]

LIST_ENDPOINT = "replicas.list"
HEALTH_ENDPOINT = "replicas.health"
_POD = ("runtime_name", "status", "restart_count", "pod_created_at")
_IDS = ("team_id", "project_id", "environment_id", "service_id")


def map_replica_list(payload: Sequence[dict[str, Any]], *, owner: Owner) -> Rows:
    """`/replicas/list` at any level -> `replicas` and `replica_events` rows.

    Ids an item carries fill what `owner` (the level asked for) leaves open.
    """
    conformer = Conformer(LIST_ENDPOINT, owner)
    out: Rows = {"replicas": [], "replica_events": []}
    for item in payload:
        asked = owner.columns()
        ids = {k: asked[k] or item.get(k) for k in _IDS}
        pod_owner = Owner(**{k: v if isinstance(v, str) else None for k, v in ids.items()})
        _pod(conformer, item, pod_owner, out, known=(*_POD, *_IDS, "events"))
    return _settle(conformer, out)


def map_replica_health(payload: dict[str, Any], *, owner: Owner) -> Rows:
    """`/replicas/health` of one service -> `replica_health`, `replicas`, `replica_events`."""
    conformer = Conformer(HEALTH_ENDPOINT, owner)
    pods = conformer.objs(payload, "replicas", "replica_health")
    values = {
        **owner.columns(),
        "expected_replicas": payload.get("expected_replicas"),
        "health": payload.get("health"),
        "replica_count": len(pods),
        "extra": extra_json(unknown_fields(payload, ("expected_replicas", "health", "replicas"))),
    }
    out: Rows = {
        "replica_health": conformer.rows("replica_health", [values]),
        "replicas": [],
        "replica_events": [],
    }
    for pod in pods:
        _pod(conformer, pod, owner, out, known=(*_POD, "events"))
    return _settle(conformer, out)


def _settle(conformer: Conformer, out: Rows) -> Rows:
    """`out` with each replica once and the answer's errors: an answer lists a replica once
    (the crawl merges the same replica from `/replicas/list` and `/replicas/health`), so a
    repeated one keeps its first record and is a `duplicate_id` error."""
    out["replicas"], repeated = drop_duplicates("replicas", out["replicas"], (conformer.endpoint,))
    out["collection_errors"] = [*conformer.drift_rows(), *repeated]
    return out


def _pod(
    conformer: Conformer, item: dict[str, Any], owner: Owner, out: Rows, known: tuple[str, ...]
) -> None:
    values = {**owner.columns(), **{k: item.get(k) for k in _POD}}
    values["extra"] = extra_json(unknown_fields(item, known))
    row = conformer.row("replicas", values)
    if row is None:
        return
    out["replicas"].append(row)
    events = conformer.objs(item, "events", "replicas")
    out["replica_events"].extend(
        event_rows(conformer, events, owner, source="replica", replica_name=row["runtime_name"])
    )
