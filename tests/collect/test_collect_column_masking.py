"""Every string column declares a kind, and its kind's rule masks it before it is stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

from toolkit.collect.conform import Conformer, Owner
from toolkit.snapshot import TABLES, Store
from toolkit.snapshot.column_masking import RULES, mask
from toolkit.snapshot.schema import Column, Kind, holds_text

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "CANARYcolumn0secret0value"
PINNED = "registry.example/app:1.0@sha256:" + "a" * 64
UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
_STRING_COLUMNS = sorted(
    (table.name, column.name)
    for table in TABLES.values()
    for column in table.columns
    if holds_text(column.type)
)
# Kinds whose values the toolkit writes itself (never a server's text) and keeps as they are.
_KEPT = {Kind.TOOLKIT, Kind.JSON}


def test_every_string_column_declares_a_kind_with_a_rule() -> None:
    assert len(_STRING_COLUMNS) > 100
    kinds = {TABLES[t].column(c).kind for t, c in _STRING_COLUMNS}
    assert None not in kinds
    assert set(RULES) == set(Kind)


def test_a_string_column_without_a_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="declare its kind"):
        Column("note", pa.string())
    with pytest.raises(ValueError, match="declare its kind"):
        Column("notes", pa.list_(pa.string()))


def test_only_the_toolkit_writes_the_columns_kept_as_they_are() -> None:
    """A column of a server's text declared `toolkit` would skip masking: keep the list short
    and reviewed."""
    kept = {(t, c) for t, c in _STRING_COLUMNS if TABLES[t].column(c).kind in _KEPT}
    assert {c for _, c in kept} <= {
        "extra", "endpoint", "method", "table_name", "column_name", "level", "source", "status",
        "resource_type", "fingerprint", "token_fingerprint", "url_address", "url_address_kind",
        "toolkit_version", "row_counts", "request_stats", "content_hash", "prev_hash",
        "chain_hash", "value_kind",
    }  # fmt: skip
    assert ("s3_buckets", "endpoint") not in kept
    assert ("collection_errors", "error_type") not in kept


_SERVER_COLUMNS = [
    (t, c) for t, c in _STRING_COLUMNS if TABLES[t].column(c).kind not in _KEPT and t != "snapshots"
]
_PLANTED = [
    f"https://robot:{SECRET}@registry.example.com/team/app:1.2",
    f"/?sig={SECRET}",
    f"src/**?key={SECRET}",
    f"/hooks;token={SECRET}",
    f"deploy-bot password={SECRET}",
]


@pytest.mark.parametrize(("table", "column"), _SERVER_COLUMNS)
def test_no_column_keeps_url_userinfo_or_credential_values(table: str, column: str) -> None:
    declared = TABLES[table]
    many = pa.types.is_list(declared.column(column).type)
    required = {c.name: 0 if c.type == pa.int64() else "x" for c in declared.columns}
    for planted in _PLANTED:
        row = Conformer("test", Owner()).row(
            table, {**required, column: [planted] if many else planted}
        )
        assert row is not None
        stored = row[column][0] if many else row[column]
        assert SECRET not in stored, (planted, stored)


@pytest.mark.parametrize(
    ("table", "column"),
    [(t, c) for t, c in _SERVER_COLUMNS if TABLES[t].column(c).kind in (Kind.URL, Kind.IMAGE)],
)
def test_references_without_a_scheme_lose_their_login(table: str, column: str) -> None:
    """`user:password@host/...`, as image references and S3 endpoints are written."""
    many = pa.types.is_list(TABLES[table].column(column).type)
    planted = f"robot:{SECRET}@registry.example.com/team/app:1.2"
    row = Conformer("test", Owner()).row(table, {"id": "x", column: [planted] if many else planted})
    assert row is not None
    assert (row[column][0] if many else row[column]) == "registry.example.com/team/app:1.2"


@pytest.mark.parametrize(
    ("kind", "value", "stored"),
    [
        (Kind.IMAGE, f"https://robot:{SECRET}@registry.example/team/app:1", "https://registry.example/team/app:1"),
        (Kind.IMAGE, f"robot:{SECRET}@registry.example/team/app:1", "registry.example/team/app:1"),
        (Kind.IMAGE, PINNED, PINNED),
        (Kind.IMAGE, "postgres:16", "postgres:16"),
        (Kind.URL, f"https://{SECRET}@github.com/acme/api", "https://github.com/acme/api"),
        (Kind.URL, f"https://s3.example.com/?X-Amz-Signature={SECRET}", "https://s3.example.com/?X-Amz-Signature=***"),
        (Kind.URL, f"minio:{SECRET}@s3.internal:9000", "s3.internal:9000"),
        (Kind.URL, "git@github.com:acme/api.git", "git@github.com:acme/api.git"),
        (Kind.URL, "https://GitHub.com/Acme/Api", "https://GitHub.com/Acme/Api"),
        (Kind.URL_PATH, f"/?sig={SECRET}", "/?sig=***"),
        (Kind.URL_PATH, f"/api;token={SECRET}/v1", "/api;token=***/v1"),
        (Kind.URL_PATH, f"//robot:{SECRET}@cdn.example/x", "//cdn.example/x"),
        (Kind.URL_PATH, "/", "/"),
        (Kind.FILE_PATH, f"src/**?key={SECRET}", "src/**?key=***"),
        (Kind.FILE_PATH, "src/**/*.py", "src/**/*.py"),
        (Kind.NAME, f"https://ci:{SECRET}@git.example", "https://***@git.example"),
        (Kind.NAME, "Jane Doe", "Jane Doe"),
        (Kind.REQUEST_ID, UUID, UUID),
        (Kind.REQUEST_ID, f"token={SECRET}", "***"),
        (Kind.REQUEST_ID, "x" * 129, "***"),
    ],
)  # fmt: skip
def test_each_kind_masks_by_its_rule(kind: Kind, value: str, stored: str) -> None:
    assert mask(kind, value) == stored


def test_collection_errors_keep_only_a_plain_request_id() -> None:
    conformer = Conformer("services.list", Owner())
    values = {"endpoint": "services.list", "request_id": f"https://x.example/?sig={SECRET}"}
    row = conformer.row("collection_errors", values)
    assert row is not None and row["request_id"] == "***"


def test_the_snapshots_row_is_masked_by_its_kinds(tmp_path: Path) -> None:
    """The writer builds the `snapshots` row itself; its base_url goes through the url rule."""
    store = Store.open(tmp_path / "store")
    base_url = f"https://audit:{SECRET}@platform.example/api/go?key={SECRET}"
    info = store.begin(meta={"base_url": base_url}).commit()
    assert info.base_url == "https://platform.example/api/go?key=***"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert [p for p in files if SECRET.encode() in p.read_bytes()] == []
