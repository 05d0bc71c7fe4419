"""Serving: prefixes, the openapi document, faults on the live app, `serve()` and its keys file."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from typing import TYPE_CHECKING

import httpx

import toolkit.sim
from toolkit.sim import FaultProfile, Simulator, SimulatorServer
from toolkit.sim.cli_serve import write_keys_file

if TYPE_CHECKING:
    from pathlib import Path


def test_exports() -> None:
    assert sorted(toolkit.sim.__all__) == ["FaultProfile", "Simulator", "SimulatorServer", "serve"]
    for name in toolkit.sim.__all__:
        assert getattr(toolkit.sim, name) is not None


def test_prefix_serving_and_outside_paths() -> None:
    sim = Simulator(seed=2, services=5)
    with SimulatorServer(sim, prefix="/api/go") as server:
        assert server.base_url.endswith("/api/go")
        headers = {"Authorization": f"Bearer {sim.keys['viewer']}"}
        inside = httpx.get(f"{server.base_url}/users/me", headers=headers)
        assert inside.status_code == 200 and inside.json()["data"]["api_key"]["role"] == "viewer"
        root = server.base_url.removesuffix("/api/go")
        outside = httpx.get(f"{root}/users/me", headers=headers)
        assert outside.status_code == 404
        assert outside.json()["request_id"] == outside.headers["x-request-id"]
        document = httpx.get(f"{server.base_url}/openapi.json").json()
        assert document["servers"] == [{"url": "/api/go"}]
        assert "/services/list" in document["paths"]
    assert server.port > 0


def test_faults_apply_to_the_served_app() -> None:
    sim = Simulator(seed=2, services=5)
    with SimulatorServer(sim) as server:
        headers = {"Authorization": f"Bearer {sim.keys['admin']}"}
        sim.set_faults(FaultProfile(fail_first=1, fail_status=503))
        failed = httpx.get(f"{server.base_url}/teams/list", headers=headers)
        assert failed.status_code == 503 and "x-request-id" in failed.headers
        assert httpx.get(f"{server.base_url}/teams/list", headers=headers).status_code == 200
        sim.set_faults("none")


def test_keys_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text("old")
    path.chmod(0o644)
    sim = Simulator(seed=2, services=5)
    write_keys_file(path, "http://127.0.0.1:1", sim.keys)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    document = json.loads(path.read_text())
    assert set(document["keys"]) == {"admin", "editor", "viewer", "limited", "revoked", "expired"}
    assert document["keys"]["admin"] == sim.keys["admin"]


def test_serve_prints_url_writes_keys_and_stops_on_sigterm(tmp_path: Path) -> None:
    keys_out = tmp_path / "out" / "keys.json"
    code = (
        "from pathlib import Path; from toolkit.sim import serve; "
        f"serve('127.0.0.1', 0, 4, 8, 'none', Path({str(keys_out)!r}), '/api/go')"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/api/go")
        document = json.loads(keys_out.read_text())
        assert document["base_url"] == base_url
        assert stat.S_IMODE(keys_out.stat().st_mode) == 0o600
        headers = {"Authorization": f"Bearer {document['keys']['limited']}"}
        me = httpx.get(f"{base_url}/users/me", headers=headers).json()["data"]
        assert me["api_key"]["access"] == "limited"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
