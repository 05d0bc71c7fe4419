"""A check's rows as an audit keeps them, and the refusals of rows that break the output
contract (:data:`~toolkit.audit.check_file.OUTPUT_COLUMNS`), each naming the check's file.

Statuses are dictionary-encoded (:data:`STATUS_SCHEMA`: ids repeat across millions of
rows), full rows are text (:data:`ROW_SCHEMA`); :func:`~toolkit.audit.check_rows.run_checks`
turns each check's Arrow result into both::

    status_rows(result, "RES001"), text_rows(result, "RES001")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.audit.check_cache import ENTRY_SCHEMA
from toolkit.audit.check_file import OUTPUT_COLUMNS, STATUSES
from toolkit.errors import CheckDefinitionError

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "ROW_SCHEMA",
    "STATUS_SCHEMA",
    "identity",
    "require_same_judgement",
    "require_values",
    "status_rows",
    "text_rows",
]

ROW_SCHEMA = pa.schema([("check_id", pa.string()), *((c, pa.string()) for c in OUTPUT_COLUMNS)])
"""``audit_details``: a check's output columns as text, after the check's id."""
_TEXT = pa.dictionary(pa.int32(), pa.string())
STATUS_SCHEMA = pa.schema(
    [(name, _TEXT) for name in ("check_id", "snapshot_id", "resource_id", "status")]
)
"""Every check row's identity and status (``AuditResult.rows``)."""


def identity(table: pa.Table) -> pa.Table:
    """A check's ``snapshot_id``, ``resource_id`` and ``status`` as text (:data:`ENTRY_SCHEMA`)."""
    return pa.Table.from_arrays(
        [_text(table.column(name)) for name in ENTRY_SCHEMA.names], schema=ENTRY_SCHEMA
    )


def require_same_judgement(
    spec: CheckSpec, statuses: pa.Table, rows: pa.Table, ids: Sequence[str]
) -> None:
    """Refuse a check whose window rows judge the ``ids`` snapshots otherwise than its run
    over the whole history: its ``history`` line claims less than it reads."""

    def judged(table: pa.Table) -> pa.Table:
        texts = identity(table)
        texts = texts.filter(pc.is_in(texts.column("snapshot_id"), pa.array(ids, pa.string())))
        return texts.sort_by([(c, "ascending") for c in ENTRY_SCHEMA.names])

    if not judged(statuses).equals(judged(rows)):
        raise CheckDefinitionError(
            f"{spec.path}: says '-- history: {spec.history}', but it judges the snapshots "
            f"{', '.join(ids)} differently when it reads all earlier snapshots; "
            "remove the history line (it then reads the whole history)"
        )


def require_values(spec: CheckSpec, status: pa.Table, known: Collection[str]) -> None:
    """Refuse rows the lifecycle would silently drop: a status other than 'alarm', 'ok' or
    'unknown', no resource id, or a snapshot id the audit does not know (read from the
    dictionaries of :func:`status_rows`: a few values a chunk, whatever the row count)."""

    def values(name: str) -> set[str | None]:
        column = status.column(name)
        found: set[str | None] = {None} if column.null_count else set()
        for chunk in column.chunks:
            found.update(chunk.dictionary.to_pylist())
        return found

    problems = []
    if odd := values("status") - set(STATUSES):
        problems.append(f"status {_listed(odd)}, where a check returns 'alarm', 'ok' or 'unknown'")
    if status.column("resource_id").null_count:
        problems.append("rows with no resource_id, which identifies a finding")
    if odd := values("snapshot_id") - set(known):
        problems.append(f"snapshot_id {_listed(odd)}, not a snapshot the audit read")
    if problems:
        raise CheckDefinitionError(f"{spec.path}: returned {'; and '.join(problems)}")


def _listed(values: set[str | None]) -> str:
    shown = sorted(repr(v) if v is not None else "null" for v in values)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


def status_rows(result: pa.Table, check_id: str) -> pa.Table:
    """A check's rows as :data:`STATUS_SCHEMA` (dictionary-encoded: ids repeat a lot)."""
    check = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(result.num_rows, dtype=np.int32)), pa.array([check_id], pa.string())
    )
    columns = [_encoded(result.column(c)) for c in STATUS_SCHEMA.names[1:]]
    return pa.Table.from_arrays([check, *columns], schema=STATUS_SCHEMA)


def _encoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column as dictionaries of text (the status cache's entries already are)."""
    return column if column.type == _TEXT else _text(column).dictionary_encode()


def text_rows(result: pa.Table, check_id: str) -> pa.Table:
    """The check's columns as strings, after a ``check_id`` column."""
    check = pa.repeat(pa.scalar(check_id, pa.string()), result.num_rows)
    columns = [_text(result.column(name)) for name in OUTPUT_COLUMNS]
    return pa.Table.from_arrays([check, *columns], schema=ROW_SCHEMA)


def _text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    # check_run.require_shape refused nested types: everything else casts to text.
    return column if pa.types.is_string(column.type) else pc.cast(column, pa.string())
