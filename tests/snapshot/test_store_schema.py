"""The declared schemas: shape, no secret columns, and a lossless round trip through Delta."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

import toolkit.snapshot as snapshot
from toolkit.snapshot import SNAPSHOT_TABLES, TABLES, Store, UnknownTableError, table

# A column that would hold a secret: ends in value/secret/password/token, or starts with secret.
SECRET_WORDS = re.compile(r"((^|_)(value|secret|secret_key|password|token)$)|^secret")


def test_public_names_are_exported_and_importable() -> None:
    assert sorted(snapshot.__all__) == sorted(set(snapshot.__all__))
    for name in snapshot.__all__:
        assert hasattr(snapshot, name), name


@pytest.mark.parametrize("name", list(TABLES))
def test_every_table_starts_with_the_snapshot_columns(name: str) -> None:
    schema = TABLES[name].arrow_schema
    assert schema.names[:2] == ["snapshot_id", "snapshot_at"]
    assert schema.field("snapshot_id").type == pa.string()
    assert not schema.field("snapshot_id").nullable
    assert schema.field("snapshot_at").type == pa.timestamp("us", tz="UTC")
    assert not schema.field("snapshot_at").nullable
    assert TABLES[name].keys[0] == "snapshot_id"
    assert all(k in schema.names for k in TABLES[name].keys)


def test_the_tables_the_design_names_are_declared() -> None:
    expected = {
        "snapshots", "teams", "projects", "environments", "services", "service_ports",
        "service_hosts", "service_volumes", "deployments", "replica_events", "replica_health",
        "replicas", "volumes", "variables", "variable_references", "webhooks", "webhook_events",
        "s3_buckets", "templates", "service_groups", "credentials", "credential_resources",
        "credential_probes",
        "collection_errors",
    }  # fmt: skip
    assert set(TABLES) == expected
    assert "snapshots" not in SNAPSHOT_TABLES


def test_variables_have_no_value_column_and_no_extra() -> None:
    names = TABLES["variables"].arrow_schema.names
    assert not [n for n in names if SECRET_WORDS.search(n)]
    assert "extra" not in names
    assert {"fingerprint", "value_length", "is_reference", "is_protected"} <= set(names)
    refs = TABLES["variable_references"].arrow_schema.names
    assert "resolved_value" not in refs


def test_no_table_has_a_secret_column() -> None:
    allowed = {"token"}  # variable_references.token is the ${{...}} expression, not a secret
    for t in TABLES.values():
        bad = [n for n in t.arrow_schema.names if SECRET_WORDS.search(n) and n not in allowed]
        assert not bad, (t.name, bad)
    assert "secret_access_key" not in TABLES["s3_buckets"].arrow_schema.names


def test_nested_lists_audits_query_are_lists_or_child_tables() -> None:
    services = TABLES["services"].arrow_schema
    for column in ("capabilities_add", "capabilities_drop", "protected_variables"):
        assert services.field(column).type == pa.list_(pa.string())
    assert TABLES["deployments"].arrow_schema.field("crashing_reasons").type == pa.list_(
        pa.string()
    )
    assert "port" in TABLES["service_ports"].arrow_schema.names
    assert "resource_id" in TABLES["credential_resources"].arrow_schema.names


def test_unknown_table_names_the_declared_ones() -> None:
    with pytest.raises(UnknownTableError, match="declared tables: snapshots, teams"):
        table("servicez")


def test_every_schema_round_trips_through_the_store(store: Store) -> None:
    writer = store.begin()
    for name in SNAPSHOT_TABLES:
        declared = TABLES[name]
        row = {c.name: _sample(c.type) for c in declared.columns}
        assert writer.write(name, [row]) == 1
    writer.commit()
    for name in TABLES:
        stored = store._dataset(name)
        assert stored is not None
        assert stored.schema.equals(TABLES[name].arrow_schema), name
    assert store.verify().ok


def _sample(t: pa.DataType) -> object:
    if pa.types.is_string(t):
        return "x"
    if pa.types.is_integer(t):
        return 1
    if pa.types.is_floating(t):
        return 1.5
    if pa.types.is_boolean(t):
        return True
    if pa.types.is_timestamp(t):
        return "2026-01-01T00:00:00Z"
    if pa.types.is_list(t):
        return [_sample(t.value_type)]
    return None
