"""The tables reference: every table of the store, from its declaration in Arrow types.

``toolkit.snapshot.schema_tables.DECLARED`` holds a snapshot's tables and the findings
history's; each gives its description, key and columns (name, Arrow type, nullability, the
kind of text a string column holds, and a one-line description). The kinds' meanings are
the docstrings of :class:`toolkit.snapshot.schema.Kind`'s members.
"""

from __future__ import annotations

import ast
import inspect
import re

from reference_pages.markdown import code, prose, row
from toolkit.audit.check_run import VIEWS, parsed_views
from toolkit.snapshot.schema import SCHEMA_VERSION, Kind, Table
from toolkit.snapshot.schema_tables import DECLARED, FINDINGS_TABLES

__all__ = ["derived_view_names", "schema_page", "table_names"]

# What a view file creates: a view, a macro or a table macro, with its parameters.
_CREATED = re.compile(
    r"create\s+or\s+replace\s+(?P<what>view|macro)\s+(?P<name>\w+)\s*(?P<args>\([^)]*\))?"
    r"(?P<table>\s+as\s+table)?",
    re.IGNORECASE,
)
# A column description that says a number stands for "not set" (spec part 2.3: -1 occurs).
_SENTINEL = re.compile(r"(?<![\w.])-1\b")


def table_names() -> list[str]:
    """Every declared table, in the page's order."""
    return list(DECLARED)


def schema_page() -> str:
    """The Markdown of ``reference/schema.md``."""
    lines = [
        "# Tables and columns",
        "",
        f"Every table of the store (schema version {SCHEMA_VERSION}), generated from its "
        f"declaration in Arrow types ({code('toolkit/snapshot/schema_*.py')}) when the site is "
        "built. Each snapshot table is a DuckDB view of the same name over every snapshot "
        f"(`platform-audit sql`, the notebooks), and {code('<table>_latest')} over the newest; "
        f"every row starts with {code('snapshot_id')} and {code('snapshot_at')}. The findings "
        f"history ({', '.join(code(t) for t in FINDINGS_TABLES)}) and the findings' marks "
        f"kept from it ({code('finding_marks')}) are written by the audit, never part of a "
        "snapshot.",
        "",
        *_sentinels(),
        row("table", "what a row is", "columns"),
        row("---", "---", "---"),
    ]
    for name, table in DECLARED.items():
        columns = str(len(table.arrow_schema))
        lines.append(row(f"[{code(name)}](#{name})", prose(table.doc), columns))
    lines.append("")
    for name, table in DECLARED.items():
        lines += _table(name, table)
    lines += _derived_views()
    lines += _kinds()
    return "\n".join(lines) + "\n"


def _sentinels() -> list[str]:
    """A warning naming every column whose description says -1 occurs in it."""
    found = [
        f"{code(name + '.' + column.name)} ({prose(column.doc)})"
        for name, table in DECLARED.items()
        for column in table.columns
        if _SENTINEL.search(column.doc)
    ]
    if not found:
        return []
    return [
        '!!! warning "-1 means not set"',
        "",
        "    The platform reports -1 in these columns where no value is set (specification "
        "part 2.3): " + "; ".join(found) + ". Leave it out of sums and averages, e.g. "
        "`avg(nullif(memory_limits_megabytes, -1))`.",
        "",
    ]


def _table(name: str, table: Table) -> list[str]:
    keys = ", ".join(code(k) for k in table.keys)
    lines = [f"## {name} {{ #{name} }}", "", prose(table.doc), "", f"Key: {keys}.", ""]
    lines += [
        row("column", "type", "null", "kind", "description"),
        row("---", "---", "---", "---", "---"),
    ]
    for field in table.arrow_schema:
        column = table.column(field.name)
        kind = f"[{column.kind.value}](#kinds)" if column.kind else ""
        lines.append(
            row(
                code(field.name),
                code(str(field.type)),
                "yes" if field.nullable else "no",
                kind,
                prose(column.doc),
            )
        )
    return [*lines, ""]


def derived_view_names() -> list[str]:
    """Every view and macro the audit's view files create, in the page's order."""
    return [name for view in parsed_views(VIEWS) for name in sorted(view.created)]


def _derived_views() -> list[str]:
    """The audit's derived views and macros, each with the comment its file opens with."""
    lines = [
        "## Derived views { #derived-views }",
        "",
        "Views and macros over the tables above that the checks share "
        f"({code('toolkit/audit/views/<name>.sql')}). A notebook creates them on its DuckDB "
        "connection with `from toolkit.audit import ensure_views; ensure_views(con)`. Each is "
        "listed after those it reads, with the comment its file opens with.",
        "",
    ]
    for view in parsed_views(VIEWS):
        opening = []
        for line in view.text.splitlines():
            if not line.startswith("--"):
                break
            opening.append(line.removeprefix("--").strip())
        created = [
            f"{code(match['name'] + (match['args'] or ''))} "
            f"({'table macro' if match['table'] else match['what'].lower()})"
            for match in _CREATED.finditer(view.text)
        ]
        lines.append(f"- **{', '.join(created)}**: {prose(' '.join(opening))}")
    return [*lines, ""]


def _kinds() -> list[str]:
    """The kinds of text, from the docstring under each member of :class:`Kind`."""
    body = ast.parse(inspect.getsource(Kind)).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for statement, after in zip(body.body, body.body[1:], strict=False):
        if isinstance(statement, ast.Assign) and isinstance(after, ast.Expr):
            target = statement.targets[0]
            if isinstance(target, ast.Name) and isinstance(after.value, ast.Constant):
                docs[target.id] = str(after.value.value)
    lines = [
        "## Kinds of text { #kinds }",
        "",
        prose(inspect.cleandoc(Kind.__doc__ or "")),
        "",
        row("kind", "what the column holds"),
        row("---", "---"),
    ]
    for member in Kind:
        lines.append(row(code(member.value), prose(docs.get(member.name, ""))))
    return [*lines, ""]
