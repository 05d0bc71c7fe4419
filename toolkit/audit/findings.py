"""What an audit returns: findings between two snapshots, waivers, history and resolve times.

>>> result = run_audit(Store.open("data/store"))                       # doctest: +SKIP
>>> result.findings[["check_id", "resource_name", "state", "waived"]]   # doctest: +SKIP
>>> result.summary()                    # counts per severity and state  # doctest: +SKIP
>>> result.failing("high")              # what would fail a CI gate      # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.audit.check_file import SEVERITIES
from toolkit.audit.lifecycle import STATES

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "ALARMING",
    "FINDING_COLUMNS",
    "WORSENED",
    "AuditResult",
    "SnapshotRef",
    "at_or_above",
]

_PLAIN = pa.schema([(n, pa.string()) for n in ("check_id", "snapshot_id", "resource_id", "status")])
ALARMING = ("new", "regressed", "open")
"""States of a finding that is in alarm in the judged snapshot."""
WORSENED = ("new", "regressed")
"""States of a finding in alarm now and not at the compared snapshot."""

FINDING_COLUMNS = (
    "check_id",
    "title",
    "severity",
    "area",
    "resource_type",
    "resource_id",
    "resource_name",
    "team_id",
    "team_name",
    "project_id",
    "project_name",
    "environment_id",
    "environment_name",
    "service_id",
    "service_name",
    "status",
    "state",
    "waived",
    "waiver_status",
    "waiver_owner",
    "waiver_reason",
    "waiver_expires",
    "reason",
    "evidence",
    "first_seen",
    "last_seen",
    "snapshot_id",
)


def at_or_above(severity: str) -> tuple[str, ...]:
    """The severities at or above ``severity`` (``"high"`` -> critical, high)."""
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    return SEVERITIES[: SEVERITIES.index(severity) + 1]


@dataclass(frozen=True)
class SnapshotRef:
    """A committed snapshot: its id, its place in the chain, when it was taken, its status."""

    snapshot_id: str
    seq: int
    snapshot_at: datetime
    status: str


@dataclass(frozen=True, eq=False)
class AuditResult:
    """The outcome of :func:`~toolkit.audit.run_audit`.

    ``findings`` has one row per finding whose state between ``compare`` and ``target`` is
    new, regressed, open or resolved (columns :data:`FINDING_COLUMNS`); ``waiver_report``
    one row per waiver (``status`` active, expired or stale); :attr:`rows` (read when first
    asked, by ``load_rows``) every alarm of the history, and the judged, compared and partial
    snapshots' rows whole; ``details`` the full rows (owners, reason, evidence) of the judged
    and compared snapshots. ``timings`` has the seconds of each phase (``connect``,
    ``checks``: bringing the findings history up to date, ``lifecycle``). ``read`` has the
    ids of the committed snapshots up to the judged one that the checks read, oldest first
    (None: all of them): a latest-only audit reads a few, and episodes and resolve times run
    over those alone.

    A partial snapshot may not have collected what a check reads: ``blind`` has one row
    (``check_id, snapshot_id``) per check reading a table whose collection failed there. A
    finding of such a check with no row in that snapshot was not observed: it neither ends
    nor starts an episode, and its state is carried over from when it was last observed
    (``status`` ``unobserved`` when that is the judged snapshot, its reason prefixed
    ``not collected:``). :attr:`partial` names the judged and compared snapshots that are
    partial. A finding ``absent`` from the judged snapshot otherwise is gone (the resource
    was deleted, or the check no longer examines it): ``resolved``, with the compared
    snapshot's reason prefixed ``gone:``, so no output shows the old alarm as current.
    """

    target: SnapshotRef
    compare: SnapshotRef | None
    checks: tuple[CheckSpec, ...]
    findings: pd.DataFrame
    waiver_report: pd.DataFrame
    load_rows: Callable[[], pa.Table] = field(repr=False)
    details: pa.Table = field(repr=False)
    snapshot_times: pd.DataFrame = field(repr=False)
    mttr_table: pd.DataFrame = field(repr=False)
    timings: dict[str, float] = field(default_factory=dict, repr=False)
    latest_only: bool = False
    read: tuple[str, ...] | None = field(default=None, repr=False)
    judged: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Per check id, how many snapshots this audit judged into the findings history (the
    others it read from there)."""
    warnings: tuple[str, ...] = ()
    """What went wrong that did not change the findings (a store it could not write the
    findings history to)."""
    configured: tuple[str, ...] = ()
    """What the audit was configured with that changes what it finds: thresholds other
    than the checks' defaults, checks left out, the production pattern
    (:meth:`~toolkit.audit.Catalogue.configured`); empty with the defaults."""
    blind: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame({"check_id": [], "snapshot_id": []}, dtype=str),
        repr=False,
    )
    not_collected: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per partial judged or compared snapshot id, the tables its failed calls left without
    a row: outputs say "not collected" for them, never 0 rows or no findings."""

    @property
    def partial(self) -> tuple[SnapshotRef, ...]:
        """The judged and compared snapshots that are partial (some calls failed), judged
        first: outputs should say so, and which checks were blind there (:attr:`blind`)."""
        return tuple(s for s in (self.target, self.compare) if s and s.status == "partial")

    def summary(self) -> pd.DataFrame:
        """Counts per severity (rows, most severe first): one column per state, and waived.

        The state columns count unwaived findings; ``waived`` counts waived ones in alarm. A
        waiver holds only findings in alarm, so ``resolved`` counts every resolved finding,
        and the columns add up to every finding.
        """
        counts = self._counts_by("severity").reindex(SEVERITIES, fill_value=0)
        counts.index = pd.Index(SEVERITIES, name="severity")
        return counts

    def per_check(self) -> pd.DataFrame:
        """One row per check run, most severe first and then the most findings in alarm:
        ``check_id, title, severity, area``, the counts :meth:`summary` makes per severity
        (``new, regressed, open, resolved`` unwaived, ``waived`` in alarm), ``alarming``
        (new + regressed + open) and, from :meth:`mttr`, ``resolved_count`` and
        ``mttr_hours`` over the history. A check with no finding has a row of zeros: the
        table also says what was checked and found clean.
        """
        counts = self._counts_by("check_id")
        rows = pd.DataFrame(
            [(c.id, c.title, c.severity, c.area) for c in self.checks],
            columns=["check_id", "title", "severity", "area"],
        )
        rows = rows.join(counts, on="check_id")
        columns = [*STATES, "waived"]
        rows[columns] = rows[columns].fillna(0).astype("int64")
        rows["alarming"] = rows[list(ALARMING)].sum(axis=1)
        mttr = self.mttr_table[["check_id", "resolved_count", "mttr_hours"]]
        rows = rows.merge(mttr, on="check_id", how="left")
        rows["resolved_count"] = rows.resolved_count.fillna(0).astype("int64")
        rank = rows.severity.map({s: n for n, s in enumerate(SEVERITIES)})
        order = rows.assign(_rank=rank, _alarming=-rows.alarming)
        order = order.sort_values(["_rank", "_alarming", "check_id"], kind="stable")
        return rows.loc[order.index].reset_index(drop=True)

    def failing(self, fail_on: str, *, new_only: bool = False) -> pd.DataFrame:
        """Unwaived findings in alarm (new, regressed, open) at or above ``fail_on``; with
        ``new_only``, only those new or regressed since the compared snapshot (a ratchet:
        findings already open then do not fail a gate)."""
        frame = self.findings
        states = WORSENED if new_only else ALARMING
        mask = frame.state.isin(states) & ~frame.waived
        return frame[mask & frame.severity.isin(at_or_above(fail_on))]

    def mttr(self) -> pd.DataFrame:
        """Mean time to resolve per check: ``check_id, severity, resolved_count, mttr_hours``.

        Over the history up to the judged snapshot (only the snapshots run in latest-only
        mode); ``mttr_hours`` is NaN for a check none of whose alarms was resolved yet.
        """
        return self.mttr_table.copy(deep=True)

    def _counts_by(self, column: str) -> pd.DataFrame:
        """Per value of a findings ``column`` that has findings: unwaived findings in each
        state, and waived ones in alarm (``waived``), the counts every table shows. Each
        finding is counted once: one marked waived but resolved counts as resolved."""
        frame = self.findings
        waived = frame.state.isin(ALARMING) & frame.waived
        flags = pd.DataFrame(
            {
                **{state: (frame.state == state) & ~waived for state in STATES},
                "waived": waived,
            }
        )
        return flags.groupby(frame[column]).sum().astype("int64")

    def episodes(self, check_id: str, resource_id: str) -> pd.DataFrame:
        """The finding's alarm episodes up to the judged snapshot, oldest first: runs of
        consecutive snapshots read (:attr:`read`) in which it was in alarm, skipping those
        that did not observe it (see :attr:`blind`) or could not judge it (an ``unknown``
        row). Columns
        ``started`` and ``last_alarm`` (snapshot times), ``snapshots`` (how many),
        ``fixed_at`` (the next snapshot observing it not in alarm; NaT while in alarm) and
        ``hours`` (``started`` to ``fixed_at``, as :meth:`mttr` averages them; NaN while
        in alarm). Empty when it never was in alarm.
        """
        times = self.snapshot_times
        read = times.snapshot_status.isin(("complete", "partial"))
        if self.read is not None:
            read &= times.snapshot_id.isin(self.read)
        judged = times[read & (times.seq <= self.target.seq)]
        blind = self.blind.snapshot_id[self.blind.check_id == check_id]
        seen = _row_snapshots(self.rows, check_id, resource_id)
        unknown = _row_snapshots(self.rows, check_id, resource_id, "unknown")
        unobserved = judged.snapshot_id.isin(blind) & ~judged.snapshot_id.isin(seen)
        unobserved |= judged.snapshot_id.isin(unknown)  # the check could not judge it there
        judged = judged[~unobserved].sort_values("seq", ignore_index=True)
        alarms = _row_snapshots(self.rows, check_id, resource_id, "alarm")
        in_alarm = judged.snapshot_id.isin(alarms)
        episode = (in_alarm != in_alarm.shift(fill_value=False)).cumsum()
        at = judged.snapshot_at
        runs = judged.index[in_alarm].to_series().groupby(episode[in_alarm])
        first, last = runs.min().to_numpy(dtype="int64"), runs.max().to_numpy(dtype="int64")
        frame = pd.DataFrame(
            {
                "started": at.iloc[first].reset_index(drop=True),
                "last_alarm": at.iloc[last].reset_index(drop=True),
                "snapshots": last - first + 1,
                "fixed_at": at.shift(-1).iloc[last].reset_index(drop=True),
            }
        )
        frame["hours"] = (frame.fixed_at - frame.started).dt.total_seconds() / 3600.0
        return frame

    @cached_property
    def rows(self) -> pa.Table:
        """The check rows the lifecycle reads (``check_id, snapshot_id, resource_id,
        status``): every alarm of the history, and every row, ok ones too, of the judged,
        compared and partial snapshots. Read from the findings history when first asked."""
        return self.load_rows()

    @cached_property
    def history(self) -> pd.DataFrame:
        """The check rows of the run (:attr:`rows`: every alarm, and the judged and compared
        snapshots whole) with the snapshot's time and the check's metadata: the whole
        history of every finding."""
        meta = pd.DataFrame(
            [(c.id, c.title, c.severity, c.area) for c in self.checks],
            columns=["check_id", "title", "severity", "area"],
        )
        rows: pd.DataFrame = self.rows.cast(_PLAIN).to_pandas()
        merged = rows.merge(self.snapshot_times, on="snapshot_id", how="left")
        return merged.merge(meta, on="check_id", how="left")


def _row_snapshots(
    rows: pa.Table, check_id: str, resource_id: str, status: str | None = None
) -> set[str]:
    """The snapshot ids in which ``rows`` (:data:`STATUS_SCHEMA`-shaped) have a row of the
    check for the resource (with ``status``, when given)."""
    text = rows.cast(_PLAIN)
    mask = pc.and_(pc.equal(text["check_id"], check_id), pc.equal(text["resource_id"], resource_id))
    if status is not None:
        mask = pc.and_(mask, pc.equal(text["status"], status))
    return set(text["snapshot_id"].filter(mask).to_pylist())
