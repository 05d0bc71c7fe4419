"""What the simulator's tests share: a tiny httpx-based client bound to one token, and id helpers.

Imported by `conftest.py` and the test modules (pytest puts this folder on `sys.path`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from toolkit.sim import Simulator, SimulatorServer


@dataclass
class Api:
    """A tiny client bound to one token; `data()` asserts success and unwraps the envelope."""

    client: httpx.Client

    def get(self, path: str, **params: str) -> httpx.Response:
        return self.client.get(path, params=params)

    def data(self, path: str, **params: str) -> Any:
        response = self.get(path, **params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"data"}, body
        return body["data"]

    def send(self, method: str, path: str, body: Any) -> httpx.Response:
        return self.client.request(method, path, json=body)


ApiFactory = Callable[[str], Api]


def service_ids(sim: Simulator, service_id: str) -> dict[str, str]:
    """The four ids a service-level request names, read from the world."""
    service = sim.world.services[service_id]
    return {
        "team_id": service.team_id,
        "project_id": service.project_id,
        "environment_id": service.environment_id,
        "service_id": service.id,
    }


def make_factory(sim: Simulator, base_url: str, clients: list[httpx.Client]) -> ApiFactory:
    tokens = {**sim.keys, **sim.extra_keys}

    def make(name: str) -> Api:
        token = tokens.get(name, name)
        client = httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        clients.append(client)
        return Api(client)

    return make


@dataclass
class Fresh:
    sim: Simulator
    server: SimulatorServer
    api: ApiFactory
