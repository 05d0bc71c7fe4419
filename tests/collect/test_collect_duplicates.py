"""A key that comes twice within one snapshot: the first row is kept, the repeat reported."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from toolkit.collect import Owner
from toolkit.collect.conform import Conformer, merge_rows
from toolkit.collect.crawl_result import finish_tables
from toolkit.collect.deployments import map_deployment_page
from toolkit.collect.duplicate_keys import DUPLICATE_ID, drop_duplicates
from toolkit.collect.replica_events import event_rows
from toolkit.collect.replicas import map_replica_list
from toolkit.collect.row_buffer import RowBuffer, data_schema

T, P, E = "team-1", "project-1", "env-1"


def _service(service_id: str, name: str) -> dict[str, Any]:
    return {"id": service_id, "name": name, "team_id": T, "project_id": P, "environment_id": E}


def test_the_first_row_of_a_key_is_kept_and_each_repeat_reported() -> None:
    rows = [_service("s1", "api"), _service("s2", "web"), _service("s1", "api-copy")]
    rows.append(_service("s1", "api-third"))
    kept, errors = drop_duplicates("services", rows, ("services.list",))
    assert [(r["id"], r["name"]) for r in kept] == [("s1", "api"), ("s2", "web")]
    (error,) = errors
    assert error["error_type"] == DUPLICATE_ID
    assert error["endpoint"] == "services.list"
    assert error["table_name"] == "services" and error["column_name"] == "id"
    assert (error["team_id"], error["environment_id"], error["service_id"]) == (T, E, "s1")
    assert error["message"] == (
        "services: 3 rows share the key id=s1; kept the first received, dropped 2 "
        "(they differ in name)"
    )


def test_identical_copies_are_reported_as_identical() -> None:
    port = {"service_id": "s1", "source": "config", "port": 80, "protocol": "tcp"}
    kept, errors = drop_duplicates("service_ports", [port, dict(port)], ("services.list",))
    assert kept == [port]
    (error,) = errors
    assert error["column_name"] == "service_id, source, port, protocol"
    assert "key service_id=s1, source=config, port=80, protocol=tcp" in error["message"]
    assert error["message"].endswith("dropped 1 (identical copies)")


def test_rows_without_a_repeat_come_back_untouched() -> None:
    rows = [_service("s1", "api"), _service("s2", "api")]
    kept, errors = drop_duplicates("services", rows)
    assert kept is rows and errors == []


def test_an_arrow_table_loses_its_repeats_like_dicts() -> None:
    rows = [{"id": f"t{i % 3}", "name": f"team {i}"} for i in range(7)]
    table = pa.Table.from_pylist(rows, schema=data_schema("teams"))
    kept, errors = drop_duplicates("teams", table, ("teams.list",))
    dict_kept, dict_errors = drop_duplicates("teams", rows, ("teams.list",))
    assert isinstance(kept, pa.Table)
    assert kept.to_pylist() == pa.Table.from_pylist(dict_kept, schema=kept.schema).to_pylist()
    assert [r["name"] for r in dict_kept] == ["team 0", "team 1", "team 2"]
    strip = [{k: v for k, v in e.items() if k != "occurred_at"} for e in errors]
    assert strip == [{k: v for k, v in e.items() if k != "occurred_at"} for e in dict_errors]
    assert [e["team_id"] for e in errors] == ["t0", "t1", "t2"]


def test_finish_tables_reports_repeats_and_still_merges_what_comes_twice_by_design() -> None:
    conform = Conformer("test", Owner()).row
    buffer = RowBuffer()
    services = [conform("services", _service("s1", n)) for n in ("api", "other")]
    buffer.extend("services", services, source="services.list")
    deployment = {"id": "d1", "service_id": "s1", "team_id": T, "project_id": P}
    deployments = [conform("deployments", d) for d in (deployment, {**deployment, "status": "up"})]
    buffer.extend("deployments", deployments, source="services.list")
    failed = conform("collection_errors", {"endpoint": "variables.list", "error_type": "error"})
    buffer.append("collection_errors", failed)
    tables, duplicates = finish_tables(buffer)
    assert [r["name"] for r in tables["services"]] == ["api"]
    assert [r["status"] for r in tables["deployments"]] == ["up"]  # merged, not an error
    (duplicate,) = duplicates
    assert duplicate["table_name"] == "services" and duplicate["endpoint"] == "services.list"
    assert tables["collection_errors"] == [failed, duplicate]


def test_a_deployment_page_lists_each_deployment_once() -> None:
    page = [{"id": "d1", "status": "active"}, {"id": "d2"}, {"id": "d1", "status": "removed"}]
    rows = map_deployment_page(page, owner=Owner(T, P, E, "s1"), first_rank=20)
    assert [(r["id"], r["status"], r["history_rank"]) for r in rows["deployments"]] == [
        ("d1", "active", 20),
        ("d2", None, 21),
    ]
    (error,) = rows["collection_errors"]
    assert error["error_type"] == DUPLICATE_ID and error["endpoint"] == "deployments.list"
    assert error["service_id"] == "s1" and "they differ in status" in error["message"]


def test_a_replica_answer_lists_each_replica_once() -> None:
    pod = {"runtime_name": "api-0", "status": "running", "service_id": "s1"}
    rows = map_replica_list([pod, {**pod, "restart_count": 3}], owner=Owner(T, P, E))
    assert [r["restart_count"] for r in rows["replicas"]] == [None]
    (error,) = rows["collection_errors"]
    assert error["endpoint"] == "replicas.list" and error["table_name"] == "replicas"
    assert "key service_id=s1, runtime_name=api-0" in error["message"]


def test_two_events_of_one_replica_stay_two_when_drift_hides_their_types() -> None:
    # An OOM kill and the crash loop it started share their replica and start; drift gave
    # both the same unknown type. They are two events, told apart by their reasons.
    start = "2026-01-01T00:00:00Z"
    events = [
        {"type": "future-state", "reason": "OOMKilled", "first_seen": start, "count": 2},
        {"type": "future-state", "reason": "BackOff", "first_seen": start, "count": 9},
    ]
    owner = Owner(T, P, E, "s1")
    rows = event_rows(
        Conformer("replicas.list", owner), events, owner, source="replica", replica_name="api-0"
    )
    merged = merge_rows("replica_events", [*rows, *rows])  # seen again through /replicas/health
    assert sorted((r["reason"], r["count"]) for r in merged) == [("BackOff", 9), ("OOMKilled", 2)]
