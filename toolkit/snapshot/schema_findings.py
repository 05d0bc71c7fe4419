"""The findings history: what each version of each check said of each resource in each
snapshot, declared in Arrow types beside the snapshot tables (docs/design.md, "Findings history
is a table of the store").

``check_results`` holds the rows; ``check_runs`` one row per check, check version and
snapshot judged, appended LAST, as ``snapshots`` is for a snapshot: the views show a
result only through its run, so rows of a judging that never finished are invisible, and
``store gc`` removes them. Neither is part of a snapshot's content hash; ``store verify``
recomputes each run's own hash over its rows.
"""

from __future__ import annotations

from toolkit.snapshot.schema import INT, STR, TS, Kind, col, declare, required

__all__ = ["CHECK_RESULTS", "CHECK_RUNS", "FINDINGS_TABLES", "FINDING_MARKS"]


_JUDGEMENT = (
    required("run_id", STR, "the judging that wrote the row (a check_runs row)", kind=Kind.TOOLKIT),
    required("check_id", STR, "the check's id (RES001)", kind=Kind.TOOLKIT),
    required(
        "check_version",
        STR,
        "hash of the check's SQL, header and parameters, the views it reads and the schema",
        kind=Kind.TOOLKIT,
    ),
)

CHECK_RESULTS = declare(
    "check_results",
    "One row per check row: what a version of a check said of a resource in a snapshot.",
    [
        *_JUDGEMENT,
        col("severity", STR, "the check's severity", kind=Kind.TOOLKIT),
        col("resource_type", STR, "service, variable, credential, ...", kind=Kind.TOOLKIT),
        required("resource_id", STR, "the resource the row judges", kind=Kind.TOOLKIT),
        col("resource_name", STR, "its name in the snapshot", kind=Kind.TOOLKIT),
        col("team_id", STR, "owning team", kind=Kind.TOOLKIT),
        col("project_id", STR, "owning project", kind=Kind.TOOLKIT),
        col("environment_id", STR, "owning environment", kind=Kind.TOOLKIT),
        col("service_id", STR, "owning service", kind=Kind.TOOLKIT),
        required("status", STR, "alarm, ok or unknown", kind=Kind.TOOLKIT),
        col("reason", STR, "one sentence with the numbers", kind=Kind.TOOLKIT),
        col("evidence", STR, "the check's evidence as JSON", kind=Kind.TOOLKIT),
    ],
    keys=("run_id", "check_id", "check_version", "resource_id"),
)

CHECK_RUNS = declare(
    "check_runs",
    "One row per check version and snapshot judged, appended after its check_results rows.",
    [
        *_JUDGEMENT,
        required("judged_at", TS, "when the snapshot was judged"),
        required("row_count", INT, "the check_results rows of this judgement"),
        required("content_hash", STR, "SHA-256 over those rows (store verify)", kind=Kind.TOOLKIT),
        col("toolkit_version", STR, kind=Kind.TOOLKIT),
    ],
    keys=("run_id", "check_id", "check_version"),
)

FINDING_MARKS = declare(
    "finding_marks",
    "Each finding's marks, a character per snapshot, read from check_results and rewritten "
    "whole by each audit of the newest snapshot, so the next reads no alarm of the past "
    "again (toolkit.audit.lifecycle.marks). snapshot_id: the newest snapshot the marks cover.",
    [
        *_JUDGEMENT[1:],  # check_id, check_version: those whose rows the marks read
        col(
            "resource_id",
            STR,
            "the finding's resource; null on the check version's row of which numbers were "
            "committed snapshots",
            kind=Kind.TOOLKIT,
        ),
        required("first_seq", INT, "the snapshot sequence number of the first character"),
        required(
            "marks",
            STR,
            "a character per sequence number: 1 in alarm, u only unknown rows not ok, 0 "
            "neither, - no committed snapshot",
            kind=Kind.TOOLKIT,
        ),
    ],
    keys=("check_id", "check_version", "resource_id"),
)
"""Derived from ``check_results``: an audit that finds the marks do not cover what it reads
reads the rows instead, and rewrites them; ``store verify`` holds them to the rows
(:mod:`toolkit.audit.lifecycle.kept`)."""

FINDINGS_TABLES = ("check_results", "check_runs")
"""The findings history's tables, ``check_runs`` last (the order they are written in)."""
