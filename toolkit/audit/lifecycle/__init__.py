"""Findings over time: what each finding was in every snapshot read (its marks:
:mod:`~toolkit.audit.lifecycle.marks`, kept by a store: :mod:`~toolkit.audit.lifecycle.kept`),
and from them its state between two
snapshots, its episodes and the mean time to resolve (:mod:`~toolkit.audit.lifecycle.states`).
"""

from __future__ import annotations

from toolkit.audit.lifecycle.kept import (
    keep_marks,
    kept_of,
    marks_disagreeing,
    marks_to_keep,
    marks_verdict,
)
from toolkit.audit.lifecycle.marks import Marks, build_marks, build_text, read_rows
from toolkit.audit.lifecycle.states import (
    STATES,
    build_names,
    build_positions,
    build_summary,
    build_unobserved,
    findings_table,
    mean_time_to_resolve,
    query_frame,
)

__all__ = [
    "STATES",
    "Marks",
    "build_marks",
    "build_names",
    "build_positions",
    "build_summary",
    "build_text",
    "build_unobserved",
    "findings_table",
    "keep_marks",
    "kept_of",
    "marks_disagreeing",
    "marks_to_keep",
    "marks_verdict",
    "mean_time_to_resolve",
    "query_frame",
    "read_rows",
]
