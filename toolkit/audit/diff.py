"""What changed between two snapshots: services added, removed or changed, and findings.

Services are compared on their flattened rows (every declared column but the snapshot
columns), so a changed service lists the fields that differ. Findings changes are the
audit of the newer snapshot compared with the older one: new, regressed and resolved.
Example::

    change = diff_snapshots(Store.open("data/store"))        # the two newest complete
    change.added, change.removed, change.changed, change.findings
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.audit.engine import committed_snapshots, run_audit, select_snapshots
from toolkit.audit.lifecycle import query_frame
from toolkit.errors import AuditError
from toolkit.snapshot import SNAPSHOT_AT, SNAPSHOT_ID, TABLES, Store

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import duckdb
    import pandas as pd

    from toolkit.audit.catalogue import Catalogue
    from toolkit.audit.findings import SnapshotRef
    from toolkit.audit.waivers import Waiver
    from toolkit.config import Settings

__all__ = ["SnapshotDiff", "diff_snapshots"]

_IDENTITY = "id, name, team_id, project_id, environment_id"


@dataclass(frozen=True, eq=False)
class SnapshotDiff:
    """Inventory and findings changes from ``before`` to ``after``."""

    before: SnapshotRef
    after: SnapshotRef
    added: pd.DataFrame
    removed: pd.DataFrame
    changed: pd.DataFrame
    findings: pd.DataFrame

    @property
    def empty(self) -> bool:
        return all(f.empty for f in (self.added, self.removed, self.changed, self.findings))


def diff_snapshots(
    source: Store | duckdb.DuckDBPyConnection,
    *,
    before: str | None = None,
    after: str | None = None,
    settings: Settings | None = None,
    checks: Catalogue | None = None,
    waivers: Path | Sequence[Waiver] | None = None,
) -> SnapshotDiff:
    """Compare two snapshots (ids or unique prefixes; default: the two newest complete).

    Findings are judged with ``waivers`` (a file or parsed waivers; default: the file
    ``settings`` names) as :func:`~toolkit.audit.run_audit` judges them: a waived finding
    is listed with its waiver, not left out."""
    con = source.duckdb() if isinstance(source, Store) else source
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
    params = {"before": older.snapshot_id, "after": newer.snapshot_id}
    added = query_frame(con, _presence_sql("after", "before"), params)
    removed = query_frame(con, _presence_sql("before", "after"), params)
    changed = query_frame(con, _CHANGED_SQL, params)
    audit = run_audit(
        con,
        settings=settings,
        checks=checks,
        snapshot=newer.snapshot_id,
        compare_to=older.snapshot_id,
        waivers=waivers,
    )
    findings = audit.findings[audit.findings.state != "open"].reset_index(drop=True)
    return SnapshotDiff(older, newer, added, removed, changed, findings)


def _presence_sql(present: str, absent: str) -> str:
    return (
        f"select {_IDENTITY} from services where snapshot_id = ${present} "  # noqa: S608 - constant text
        f"and id not in (select id from services where snapshot_id = ${absent}) order by name, id"
    )


def _changed_fields_sql() -> str:
    # Column names come from the declared schema, never from input.
    columns = [
        name
        for name in TABLES["services"].column_names
        if name not in (SNAPSHOT_ID, SNAPSHOT_AT, "id")
    ]
    checks = ", ".join(
        f'case when a."{c}" is distinct from b."{c}" then \'{c}\' end' for c in columns
    )
    return f"list_filter([{checks}], lambda x: x is not null)"


_CHANGED_SQL = f"""
select * from (
    select b.id, b.name, b.team_id, b.project_id, b.environment_id,
           {_changed_fields_sql()} as changed_fields
    from services a
    join services b on a.id = b.id
    where a.snapshot_id = $before and b.snapshot_id = $after
)
where len(changed_fields) > 0
order by name, id
"""  # noqa: S608 - declared column names only
