"""What changed between two snapshots: services added, removed, changed or not collected,
and findings.

Services are compared on their flattened rows (every declared column but the snapshot
columns), so a changed service lists the fields that differ. A service missing from one
side only because that side's collection did not see it is not collected, neither removed
nor added, with why: the listing that covers it failed there (its environment's services
listing, or a teams, projects or environments listing above it: the failures the audit
engine counts as leaving ``services`` short, :data:`~toolkit.snapshot.coverage.ENDPOINT_TABLES`),
that listing answered 404 (the platform's answer for "does not exist, or the key cannot
see it"), or the collecting key was limited to resources none of which holds it. Findings
changes are the audit of the newer snapshot compared with the older one: new, regressed
and resolved, and those the newer snapshot did not observe (status ``unobserved``: the
engine keeps their last state).
Example::

    change = diff_snapshots(Store.open("data/store"))  # the newest, and the complete before
    change.added, change.removed, change.changed, change.not_collected, change.findings
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from toolkit.audit.check_run import ensure_views
from toolkit.audit.engine import AuditRequest, run_audit
from toolkit.audit.lifecycle import query_frame
from toolkit.audit.snapshots_chosen import ENDPOINT_TABLES, committed_snapshots, select_snapshots
from toolkit.errors import AuditError
from toolkit.snapshot import SNAPSHOT_AT, SNAPSHOT_ID, TABLES, Store

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Unpack

    import duckdb

    from toolkit.audit.engine import AuditFields
    from toolkit.audit.findings import SnapshotRef

__all__ = ["SnapshotDiff", "diff_snapshots"]


@dataclass(frozen=True, eq=False)
class SnapshotDiff:
    """Inventory and findings changes from ``before`` to ``after``.

    Service frames have ``id, name`` and the owners' ids and names (``team_id``,
    ``team_name``, ... ``environment_name``); ``changed`` adds ``changed_fields``.
    ``not_collected`` has the services missing from one side only because its collection
    did not see them, with ``missing_from`` (``"from"``: the older, ``"to"``: the newer)
    and ``why`` (``"a listing failed"``, a 404, or the collecting key's limits).
    ``findings`` are the audit's rows (:data:`~toolkit.audit.FINDING_COLUMNS`) that are not
    simply open; ``blind`` its ``check_id, snapshot_id`` of checks that could not see all
    they read in a partial snapshot.
    """

    before: SnapshotRef
    after: SnapshotRef
    added: pd.DataFrame
    removed: pd.DataFrame
    changed: pd.DataFrame
    not_collected: pd.DataFrame
    findings: pd.DataFrame
    blind: pd.DataFrame
    configured: tuple[str, ...] = ()
    """What the audit of the findings was configured with (``AuditResult.configured``)."""
    warnings: tuple[str, ...] = ()
    """What went wrong in that audit without changing it (``AuditResult.warnings``)."""
    tables_not_collected: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per partial side's snapshot id, the tables its failed calls left without a row
    (``AuditResult.not_collected``): outputs say "not collected", never 0."""

    @property
    def empty(self) -> bool:
        frames = (self.added, self.removed, self.changed, self.not_collected, self.findings)
        return all(f.empty for f in frames)

    @property
    def partial(self) -> tuple[SnapshotRef, ...]:
        """``before`` and ``after`` when partial (some calls failed): outputs say so."""
        return tuple(s for s in (self.before, self.after) if s.status == "partial")


def diff_snapshots(
    source: Store | duckdb.DuckDBPyConnection,
    *,
    before: str | None = None,
    after: str | None = None,
    request: AuditRequest | None = None,
    **changes: Unpack[AuditFields],
) -> SnapshotDiff:
    """Compare two snapshots (ids or unique prefixes; default: the newest, partial or not,
    and the complete one before it; ``tables_not_collected`` names what a partial side's
    failed calls left without a row).

    Findings are the audit of ``after`` against ``before`` (``request``, with keyword
    arguments changing its fields: options, checks, waivers) as
    :func:`~toolkit.audit.run_audit` judges them, from the findings history: a waived
    finding is listed with its waiver, not left out."""
    con = source.duckdb() if isinstance(source, Store) else source
    ensure_views(con)  # error_covers, which _presence reads
    committed = committed_snapshots(con)
    newer, older = select_snapshots(committed, after, before, options=("--to", "--from"))
    if older is None:
        # --from helps only when an older snapshot exists (a partial one, say)
        hint = (
            "pass --from"
            if any(s.seq < newer.seq for s in committed)
            else ("take another snapshot first")
        )
        raise AuditError(
            f"snapshot {newer.snapshot_id} has no complete snapshot before it to compare "
            f"with: {hint}"
        )
    added, missing_before = _presence(con, present=newer, absent=older)
    removed, missing_after = _presence(con, present=older, absent=newer)
    changed = query_frame(
        con, _CHANGED_SQL, {"before": older.snapshot_id, "after": newer.snapshot_id}
    )
    asked = (request or AuditRequest()).but(**changes)
    audit = run_audit(source, asked.but(snapshot=newer.snapshot_id, compare_to=older.snapshot_id))
    findings = audit.findings
    # An open finding the newer snapshot did not observe is listed: it may have changed.
    shown = (findings.state != "open") | (findings.status == "unobserved")
    return SnapshotDiff(
        before=older,
        after=newer,
        added=added,
        removed=removed,
        changed=changed,
        not_collected=pd.concat(
            [missing_after.assign(missing_from="to"), missing_before.assign(missing_from="from")],
            ignore_index=True,
        ),
        findings=findings[shown].reset_index(drop=True),
        blind=audit.blind,
        tables_not_collected=audit.not_collected,
        configured=audit.configured,
        warnings=audit.warnings,
    )


def _presence(
    con: duckdb.DuckDBPyConnection, *, present: SnapshotRef, absent: SnapshotRef
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The services of ``present`` that ``absent`` lacks: those whose absence is real, and
    those the collection of ``absent`` did not see (with ``why``)."""
    params = {
        "present": present.snapshot_id,
        "absent": absent.snapshot_id,
        "services_kept": _SERVICES_KEPT_BY,
    }
    frame = query_frame(con, _PRESENCE_SQL, params)
    why = frame.pop("not_collected")
    lost = why.notna()
    real = frame[~lost].reset_index(drop=True)
    return real, frame[lost].assign(why=why[lost]).reset_index(drop=True)


_SERVICES_KEPT_BY = sorted(e for e, tables in ENDPOINT_TABLES.items() if "services" not in tables)
"""Endpoints whose failure leaves ``services`` whole; any other (the hierarchy listings, an
endpoint the engine does not know) leaves it short, as the audit engine counts blindness."""

_OWNER_NAMES = """
    left join teams t on t.snapshot_id = s.snapshot_id and t.id = s.team_id
    left join projects p on p.snapshot_id = s.snapshot_id and p.id = s.project_id
    left join environments e on e.snapshot_id = s.snapshot_id and e.id = s.environment_id
"""
_IDENTITY = """s.id, s.name, s.team_id, t.name as team_name, s.project_id,
    p.name as project_name, s.environment_id, e.name as environment_name"""

# A failed call covers a service when each owner id it names is the service's (a services
# listing names the environment; a projects listing only the team; a teams listing none).
_COVERS = """error_covers(f.team_id, f.project_id, f.environment_id, f.service_id,
    s.team_id, s.project_id, s.environment_id, s.id)"""
# Why a service of $present is missing from $absent other than by being deleted, if it is:
# a failed listing there (the snapshot is partial); a 404 there (platform-api section 7: the
# resource does not exist, or the key cannot see it; the snapshot stays complete); or the
# collecting key of $absent is limited to resources none of which holds the service.
_PRESENCE_SQL = f"""
with failed as (
    select team_id, project_id, environment_id, service_id,
        coalesce(not_visible, false) as not_visible
    from collection_errors
    where snapshot_id = $absent
        and coalesce(table_name = 'services', not list_contains($services_kept, endpoint))
        and (coalesce(not_visible, false)
            or snapshot_id in (select snapshot_id from snapshots where status = 'partial'))
),
limits as (  -- what the collecting key of $absent is limited to, when it is limited
    select r.resource_type, r.resource_id
    from snapshots sn
    join credentials c on c.snapshot_id = sn.snapshot_id and c.name = sn.credential_name
    join credential_resources r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    where sn.snapshot_id = $absent and c.access = 'limited'
),
missing as (
    select * from services
    where snapshot_id = $present
        and id not in (select id from services where snapshot_id = $absent)
)
select {_IDENTITY},
    case
        when exists (select 1 from failed f where not f.not_visible and {_COVERS})
            then 'a listing failed'
        when exists (select 1 from failed f where f.not_visible and {_COVERS})
            then 'its listing answered 404 (deleted, or hidden from the collecting key)'
        when exists (select 1 from limits) and not exists (
            select 1 from limits l
            where (l.resource_type = 'team' and l.resource_id = s.team_id)
                or (l.resource_type = 'project' and l.resource_id = s.project_id)
                or (l.resource_type = 'environment' and l.resource_id = s.environment_id)
                or (l.resource_type = 'service' and l.resource_id = s.id))
            then 'outside the collecting key''s limits'
    end as not_collected
from missing s
{_OWNER_NAMES}
order by s.name, s.id
"""  # noqa: S608 - constant text


def _changed_fields_sql(old: str, new: str) -> str:
    """The names of the columns whose values differ between aliases ``old`` and ``new``."""
    # Column names come from the declared schema, never from input.
    columns = [
        name
        for name in TABLES["services"].column_names
        if name not in (SNAPSHOT_ID, SNAPSHOT_AT, "id")
    ]
    checks = ", ".join(
        f'case when {old}."{c}" is distinct from {new}."{c}" then \'{c}\' end' for c in columns
    )
    return f"list_filter([{checks}], lambda x: x is not null)"


_CHANGED_SQL = f"""
select * from (
    select {_IDENTITY}, {_changed_fields_sql("a", "s")} as changed_fields
    from services a
    join services s on a.id = s.id
    {_OWNER_NAMES}
    where a.snapshot_id = $before and s.snapshot_id = $after
)
where len(changed_fields) > 0
order by name, id
"""  # noqa: S608 - declared column names only
