"""Waivers in an audit: which findings each waiver holds, and a report on every waiver.

A waived finding is shown as waived, never dropped. A waiver holds findings in alarm: a
resolved finding it matches is resolved, not waived, and counted as such. A finding two
waivers match shows the one the report keeps (the unexpired one lasting longest, the earlier
entry among equals). A waiver past its expiry date stops hiding its findings and is itself
reported; an active waiver that matches no finding in alarm is reported as stale, and one
that ends within :data:`EXPIRING_DAYS` as expiring, so the gate it holds open does not fail
by surprise. An id of ``resources`` that matches no finding in alarm is named
(``stale_ids``), and a waiver whose every finding another unexpired waiver holds as long or
longer is a duplicate (``covered_by``): remove it, not renew it.
A waiver for a check this audit did not run (``--check``, ``--skip``) is unchecked, neither
stale nor active; one naming no check at all is refused (:func:`require_known_checks`),
since it could never match. Matching runs in DuckDB (``GLOB``), next to the findings.
"""

from __future__ import annotations

import difflib
import fnmatch
from typing import TYPE_CHECKING

import pyarrow as pa

from toolkit.audit.lifecycle import query_frame
from toolkit.audit.waivers.entries import SELECTORS
from toolkit.errors import WaiverError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence
    from datetime import date

    import duckdb
    import pandas as pd

    from toolkit.audit.waivers.entries import Waiver

__all__ = ["ATTENTION", "EXPIRING_DAYS", "WAIVER_STATUSES", "apply_waivers", "require_known_checks"]

EXPIRING_DAYS = 14
"""A waiver still hiding findings that ends within this many days is reported as expiring."""
WAIVER_STATUSES = ("active", "expiring", "expired", "stale", "duplicate", "unchecked")
"""A waiver report's statuses: ``expiring``, ``expired``, ``stale`` and ``duplicate`` (every
finding it matches is held by another waiver lasting at least as long: remove it, no need to
renew it) ask for someone to act; ``unchecked`` says the audit did not run the waiver's check."""
ATTENTION = ("expiring", "expired", "stale", "duplicate")
"""The statuses of waivers someone has to renew, fix or remove."""
WAIVERS = "audit_waivers"
_SCHEMA = pa.schema(
    [
        ("idx", pa.int64()),
        ("check_id", pa.string()),
        ("resource_ids", pa.list_(pa.string())),
        *((name, pa.string()) for name in SELECTORS),
        ("selector", pa.string()),
        ("reason", pa.string()),
        ("owner", pa.string()),
        ("expires", pa.date32()),
        ("expired", pa.bool_()),
        ("days_left", pa.int32()),
    ]
)


def waiver_table(waivers: Sequence[Waiver], today: date) -> pa.Table:
    """The waivers as an Arrow table for DuckDB (``idx`` is the entry's 1-based position)."""
    rows = [
        {
            "idx": n,
            "check_id": w.check,
            "resource_ids": list(w.resources) if w.resources else None,
            **{name: getattr(w, name) for name in SELECTORS},
            "selector": w.selector,
            "reason": w.reason,
            "owner": w.owner,
            "expires": w.expires,
            "expired": w.expires < today,
            "days_left": (w.expires - today).days,
        }
        for n, w in enumerate(waivers, start=1)
    ]
    return pa.Table.from_pylist(rows, schema=_SCHEMA)


_MATCHES = """
create or replace temp table audit_waiver_matches as
select f.check_id, f.resource_id, f.state, w.idx, w.expired, w.expires
from audit_findings f
join audit_waivers w
  on w.check_id = f.check_id
 and (w.resource_ids is null or list_contains(w.resource_ids, f.resource_id))
 and (w.team is null or coalesce(f.team_name, '') glob w.team)
 and (w.project is null or coalesce(f.project_name, '') glob w.project)
 and (w.environment is null or coalesce(f.environment_name, '') glob w.environment)
 and (w.service is null or coalesce(f.service_name, f.resource_name, '') glob w.service)
"""

# The waiver shown on a finding in alarm (a resolved one is resolved, not waived, as the
# report's stale and duplicate waivers count only findings in alarm): an active one first,
# else an expired one (shown, but not hiding it); the one lasting longest, then the earliest
# entry of the file, so that it is the one the report keeps, never one it calls a duplicate.
_WAIVED = """
with chosen as (
    select check_id, resource_id, first(idx order by expired, expires desc, idx) as idx
    from audit_waiver_matches
    where state <> 'resolved'
    group by check_id, resource_id
)
select
    f.* exclude (severity_rank),
    coalesce(not w.expired, false) as waived,
    case when w.idx is null then null when w.expired then 'expired' else 'active' end
        as waiver_status,
    w.owner as waiver_owner,
    w.reason as waiver_reason,
    w.expires as waiver_expires
from audit_findings f
left join chosen c using (check_id, resource_id)
left join audit_waivers w on w.idx = c.idx
order by
    f.severity_rank,
    array_position(['new', 'regressed', 'open', 'resolved'], f.state),
    f.check_id,
    f.resource_name,
    f.resource_id
"""

_REPORT = """
with live as (  -- each waiver's matches still in alarm (or fixed, not yet resolved)
    select distinct idx, check_id, resource_id from audit_waiver_matches where state <> 'resolved'
),
counted as (
    select w.*, count(m.idx) filter (where m.state <> 'resolved') as matched
    from audit_waivers w
    left join audit_waiver_matches m on m.idx = w.idx
    group by all
),
shared as (  -- how many of a waiver's live matches another waiver matches too
    select a.idx, b.idx as other, count(*) as n
    from live a join live b using (check_id, resource_id)
    where a.idx <> b.idx
    group by all
),
covered as (  -- by an unexpired waiver lasting as long (the earlier entry among equals)
    select s.idx, first(s.other order by wb.expires desc, s.other) as covered_by
    from shared s
    join audit_waivers wa on wa.idx = s.idx
    join audit_waivers wb on wb.idx = s.other
    where s.n = (select count(*) from live l where l.idx = s.idx)
      and not wb.expired
      and (wb.expires > wa.expires or (wb.expires = wa.expires and wb.idx < wa.idx))
    group by s.idx
),
idle as (  -- ids of a 'resources' list that match no live finding
    select w.idx, string_agg(r.id, ', ' order by r.pos) as stale_ids
    from audit_waivers w,
         unnest(w.resource_ids) with ordinality as r(id, pos)
    where not exists (select 1 from live l where l.idx = w.idx and l.resource_id = r.id)
    group by w.idx
)
select
    idx as entry,
    check_id,
    selector,
    owner,
    reason,
    expires,
    days_left,
    matched,
    case
        when expired then 'expired'
        when check_id not in (select check_id from audit_checks) then 'unchecked'
        when matched = 0 then 'stale'
        when v.covered_by is not null then 'duplicate'
        when days_left <= $expiring_days then 'expiring'
        else 'active'
    end as status,
    case when not expired and matched > 0 then i.stale_ids end as stale_ids,
    case when not expired and matched > 0 then v.covered_by end as covered_by
from counted
left join covered v using (idx)
left join idle i using (idx)
order by idx
"""


def apply_waivers(
    con: duckdb.DuckDBPyConnection, waivers: Iterable[Waiver], today: date
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Findings with their waiver columns, and the waiver report: each entry's ``expires``,
    ``days_left`` (negative once expired), how many findings it ``matched``, its ``status``
    (:data:`WAIVER_STATUSES`), ``stale_ids`` (the ids of its ``resources`` that match no
    finding in alarm, comma-separated, else null) and ``covered_by`` (for a duplicate, the
    entry that holds its findings, else null).

    Reads ``audit_findings`` and ``audit_checks`` (see :mod:`toolkit.audit.lifecycle`).
    """
    import pandas as pd

    con.register(WAIVERS, waiver_table(list(waivers), today))
    con.execute(_MATCHES)
    report = query_frame(con, _REPORT, {"expiring_days": EXPIRING_DAYS})
    # an entry number, or None (not NaN, which pandas makes of a null integer)
    report["covered_by"] = pd.Series(
        [None if pd.isna(v) else int(v) for v in report["covered_by"]], dtype=object
    )
    return query_frame(con, _WAIVED), report


def require_known_checks(
    waivers: Sequence[Waiver], known: Collection[str], where: str = "waivers"
) -> None:
    """Refuse a waiver whose check id no check has (``known``: every id that could run,
    skipped ones too): a misspelt id would never match, and the finding it meant to waive
    would fail the gate with the waiver looking right."""
    for n, waiver in enumerate(waivers, start=1):
        if waiver.check in known:
            continue
        if any(c in waiver.check for c in "*?["):
            ids = fnmatch.filter(sorted(known), waiver.check.upper())
            more = f", and {len(ids) - 5} more" if len(ids) > 5 else ""
            hint = f"ids it would cover: {', '.join(ids[:5])}{more}" if ids else ""
            raise WaiverError(
                f"{where}: waiver #{n} ({waiver.check}): 'check' must be one exact check id, "
                f"not a glob: write one waiver per check "
                f"({hint or '`platform-audit checks` lists them'})"
            )
        close = [waiver.check.upper()] if waiver.check.upper() in known else []
        close = close or difflib.get_close_matches(waiver.check, sorted(known), n=1)
        hint = f"did you mean {close[0]}?" if close else "`platform-audit checks` lists them"
        raise WaiverError(f"{where}: waiver #{n} ({waiver.check}): no check has this id; {hint}")
