"""THE canary test: no secret the simulator planted appears in any row, log line, progress
output, or byte the store writes, whichever key collects.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from collect_world import Crawled, crawl_world

from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.sim import Simulator, SimulatorServer


def _leaks(text: str, canaries: frozenset[str]) -> list[str]:
    return sorted(c for c in canaries if c in text)


def _dump(crawled: Crawled) -> str:
    return json.dumps(crawled.rows, default=str) + repr(crawled.output.result)


@pytest.mark.parametrize("key", ["admin", "editor", "viewer", "limited"])
def test_no_canary_in_rows_logs_or_progress(
    sim: Simulator, server: SimulatorServer, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    audited = {"viewer": sim.keys["viewer"], "revoked": sim.keys["revoked"]}
    crawled = crawl_world(server, sim.keys[key], audited=audited)
    canaries = sim.canaries()
    assert len(canaries) > 50
    assert crawled.rows["variables"] and crawled.rows["webhooks"]
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "GET" in logged  # the capture works: request lines are there
    assert _leaks(_dump(crawled), canaries) == []
    assert _leaks(logged, canaries) == []
    assert _leaks(crawled.progress, canaries) == []


def test_the_canaries_would_be_found(sim: Simulator, editor_crawl: Crawled) -> None:
    """The test above can fail: the values exist and are readable with the editor key."""
    planted = next(iter(sim.world.canaries))
    assert _leaks(f"x{planted}x", sim.canaries()) == [planted]
    assert any(r["fingerprint"] for r in editor_crawl.rows["variables"])


@pytest.mark.parametrize("fixture", ["admin_crawl", "viewer_crawl"])
def test_no_canary_in_any_byte_the_store_writes(
    sim: Simulator, tmp_path: Path, fixture: str, request: pytest.FixtureRequest
) -> None:
    crawled: Crawled = request.getfixturevalue(fixture)
    store = Store.open(tmp_path / "store")
    writer = store.begin(meta={"base_url": "http://sim.test"})
    for table, rows in crawled.rows.items():
        writer.write(table, rows)
    writer.commit(status=crawled.output.result.status, meta=crawled.output.result.snapshot_meta())
    canaries = sim.canaries()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        data = path.read_bytes()
        assert [c for c in canaries if c.encode() in data] == [], path
        if path.suffix == ".parquet":
            text = json.dumps(pq.read_table(path).to_pylist(), default=str)
            assert _leaks(text, canaries) == [], path
    counts = store.duckdb().sql("select count(*) from variables_latest").fetchall()
    assert counts == [(len(crawled.rows["variables"]),)]


def test_values_are_fingerprinted_not_stored(
    editor_crawl: Crawled, admin_crawl: Crawled, viewer_crawl: Crawled
) -> None:
    def by_key(crawled: Crawled) -> dict[tuple[object, ...], dict[str, object]]:
        return {
            (
                r["level"],
                r["team_id"],
                r["project_id"],
                r["environment_id"],
                r["service_id"],
                r["name"],
            ): r
            for r in crawled.rows["variables"]
        }

    editor, admin, viewer = by_key(editor_crawl), by_key(admin_crawl), by_key(viewer_crawl)
    assert editor.keys() == admin.keys() == viewer.keys()
    for key, row in editor.items():
        assert row["values_redacted"] is False
        assert row["fingerprint"] == admin[key]["fingerprint"] and row["value_length"]
        hidden = viewer[key]
        assert hidden["values_redacted"] is True
        assert hidden["fingerprint"] is None and hidden["value_length"] is None
        assert hidden["is_reference"] == row["is_reference"]
    refs = {r["token"] for r in viewer_crawl.rows["variable_references"]}
    assert refs == {r["token"] for r in editor_crawl.rows["variable_references"]}


def test_webhook_urls_are_redacted(sim: Simulator, admin_crawl: Crawled) -> None:
    hooks = {r["id"]: r for r in admin_crawl.rows["webhooks"]}
    userinfo = hooks[sim.planted["webhook_userinfo"]]
    assert userinfo["url"] == "https://hooks.example.net/notify"
    assert userinfo["url_host"] == "hooks.example.net"
    token = hooks[sim.planted["webhook_token"]]
    assert token["url"] == "https://hooks.example.org/in?token=***&channel=***"
    private = hooks[sim.planted["webhook_private"]]
    assert private["url"] == "http://10.0.12.7:8080/hook" and private["url_scheme"] == "http"


def test_a_leaking_collector_is_caught(
    fresh: tuple[Simulator, SimulatorServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Break the fingerprint on purpose (value in, value out): the scan must see it."""
    from toolkit.snapshot.redaction import Fingerprinter

    sim, server = fresh
    monkeypatch.setattr(Fingerprinter, "of", lambda self, value: value)
    crawled = crawl_world(server, sim.keys["editor"])
    assert _leaks(_dump(crawled), sim.canaries()) != []
