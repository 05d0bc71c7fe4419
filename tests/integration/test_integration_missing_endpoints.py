"""A server that differs from the specification: never a silent "complete" snapshot.

A loopback proxy in front of the simulator answers `404 page not found` (text/plain, as a
Go router does) for some paths; a wrong base URL prefix is the simulator itself.
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import TYPE_CHECKING

import httpx
import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from click.testing import Result

HMAC_KEY = "integration-test-hmac-key-0123456789"
MISSING = ("/replicas/list", "/replicas/health", "/volumes/list", "/webhooks/list")
UNCOLLECTED = ("replica_health", "replicas", "volumes", "webhook_events", "webhooks")
SAID = ", ".join(UNCOLLECTED)


class MissingPathsProxy:
    """Forwards GETs to `target`, except `missing` paths: `404 page not found`, text/plain."""

    def __init__(self, target: str, missing: tuple[str, ...]) -> None:
        upstream = httpx.Client(base_url=target)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path in missing:
                    self._answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
                    return
                headers = {"authorization": self.headers.get("authorization", "")}
                reply = upstream.get(self.path, headers=headers)
                self._answer(reply.status_code, reply.content, reply.headers["content-type"])

            def _answer(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.upstream = upstream
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> MissingPathsProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.upstream.close()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Simulator, str]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fast.toml").write_text("[client]\nrate_per_minute = 0\nmax_attempts = 2\n")
    sim = Simulator(seed=22, services=6)
    with SimulatorServer(sim) as server:
        yield sim, server.base_url


def run(tmp_path: Path, sim: Simulator, base_url: str, *args: str) -> Result:
    env = {
        "PLATFORM_API_URL": base_url,
        "PLATFORM_API_KEY": sim.keys["admin"],
        "PLATFORM_AUDIT_STORE": str(tmp_path / "store"),
        "PLATFORM_AUDIT_HMAC_KEY": HMAC_KEY,
        "PLATFORM_AUDIT_CONFIG": str(tmp_path / "fast.toml"),
        "PLATFORM_AUDIT_LOG_LEVEL": None,
        "COLUMNS": "300",  # rich's tables: no folded cells
    }
    return CliRunner().invoke(app, list(args), env=env)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_wrong_prefix_is_refused_and_nothing_is_committed(
    world: tuple[Simulator, str], tmp_path: Path
) -> None:
    sim, base_url = world
    result = run(tmp_path, sim, f"{base_url}/api/go", "snapshot", "--quiet")
    out = flat(result.output)
    assert result.exit_code == ExitCode.UNREACHABLE, out
    assert "Nothing was committed" in out and "GET /api/go/" in out
    assert f"try --base-url {base_url};" in out and "/api/go/api/go" not in out
    store = tmp_path / "store"
    assert not store.exists() or not Store.open(str(store)).snapshots()


def test_missing_endpoints_make_a_partial_snapshot_that_every_output_states(
    world: tuple[Simulator, str], tmp_path: Path
) -> None:
    sim, base_url = world
    first = run(tmp_path, sim, base_url, "snapshot", "--quiet")
    assert first.exit_code == ExitCode.OK, first.output
    with MissingPathsProxy(base_url, MISSING) as proxy:
        result = run(tmp_path, sim, proxy.base_url, "snapshot", "--quiet")
    out = flat(result.output)
    assert result.exit_code == ExitCode.PARTIAL, out
    assert "(partial)" in out
    for table in UNCOLLECTED:
        assert f"│ {table} " in result.output and "not collected" in result.output
    for path in MISSING:
        endpoint = path.strip("/").replace("/", ".")
        assert f"endpoint missing: {endpoint}:" in out
        assert f"GET {path} answered 404, text/plain" in out
        assert f'[endpoints] "{endpoint}"' in out

    errors = json.loads(
        run(
            tmp_path, sim, base_url, "sql", "--format", "json",
            "select distinct endpoint, status, error_type, not_visible from collection_errors",
        ).stdout
    )  # fmt: skip
    assert {e["endpoint"] for e in errors} == {p.strip("/").replace("/", ".") for p in MISSING}
    assert {(e["status"], e["error_type"], e["not_visible"]) for e in errors} == {
        (404, "endpoint_missing", False)
    }

    listed = flat(run(tmp_path, sim, base_url, "store", "ls").output)
    assert "partial" in listed and "not collected" in listed
    assert SAID in listed

    partial_id = Store.open(str(tmp_path / "store")).snapshots()[-1].snapshot_id
    audit = run(tmp_path, sim, base_url, "audit", "--format", "json")
    assert audit.exit_code == 0, audit.output
    document = json.loads(audit.stdout)
    assert document["snapshot"]["snapshot_id"] == partial_id  # the newest, not skipped
    assert document["not_collected"] == {partial_id: list(UNCOLLECTED)}
    for finding in document["findings"]:  # never "fixed" for lack of a look
        if finding["check_id"][:3] in ("REP", "VOL", "WEB"):
            assert finding["state"] != "resolved", finding
    said = flat(audit.stderr)
    assert f"the judged snapshot {partial_id} is partial" in said
    assert f"not collected: {SAID}" in said
    assert "never as resolved" in said
    table = flat(run(tmp_path, sim, base_url, "audit").stdout)
    assert f"findings in snapshot {partial_id}" in table
    assert f"note: the judged snapshot {partial_id} is partial" in table

    report = run(tmp_path, sim, base_url, "report", "--format", "markdown")
    header = flat(report.stdout.split("## ", 1)[0])
    assert f"`{partial_id}`" in header and "is partial" in header
    assert "not collected: " + SAID.replace("_", "\\_") in header
    assert "is partial" in flat(report.stderr)

    diff = run(tmp_path, sim, base_url, "diff")
    assert diff.exit_code == 0, diff.output
    assert f"not collected: {SAID}" in flat(diff.stderr)
    assert f"not collected in --to {partial_id} (partial)" in flat(diff.stdout)
