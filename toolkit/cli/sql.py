"""What ``platform-audit sql`` runs without ``--allow-writes``: statements that only read.

The views read the store's own files, so DuckDB must be free to open files under the
store's folder, and there it could write too: ``COPY (select 'x') TO
'store/services/_delta_log/00000000000000000001.json'`` once broke every later command.
DuckDB has no switch that allows reading a folder but not writing it, so the statement's
kind decides: a ``select`` (with ``from``, ``with``, ``values``, ``show``, ``describe``,
``summarize``, ``unpivot`` and a ``pivot`` with an ``IN`` list) or an ``explain`` of one
only reads. ``COPY``, ``EXPORT``, ``ATTACH``, ``INSTALL``, ``SET``, ``PRAGMA``, ``CALL``
and the rest can write a file or change the session, and need the option. Reading files
beside the store (``read_csv('other.csv')``) stays allowed::

    refuse_writes(duckdb.extract_statements(query)[0])   # typer.Exit(2) for a COPY
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from toolkit.cli.options import fail
from toolkit.errors import ExitCode

if TYPE_CHECKING:
    import duckdb
    import typer

__all__ = ["refuse_writes"]

# EXPLAIN [ANALYZE] [(options)] <statement>: ANALYZE runs the statement
_EXPLAIN = re.compile(r"\s*explain\s+(?:analy[sz]e\s+)?(?:\([^)]*\)\s*)?(?P<inner>.*)", re.I | re.S)


def refuse_writes(statement: duckdb.Statement) -> None:
    """Raise ``typer.Exit`` (exit 2, with what to do) unless ``statement`` only reads."""
    if not _reads_only(statement):
        raise _needs_option(statement)


def _reads_only(statement: duckdb.Statement) -> bool:
    import duckdb

    if statement.type == duckdb.StatementType.SELECT:
        return True
    if statement.type != duckdb.StatementType.EXPLAIN:
        return False
    explained = _EXPLAIN.fullmatch(statement.query)
    if explained is None:
        return False
    try:
        inner = duckdb.extract_statements(explained["inner"])
    except duckdb.Error:
        return False
    return len(inner) == 1 and inner[0].type == duckdb.StatementType.SELECT


def _needs_option(statement: duckdb.Statement) -> typer.Exit:
    kind = statement.type.name
    pivot = (
        " (a PIVOT without an IN list runs as several statements: list its values, "
        "`pivot ... on column in (...)`)"
        if kind == "MULTI"
        else ""
    )
    return fail(
        f"`sql` only reads unless --allow-writes is given, and this is a {kind} statement"
        f"{pivot}, which can write files, the store's own among them, or change the session. "
        "Run a select (or show, describe, summarize, explain), or give --allow-writes to run "
        "it as it is, knowing that a write into the store can break it (`platform-audit "
        "store verify` checks it)",
        ExitCode.CONFIG,
    )
