"""An endpoint the server lacks is a failure that names itself, never "not visible"."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from collect_world import crawl_world

from toolkit.errors import PlatformUnavailable
from toolkit.sim import FaultProfile

if TYPE_CHECKING:
    from toolkit.sim import Simulator, SimulatorServer

World = tuple["Simulator", "SimulatorServer"]
MISSING = ("/replicas/list", "/replicas/health", "/volumes/list", "/webhooks/list")


def test_a_plain_text_404_makes_the_crawl_partial_and_names_the_endpoint(
    fresh: World, caplog: pytest.LogCaptureFixture
) -> None:
    sim, server = fresh
    with caplog.at_level("WARNING", logger="toolkit.collect"):
        crawled = crawl_world(server, sim.keys["admin"], missing=MISSING)
    result, rows = crawled.output.result, crawled.rows
    assert result.status == "partial"
    errors = rows["collection_errors"]
    by_endpoint = {row["endpoint"]: row for row in errors}
    expected = {"replicas.list", "replicas.health", "volumes.list", "webhooks.list"}
    assert set(by_endpoint) == expected
    for endpoint, row in by_endpoint.items():
        path = "/" + endpoint.replace(".", "/")
        assert (row["status"], row["error_type"], row["not_visible"]) == (
            404,
            "endpoint_missing",
            False,
        )
        assert "not visible" not in row["message"]
        assert f"GET {path} answered 404, text/plain" in row["message"]
        assert f'[endpoints] "{endpoint}"' in row["message"]
    assert not rows["replicas"] and not rows["volumes"] and not rows["webhooks"]
    assert len(rows["services"]) == len(sim.world.services)  # the rest was collected
    logged = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    for endpoint in expected:  # once each, however many calls failed
        assert sum(f"the server has no endpoint {endpoint} (GET" in m for m in logged) == 1


def test_a_403_from_a_permission_check_is_a_failure_not_a_missing_endpoint(
    fresh: World,
) -> None:
    sim, server = fresh
    sim.set_faults(FaultProfile(fail_first=1, fail_status=403, paths=("/volumes/list",)))
    crawled = crawl_world(server, sim.keys["admin"])
    (row,) = crawled.rows["collection_errors"]
    assert (row["status"], row["error_type"], row["not_visible"]) == (403, "forbidden", False)
    assert crawled.output.result.status == "partial"


@pytest.mark.parametrize("path", ["/users/me", "/teams/list"])
def test_a_missing_root_endpoint_refuses_the_crawl(fresh: World, path: str) -> None:
    sim, server = fresh
    with pytest.raises(PlatformUnavailable) as caught:
        crawl_world(server, sim.keys["admin"], missing=(path,))
    text = str(caught.value)
    assert f"GET {path}" in text and "404 (text/plain" in text
    assert f"--base-url {server.base_url}/api/go" in text
    assert "Nothing was committed" in text


def test_a_wrong_prefix_is_refused_with_a_prefix_that_is_not_doubled(fresh: World) -> None:
    sim, server = fresh  # the simulator answers its error object, not_found, on any path
    with pytest.raises(PlatformUnavailable) as caught:
        crawl_world(server, sim.keys["admin"], base_url=f"{server.base_url}/api/go")
    text = str(caught.value)
    assert "GET /api/go/users/me" in text or "GET /api/go/teams/list" in text
    assert f"try --base-url {server.base_url};" in text
    assert "/api/go/api/go" not in text
