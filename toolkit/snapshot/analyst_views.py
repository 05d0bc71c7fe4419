"""Views for people querying the store (``platform-audit sql``, notebooks): the values the
platform writes as placeholders read as what they mean.

The platform reports a CPU or memory limit or request that is not set as ``-1`` (platform
API 2.3: "the value -1 occurs"; the checks read ``> 0`` as set). An ``avg()`` or ``min()``
over the raw columns counts those ``-1`` as tiny limits. ``service_limits`` (every committed
snapshot) and ``service_limits_latest`` (the newest complete one) keep the raw columns and add
``cpu_limit_mcpu``, ``cpu_request_mcpu``, ``memory_limit_mb`` and ``memory_request_mb``: the
value when set (above 0), NULL when not set or not known, so aggregates skip them. The raw
columns of ``services`` carry a DuckDB comment saying so (``duckdb_columns().comment``)::

    con.sql("select avg(memory_limit_mb), count(memory_limit_mb) from service_limits_latest")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

__all__ = ["LIMIT_COLUMNS", "create_analyst_views"]

LIMIT_COLUMNS = {
    "cpu_limits_millicores": "cpu_limit_mcpu",
    "cpu_requests_millicores": "cpu_request_mcpu",
    "memory_limits_megabytes": "memory_limit_mb",
    "memory_requests_megabytes": "memory_request_mb",
}
"""Each raw column of ``services`` (-1: not set) and its column in ``service_limits``
(NULL: not set), same unit."""

_KEPT = "snapshot_id, snapshot_at, id, name, team_id, project_id, environment_id"


def _view_sql(view: str, source: str) -> str:
    derived = ",\n    ".join(
        f"{raw}, if({raw} > 0, {raw}, NULL) AS {clean}" for raw, clean in LIMIT_COLUMNS.items()
    )
    return f"CREATE VIEW {view} AS SELECT {_KEPT},\n    {derived}\nFROM {source};\n"


def _comments() -> str:
    statements = []
    for view in ("services", "services_latest", "service_limits", "service_limits_latest"):
        for raw, clean in LIMIT_COLUMNS.items():
            statements.append(
                f"COMMENT ON COLUMN {view}.{raw} IS '-1 (or 0) means not set, so avg() or min() "
                f"over this column is wrong: use service_limits.{clean} (NULL when not set)';"
            )
    for view in ("service_limits", "service_limits_latest"):
        for raw, clean in LIMIT_COLUMNS.items():
            statements.append(
                f"COMMENT ON COLUMN {view}.{clean} IS '{raw} when set (above 0); NULL when "
                "not set (-1) or not known: aggregates skip it';"
            )
    statements.append(
        "COMMENT ON VIEW service_limits IS 'services'' CPU and memory limits and requests, "
        "raw (-1: not set) and as NULL when not set';"
    )
    return "\n".join(statements)


_SQL = (
    _view_sql("service_limits", "services")
    + _view_sql("service_limits_latest", "services_latest")
    + _comments()
)


def create_analyst_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the analyst views over ``con``'s ``services`` views (one script, one call)."""
    con.execute(_SQL)
