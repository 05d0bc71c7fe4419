"""A server that puts credentials where no scrubber looked: no byte of them reaches the disk.

The simulator's answers pass through a transport that plants a secret of its own in each
place the platform (or a hostile server) may carry one: URL userinfo in service and
deployment images, init container images and an S3 bucket's endpoint; credential query
values in host paths and watch paths; a commit author's name; a bucket's `secret_key` (the
platform's public source returns it) and unknown fields named like credentials; a request
id in an error body and its header. Every file the store then holds (rows, Parquet footers
and the Delta log) and every DEBUG log line are searched for every planted secret.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import httpx
import pyarrow.parquet as pq
from collect_world import CountingTransport, crawl_world

from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from toolkit.sim import Simulator, SimulatorServer

PLANTED = {
    "image": "CANARYhostile0image",
    "init": "CANARYhostile0init",
    "host_path": "CANARYhostile0hostpath",
    "watch": "CANARYhostile0watch",
    "author": "CANARYhostile0author",
    "endpoint_login": "CANARYhostile0endpoint",
    "endpoint_query": "CANARYhostile0signature",
    "secret_key": "CANARYhostile0secretkey",
    "unknown_secret": "CANARYhostile0unknown",
    "unknown_token": "CANARYhostile0nested",
    "request_id": "CANARYhostile0requestid",
}
_FAILING_PATH = "/replicas/list"


def _plant(value: Any) -> Any:
    """``value`` (a decoded answer) with the planted secrets where they belong."""
    if isinstance(value, list):
        return [_plant(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _plant(item) for key, item in value.items()}
    if "image" in out:
        out["image"] = f"https://robot:{PLANTED['image']}@registry.example.com/team/app:1.2"
    if "init_containers" in out:
        out["init_containers"] = [{"image": f"robot:{PLANTED['init']}@registry.example.com/i:1"}]
    if "watch_paths" in out:
        out["watch_paths"] = [f"src/**?key={PLANTED['watch']}"]
    if "target_port" in out and "path" in out:  # a service's host
        out["path"] = f"/?sig={PLANTED['host_path']}"
    if isinstance(out.get("commit_author"), dict):
        out["commit_author"]["name"] = f"https://ci:{PLANTED['author']}@git.example.com"
    if "access_key" in out:  # an S3 bucket
        out["endpoint"] = (
            f"https://minio:{PLANTED['endpoint_login']}@s3.example.com/"
            f"?X-Amz-Signature={PLANTED['endpoint_query']}"
        )
        out["secret_key"] = PLANTED["secret_key"]
        out["secret_access_key"] = PLANTED["unknown_secret"]
        out["session"] = {"token": PLANTED["unknown_token"]}
    return out


class HostileTransport(CountingTransport):
    """The simulator's answers with secrets planted; one path fails with a hostile request id."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        await response.aread()
        if request.url.path.endswith(_FAILING_PATH):
            hostile = f"req?token={PLANTED['request_id']}"
            body = {
                "type": "internal_error",
                "status": 500,
                "message": "boom",
                "request_id": hostile,
            }
            return httpx.Response(500, json=body, headers={"X-Request-Id": hostile})
        if response.status_code != 200:
            return response
        body = _plant(json.loads(response.content))
        return httpx.Response(200, json=body, headers={"X-Request-Id": "req-1"})


def test_no_planted_secret_reaches_any_byte_or_log(
    sim: Simulator, server: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="toolkit")  # whatever an earlier command set
    crawled = crawl_world(server, sim.keys["admin"], transport=HostileTransport(), max_attempts=1)
    rows = crawled.rows
    assert rows["s3_buckets"] and rows["deployments"] and rows["service_hosts"]
    assert any(e["endpoint"] == "replicas.list" for e in rows["collection_errors"])

    store = Store.open(tmp_path / "store")
    writer = store.begin(meta={"base_url": server.base_url})
    for table, table_rows in rows.items():
        writer.write(table, table_rows)
    writer.commit(status="partial", meta=crawled.output.result.snapshot_meta())
    store.compact()

    secrets = set(PLANTED.values())
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    leaks = {"DEBUG log": sorted(s for s in secrets if s in logged)}
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".parquet" and "_delta_log" not in path.parts:
            data += json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
        leaks[str(path.relative_to(tmp_path))] = sorted(s for s in secrets if s.encode() in data)
    assert {where: found for where, found in leaks.items() if found} == {}
    assert "request_id=***" in logged  # the capture worked, and the failed call was logged


def test_what_the_masking_keeps_is_still_useful(sim: Simulator, server: SimulatorServer) -> None:
    rows = crawl_world(server, sim.keys["admin"], transport=HostileTransport()).rows
    service = rows["services"][0]
    assert service["image"] == "https://registry.example.com/team/app:1.2"
    assert service["init_container_images"] == ["registry.example.com/i:1"]
    assert service["watch_paths"] == ["src/**?key=***"]
    assert {h["path"] for h in rows["service_hosts"]} == {"/?sig=***"}
    assert {d["commit_author_name"] for d in rows["deployments"]} == {"https://***@git.example.com"}
    bucket = rows["s3_buckets"][0]
    assert bucket["endpoint"] == "https://s3.example.com/?X-Amz-Signature=***"
    extra = json.loads(bucket["extra"])
    assert extra["secret_key"] == extra["secret_access_key"] == "***"
    assert extra["session"] == {"token": "***"}
    failed = [e for e in rows["collection_errors"] if e["endpoint"] == "replicas.list"]
    assert failed and {e["request_id"] for e in failed} == {"***"}
