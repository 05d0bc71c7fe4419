"""Free text is stored bounded: a prefix, scrubbed, and the original length."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from toolkit.collect.conform import Conformer, Owner, extra_json
from toolkit.snapshot.free_text import FREE_TEXT_LIMIT, TRUNCATED, stored_text
from toolkit.snapshot.schema_tables import TABLES

HUGE = 5_000_000
_FREE_TEXT_COLUMNS = sorted(
    (table.name, column.name)
    for table in TABLES.values()
    for column in table.columns
    if column.free_text
)


def test_short_text_is_only_scrubbed() -> None:
    text = "retry postgres://app:hunter2@db/app"
    assert stored_text(text) == "retry postgres://***@db/app"
    assert stored_text("x" * FREE_TEXT_LIMIT) == "x" * FREE_TEXT_LIMIT


def test_long_text_keeps_a_prefix_and_its_length() -> None:
    stored = stored_text("ab" * (HUGE // 2))
    marker = TRUNCATED.format(length=HUGE)
    assert stored == ("ab" * FREE_TEXT_LIMIT)[:FREE_TEXT_LIMIT] + marker
    assert marker == "…[truncated, 5000000 chars]"


@pytest.mark.parametrize("offset", [-40, -10, -1, 0, 5, 200, 900, 1020, 1030])
def test_a_credential_cut_by_the_limit_is_never_kept(offset: int) -> None:
    secret = "hunter2hunter2hunter2"
    for form in (f"postgres://app:{secret}@db/app", f"password={secret} ", f"--token {secret} "):
        at = FREE_TEXT_LIMIT + offset
        text = "x" * (at - 1) + " " + form + "y" * HUGE
        stored = stored_text(text)
        assert "hunter2" not in stored, (form, offset)
        assert stored.endswith(TRUNCATED.format(length=len(text)))


@pytest.mark.parametrize(("table", "column"), _FREE_TEXT_COLUMNS)
def test_every_free_text_column_is_bounded_when_conformed(table: str, column: str) -> None:
    declared = TABLES[table]
    values: dict[str, object] = {
        c.name: "x" for c in declared.columns if not c.nullable and c.type == pa.string()
    }
    huge = "password=hunter2 " + "z" * HUGE
    many = pa.types.is_list(declared.column(column).type)
    values[column] = [huge] if many else huge
    row = Conformer("test", Owner()).row(table, values)
    assert row is not None
    stored = row[column][0] if many else row[column]
    assert stored.startswith("password=*** zzz")
    assert stored.endswith(TRUNCATED.format(length=len(huge)))
    assert len(stored) < FREE_TEXT_LIMIT + 40


def test_unknown_string_fields_are_bounded_in_extra() -> None:
    extra = extra_json({"notes": {"body": "q" * HUGE}})
    assert extra is not None and len(extra) < FREE_TEXT_LIMIT + 100
    body = json.loads(extra)["notes"]["body"]
    assert body.endswith(TRUNCATED.format(length=HUGE))
