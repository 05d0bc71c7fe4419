"""Running one check on a DuckDB connection: the derived views first, parameters bound.

The engine and the fixture tests share this, so a check behaves the same in both. Example::

    con = store.duckdb()
    install_views(con)
    table = run_check(con, spec, {"min_ratio": 6})   # an Arrow table in OUTPUT_COLUMNS
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import duckdb
import pyarrow as pa

from toolkit.audit.check_file import OUTPUT_COLUMNS, created_names
from toolkit.errors import CheckDefinitionError
from toolkit.snapshot.views import store_read_failure, store_unreadable

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "VIEWS",
    "DerivedViews",
    "ViewFile",
    "confine",
    "create_view",
    "ensure_views",
    "install_views",
    "nested_arrow",
    "outside_the_store",
    "parsed_views",
    "production_pattern",
    "require_shape",
    "require_text_columns",
    "run_check",
    "run_sql",
    "schema_views",
    "set_production",
    "sql_words",
    "view_files",
    "views_read",
    "views_reading",
]

VIEWS = Path(__file__).with_name("views")
"""Derived views (e.g. ``credential_reach``) defined before any check runs (:func:`view_files`)."""


def install_views(
    con: duckdb.DuckDBPyConnection, folder: Path = VIEWS, checks: Iterable[CheckSpec] | None = None
) -> None:
    """Create every ``<name>.sql`` view of ``folder`` (each file is one CREATE VIEW or
    macro), each after the views it reads (:func:`view_files`); with ``checks``, only
    those their SQL reads (:func:`views_read`).

    DuckDB binds a view when it creates it (a few milliseconds each, more for a view over
    other views), so a connection that runs a few checks is quicker to make with them."""
    for view in _chosen(folder, checks):
        create_view(con, view.path)


def views_read(folder: Path, sqls: Iterable[str]) -> list[Path]:
    """``folder``'s view files whose views or macros one of ``sqls`` reads, directly or
    through the others, in :func:`view_files` order (a name in a comment is not read)."""
    return [view.path for view in DerivedViews(folder).files_read(sqls)]


def views_reading(
    folder: Path, names: Collection[str], present: Collection[str] | None = None
) -> list[Path]:
    """``folder``'s view files that read one of ``names`` (tables, or views and macros of
    ``folder``), directly or through the others, in :func:`view_files` order; a file
    defining one of ``names`` is one of them. With ``present`` (the views and macros that
    exist: :func:`schema_views`), also each file creating one that does not.

    A scope that shadows some tables creates these in its schema: DuckDB binds the names in
    a view's SQL in the view's own schema, so a view left in ``main`` keeps reading
    ``main``'s tables whatever the search path. The other views read the same rows there.
    """
    chosen = set(names)
    found = []
    for view in parsed_views(folder):  # each after the files it reads
        missing = present is not None and not view.created <= set(present)
        if missing or view.defined & chosen or view.words & chosen:
            chosen |= view.defined
            found.append(view.path)
    return found


def schema_views(con: duckdb.DuckDBPyConnection, schema: str = "main") -> set[str]:
    """The views and macros of ``con``'s ``schema``."""
    rows = con.sql(
        "select view_name from duckdb_views() where schema_name = $schema and not internal "
        "union all select function_name from duckdb_functions() where schema_name = $schema "
        "and function_type in ('macro', 'table_macro') and not internal",
        params={"schema": schema},
    ).fetchall()
    return {str(row[0]) for row in rows}


def view_files(folder: Path = VIEWS) -> list[Path]:
    """``folder``'s view files in the order DuckDB can create them: each after the files
    defining a view or macro its SQL names (comments aside), in name order otherwise.

    DuckDB binds a view when it is created, so a view must follow those it reads; a file's
    name need not say where it stands. A cycle is a definition error naming its files.
    """
    return [view.path for view in parsed_views(folder)]


class ViewFile(NamedTuple):
    """A view file, read and parsed (:func:`parsed_views`)."""

    path: Path
    text: str
    created: frozenset[str]  # the views and macros it creates
    defined: frozenset[str]  # those, and the file's name
    words: frozenset[str]  # the words of its SQL, comments aside


def parsed_views(folder: Path = VIEWS) -> list[ViewFile]:
    """``folder``'s view files, each read and parsed once, in :func:`view_files` order.

    Files whose text is as it was at the last call are not parsed again: an audit plans
    several scopes, each reading the folder (4 ms a parsing, 0.4 ms a reading)."""
    texts = tuple((path, path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.sql")))
    known = _PARSED.get(str(folder))
    if known is not None and known[0] == texts:
        return list(known[1])
    ordered = _parsed(texts)
    if len(_PARSED) >= _MAX_PARSED:  # folders of tests, or of a long session
        _PARSED.clear()
    _PARSED[str(folder)] = (texts, tuple(ordered))
    return ordered


_PARSED: dict[str, tuple[tuple[tuple[Path, str], ...], tuple[ViewFile, ...]]] = {}
"""The last parsing of each folder, with the texts it parsed."""
_MAX_PARSED = 64


def _parsed(texts: Iterable[tuple[Path, str]]) -> list[ViewFile]:
    files = {}
    for path, text in texts:
        created = frozenset(created_names(text))
        defined = frozenset({path.stem, *created})
        files[path.stem] = ViewFile(path, text, created, defined, frozenset(sql_words(text)))
    owner = {name: stem for stem, view in files.items() for name in view.defined}
    reads = {
        stem: {owner[word] for word in view.words if word in owner} - {stem}
        for stem, view in files.items()
    }
    ordered: list[ViewFile] = []
    while files:
        ready = [stem for stem in files if not reads[stem] & files.keys()]
        if not ready:
            names = ", ".join(str(view.path) for view in files.values())
            raise CheckDefinitionError(f"these views read each other in a cycle: {names}")
        ordered.extend(files.pop(stem) for stem in ready)
    return ordered


class DerivedViews:
    """A folder's view files, each read and parsed once (:func:`parsed_views`), and what
    SQL reads through them."""

    def __init__(self, folder: Path = VIEWS) -> None:
        self.files = parsed_views(folder)
        self.names = [view.path.stem for view in self.files]
        """The files' names, in order."""
        self._words = {view.path.stem: view.words for view in self.files}
        # a file is read under any name it creates (ids_of_variables.sql: owner_of, ...)
        self._owner = {name: view.path.stem for view in self.files for name in view.defined}

    def names_read(self, sqls: Iterable[str]) -> set[str]:
        """The words of ``sqls`` and of every file they read, directly or through the
        others (comments aside: tables among them), and those files' names."""
        words: set[str] = set()
        read: set[str] = set()
        pending = [frozenset(sql_words(sql)) for sql in sqls]
        while pending:
            found = pending.pop()
            words |= found
            for stem in {self._owner[w] for w in found if w in self._owner} - read:
                read.add(stem)
                pending.append(self._words[stem])
        return words | read

    def files_read(self, sqls: Iterable[str]) -> list[ViewFile]:
        """The files ``sqls`` read, directly or through the others, in order."""
        read = self.names_read(sqls)
        return [view for view in self.files if view.path.stem in read]


def _chosen(folder: Path, checks: Iterable[CheckSpec] | None) -> list[ViewFile]:
    """``folder``'s view files in order: all, or those ``checks`` read."""
    derived = DerivedViews(folder)
    return derived.files if checks is None else derived.files_read(c.sql for c in checks)


def sql_words(sql: str) -> set[str]:
    """The words of ``sql`` outside its comments: every name it may read is one of them.

    A table or view named only in a comment (``-- unlike variables, ...``) is not read.
    """
    return set(_WORD.findall(_code(sql)))


def _code(sql: str) -> str:
    return _COMMENT.sub(lambda m: m.group("text") or " ", sql)


# A comment, or a string literal (kept: '--' in one starts no comment).
_COMMENT = re.compile(r"(?P<text>'(?:[^']|'')*')|--[^\n]*|/\*.*?\*/", re.DOTALL)
_WORD = re.compile(r"\w+")


def ensure_views(
    con: duckdb.DuckDBPyConnection,
    folder: Path = VIEWS,
    *,
    production: str | None = None,
    checks: Iterable[CheckSpec] | None = None,
) -> None:
    """Create the derived views that the connection's current schema does not have yet
    (with ``checks``, of those they read: :func:`views_read`).

    A file whose views and macros all exist is not run again, so a connection prepared
    earlier (a fixture's, a notebook's) is left as it is.
    ``production``: see :func:`set_production` (``settings.production_pattern``).
    """
    set_production(con, production)
    existing = schema_views(con, str(con.execute("select current_schema()").fetchall()[0][0]))
    for view in _chosen(folder, checks):
        if not view.created <= existing:
            create_view(con, view.path)


def set_production(con: duckdb.DuckDBPyConnection, pattern: str | None) -> None:
    """From now on ``con``'s views call an environment production when ``pattern`` (a
    regular expression) matches its name as ``views/all_resources.sql`` reads it; None
    leaves ``con`` as it is (unset, the view's default: "prod" or "production" as a word).

    The pattern is a DuckDB variable, so a view reads it without a parameter, and it holds
    for ``con`` alone: a cursor of ``con`` is another connection and needs its own call.
    """
    if pattern is not None:
        con.execute("SET VARIABLE production_pattern = ?", [pattern])


def production_pattern(con: duckdb.DuckDBPyConnection) -> str | None:
    """What :func:`set_production` gave ``con``, None when nothing."""
    rows = con.execute("select getvariable('production_pattern')").fetchall()
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def create_view(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Run one view file on ``con`` (its view or macros), naming the file in any error."""
    try:
        con.execute(path.read_text(encoding="utf-8"))
    except Exception as exc:  # DuckDB raises several types; name the file in every case
        if store_read_failure(exc):  # the store's files, not the view's SQL
            raise store_unreadable(path.stem, exc) from exc
        raise CheckDefinitionError(f"{path}: the view does not build: {exc}") from exc


def confine(con: duckdb.DuckDBPyConnection, store_url: str) -> None:
    """From now on ``con`` reads files only under the store's folder (an S3 store's rows
    come through Arrow: none), and never writes one; this cannot be undone.

    Checks are SQL anyone can add from a folder: unconfined, a check could read any file
    the user can (``read_text('/proc/self/environ')`` holds the API key, and the reason
    would carry it into a report) or write one with ``COPY``.
    """
    folders = [] if "://" in store_url else [str(Path(store_url).resolve()) + "/"]
    # SET takes no parameters: the folder is quoted here (a path from the configuration)
    listed = ", ".join("'" + folder.replace("'", "''") + "'" for folder in folders)
    con.execute(f"SET allowed_directories = [{listed}]")
    con.execute("SET enable_external_access = false")


def outside_the_store(spec: CheckSpec, exc: duckdb.Error) -> CheckDefinitionError:
    """The error for a check that tried to read or write a file (see :func:`confine`)."""
    return CheckDefinitionError(
        f"{spec.path}: the check reads or writes a file outside the store ({exc}); a "
        "check reads the store's tables and views only"
    )


def run_check(
    con: duckdb.DuckDBPyConnection, spec: CheckSpec, overrides: Mapping[str, object] | None = None
) -> pa.Table:
    """Run one check's SQL with its parameters bound; refuse output of the wrong shape."""
    # one query, whatever else the file holds (a check file is code, never a value)
    sql = f"select * from (\n{spec.sql}\n) as check_rows"  # noqa: S608
    result = run_sql(con, spec, sql, spec.bind(overrides))
    require_shape(spec, result.column_names, [nested_arrow(f.type) for f in result.schema])
    return result


def run_sql(
    con: duckdb.DuckDBPyConnection, spec: CheckSpec, sql: str, params: Mapping[str, object]
) -> pa.Table:
    """``sql`` (the check's, or the engine's query around it) as an Arrow table. A failure
    names the check's file, or is :class:`StoreUnavailable` when the store's files could
    not be read: those are not the check's fault."""
    try:
        result = con.sql(sql, params=dict(params)).to_arrow_table()
    except CheckDefinitionError:
        raise
    except duckdb.PermissionException as exc:  # see confine()
        raise outside_the_store(spec, exc) from exc
    except Exception as exc:  # DuckDB raises several types; name the file in every case
        if store_read_failure(exc):  # the store's files, not the check's SQL
            raise store_unreadable(spec.id, exc) from exc
        raise CheckDefinitionError(f"{spec.path}: the check failed to run: {exc}") from exc
    if result is None:
        raise CheckDefinitionError(f"{spec.path}: the check is not a query that returns rows")
    return result


_NESTED = {"struct", "list", "map", "union", "array"}


def nested_arrow(kind: pa.DataType) -> str | None:
    nested = pa.types.is_nested(kind) or pa.types.is_union(kind)
    return str(kind) if nested else None


def require_text_columns(
    con: duckdb.DuckDBPyConnection, spec: CheckSpec, params: dict[str, object]
) -> None:
    """Refuse a check whose columns differ from the contract or do not read as text, from
    its bound query (nothing runs): used to explain a check that failed to run."""
    try:  # wrapped, as every run is: the file's own text could hold more than a query
        relation = con.sql(f"select * from (\n{spec.sql}\n) as check_rows", params=params)  # noqa: S608
    except duckdb.PermissionException as exc:
        raise outside_the_store(spec, exc) from exc
    except Exception as exc:  # DuckDB raises several types; name the file in every case
        raise CheckDefinitionError(f"{spec.path}: the check failed to run: {exc}") from exc
    if relation is None:
        raise CheckDefinitionError(f"{spec.path}: the check is not a query that returns rows")
    nested = [str(kind) if kind.id in _NESTED else None for kind in relation.types]
    require_shape(spec, list(relation.columns), nested)


def require_shape(spec: CheckSpec, columns: Sequence[str], nested: Sequence[str | None]) -> None:
    """Refuse output columns other than :data:`OUTPUT_COLUMNS`, or of a nested type."""
    if tuple(columns) != OUTPUT_COLUMNS:
        raise CheckDefinitionError(
            f"{spec.path}: returns columns {', '.join(columns)}; a check must "
            f"return exactly {', '.join(OUTPUT_COLUMNS)}, in that order"
        )
    for name, kind in zip(columns, nested, strict=True):
        if kind is not None:
            raise CheckDefinitionError(
                f"{spec.path}: column {name} is {kind}, which does not read as text; "
                "return JSON text for evidence (to_json(struct_pack(...)))"
            )
