"""Deployments: the history of each service, newest first, and the events they carry.

`/deployments/list` pages through a service's history with a cursor; the crawl follows it
up to a configurable depth (default 20 per service). The three deployment records of a
service (current, last, last successful) come with the service list and land in the same
table; the crawl merges a deployment seen in both on its id.

>>> page = client.list_deployments(t, p, e, s, per_page=20)      # doctest: +SKIP
>>> rows = map_deployment_page(page.deployments, owner=Owner(t, p, e, s))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields
from toolkit.collect.duplicate_keys import drop_duplicates
from toolkit.collect.replica_events import event_rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Row, Rows

__all__ = ["ENDPOINT", "deployment_rows", "map_deployment_page"]

ENDPOINT = "deployments.list"

_COLUMNS = (
    "id",
    "status",
    "status_message",
    "attempts",
    "builder",
    "image",
    "git_branch",
    "commit_sha",
    "commit_message",
    "job_name",
    "run_command",
    "error",
    "created_at",
    "queued_at",
    "started_at",
    "completed_at",
    "updated_at",
    "crashing_reasons",
    "replica_restarts",
)
# Spec 2.4 members that are known but not stored as columns (build settings, the avatar).
_KNOWN = (
    *_COLUMNS,
    "service_id",
    "commit_author",
    "replica_events",
    "container_builder_build_context",
    "container_builder_dockerfile_path",
    "buildpack_builder_build_command",
    "buildpack_builder_install_command",
)


def deployment_rows(
    conformer: Conformer,
    record: dict[str, Any],
    owner: Owner,
    *,
    history_rank: int | None = None,
    flags: dict[str, bool | None] | None = None,
) -> Rows:
    """`deployments` and `replica_events` rows of one deployment record.

    `flags` sets `is_current`, `is_last` and `is_last_successful` when they are known.
    """
    author = conformer.obj(record, "commit_author", "deployments")
    values: dict[str, Any] = {key: record.get(key) for key in _COLUMNS}
    values.update(owner.columns())
    values.update(flags or {})
    values["commit_author_name"] = author.get("name")
    values["history_rank"] = history_rank
    values["extra"] = extra_json(unknown_fields(record, _KNOWN))
    row = conformer.row("deployments", values)
    events: list[Row] = []
    if row is not None:
        found = conformer.objs(record, "replica_events", "deployments")
        events = event_rows(conformer, found, owner, source="deployment", deployment_id=row["id"])
    return {"deployments": [row] if row else [], "replica_events": events}


def map_deployment_page(
    deployments: Sequence[dict[str, Any]],
    *,
    owner: Owner,
    current_id: str | None = None,
    first_rank: int = 0,
) -> Rows:
    """One page of `/deployments/list` -> `deployments` and `replica_events` rows.

    `first_rank` is the history rank of the page's first item (0 on the first page);
    `current_id` is the id of the page's `current_deployment`. A page lists a deployment
    once: a repeated id keeps its first record and is a `duplicate_id` error.
    """
    conformer = Conformer(ENDPOINT, owner)
    out: Rows = {"deployments": [], "replica_events": []}
    for record in deployments:
        flags: dict[str, bool | None] = {}
        if current_id is not None:
            flags["is_current"] = record.get("id") == current_id
        rows = deployment_rows(conformer, record, owner, flags=flags)
        for table, found in rows.items():
            out[table].extend(found)
    kept, repeated = drop_duplicates("deployments", out["deployments"], (ENDPOINT,))
    out["deployments"] = kept
    for rank, row in enumerate(kept, start=first_rank):
        row["history_rank"] = rank
    out["collection_errors"] = [*conformer.drift_rows(), *repeated]
    return out
