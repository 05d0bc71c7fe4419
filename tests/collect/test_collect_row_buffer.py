"""The crawl's row buffer: when it converts, and that converted rows settle like dicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.collect import row_buffer
from toolkit.collect.conform import merge_rows
from toolkit.collect.crawl_result import finish_tables
from toolkit.collect.row_buffer import RowBuffer, data_schema, merge_table

if TYPE_CHECKING:
    import pytest
    from collect_world import Crawled


def _teams(count: int) -> list[dict[str, Any]]:
    return [{"id": f"t{i}", "name": f"team {i}"} for i in range(count)]


def test_a_small_crawl_keeps_dicts_and_a_large_one_converts() -> None:
    buffer = RowBuffer(budget=2, min_converted=1, small=5)
    buffer.extend("teams", _teams(4))
    assert isinstance(buffer.table("teams"), list)  # 4 rows gathered: not more than `small`
    buffer.extend("teams", _teams(6)[4:])
    assert isinstance(buffer.table("teams"), pa.Table)
    buffer.extend("teams", [{"id": "t6", "name": "late"}])  # waits as a dict, read back too
    assert [row["id"] for row in buffer["teams"]] == [f"t{i}" for i in range(7)]


def test_membership_does_not_turn_arrow_back_into_dicts(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = RowBuffer(budget=1, min_converted=1, small=0)
    buffer.extend("teams", _teams(3))

    def refuse(self: RowBuffer, table: str) -> list[dict[str, Any]]:
        raise AssertionError(f"{table} was converted back to dicts")

    monkeypatch.setattr(RowBuffer, "__getitem__", refuse)
    assert "teams" in buffer and "projects" not in buffer


def _with_repeats(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The crawl's rows, where each merged table also gets a sparse copy of every other row
    (as when a service list and a deployment page both carry a record)."""
    out = {name: [dict(row) for row in found] for name, found in rows.items()}
    for name in ("deployments", "replica_events", "replicas"):
        keys = [k for k in row_buffer.TABLES[name].keys if k != "snapshot_id"]
        sparse = [{k: row[k] for k in keys} for row in rows[name][::2]]
        flagged = [{**row, "is_current": None} for row in sparse] if name == "deployments" else []
        out[name] = [*sparse[: len(sparse) // 2], *out[name], *flagged, *sparse]
    return out


def test_converted_tables_settle_exactly_like_dicts(
    admin_crawl: Crawled, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(row_buffer, "_MERGE_SLICE", 5)  # many slices, keys never split
    rows = _with_repeats(admin_crawl.rows)
    as_dicts, as_arrow = RowBuffer(), RowBuffer(budget=7, min_converted=1, small=0)
    for buffer in (as_dicts, as_arrow):
        for name, found in rows.items():
            for start in range(0, len(found), 3):
                buffer.extend(name, found[start : start + 3])
    (dicts, dict_dups), (arrow, arrow_dups) = finish_tables(as_dicts), finish_tables(as_arrow)
    assert dict_dups == arrow_dups == []
    assert isinstance(arrow["deployments"], pa.Table) and isinstance(dicts["deployments"], list)
    for name, expected in dicts.items():
        settled = pa.Table.from_pylist(expected, schema=data_schema(name)).to_pylist()
        found = arrow[name]
        assert (found if isinstance(found, list) else found.to_pylist()) == settled, name


def test_merge_table_keeps_first_appearance_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_buffer, "_MERGE_SLICE", 2)
    rows = [
        {"id": "d1", "service_id": "s1", "team_id": "t", "project_id": "p", "status": None},
        {"id": "d2", "service_id": "s1", "team_id": "t", "project_id": "p", "status": "ok"},
        {"id": "d1", "service_id": "s1", "team_id": "t", "project_id": "p", "status": "failed"},
        {"id": "d3", "service_id": "s2", "team_id": "t", "project_id": "p", "status": "ok"},
        {"id": "d3", "service_id": "s2", "team_id": "t", "project_id": "p", "is_current": True},
        {"id": "d4", "service_id": "s2", "team_id": "t", "project_id": "p", "status": "ok"},
        {"id": "d1", "service_id": "s1", "team_id": "t", "project_id": "p", "is_last": True},
    ]
    schema = data_schema("deployments")
    merged = merge_table("deployments", pa.Table.from_pylist(rows, schema=schema))
    expected = pa.Table.from_pylist(merge_rows("deployments", rows), schema=schema)
    assert merged.to_pylist() == expected.to_pylist()
    assert [r["id"] for r in merged.to_pylist()] == ["d1", "d2", "d3", "d4"]
    assert merged.to_pylist()[0]["status"] == "failed" and merged.to_pylist()[0]["is_last"]
