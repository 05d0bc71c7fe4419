"""A small served world, a store folder and a fast config, for driving `platform-audit schedule`.

`Job` runs the command in-process (typer's CliRunner) or as a subprocess, with its settings
in the environment; the TOML file switches the client's rate limit off and keeps retries,
backoff and audit short, so each run takes about a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from toolkit.cli import app
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from click.testing import Result

HMAC_KEY = "schedule-test-hmac-key-0123456789abcdef"
FAST = """\
[client]
rate_per_minute = 0
max_attempts = 2

[schedule]
backoff = "0.2s"
backoff_max = "0.5s"
audit = false
"""
_UNSET = ("PLATFORM_AUDIT_CONFIG", "PLATFORM_AUDIT_LOG_LEVEL", "PLATFORM_AUDIT_WEBHOOK")


class Job:
    """A served world, a store, a status file and a config file; runs the job against them."""

    def __init__(self, sim: Simulator, server: SimulatorServer, tmp_path: Path) -> None:
        self.sim, self.server, self.tmp = sim, server, tmp_path
        self.store = tmp_path / "store"
        self.status_file = tmp_path / "status.json"
        self.config = tmp_path / "platform-audit.toml"
        self.config.write_text(FAST, encoding="utf-8")

    def configure(self, extra: str) -> None:
        """Append TOML to the config (new sections only)."""
        self.config.write_text(FAST + extra, encoding="utf-8")

    def env(self, key: str = "admin", **extra: str | None) -> dict[str, str | None]:
        values: dict[str, str | None] = dict.fromkeys(_UNSET)
        values.update(
            PLATFORM_API_URL=self.server.base_url,
            PLATFORM_API_KEY=self.sim.keys[key],
            PLATFORM_AUDIT_STORE=str(self.store),
            PLATFORM_AUDIT_HMAC_KEY=HMAC_KEY,
        )
        values.update(extra)
        return values

    def args(self, *args: str) -> list[str]:
        return [
            "schedule",
            "--config",
            str(self.config),
            "--status-file",
            str(self.status_file),
            *args,
        ]

    def run(self, *args: str, key: str = "admin", **env: str | None) -> Result:
        return CliRunner().invoke(app, self.args(*args), env=self.env(key, **env))

    def spawn(self, *args: str, key: str = "admin") -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k not in _UNSET}
        env.update({k: v for k, v in self.env(key).items() if v is not None})
        return subprocess.Popen(
            [sys.executable, "-m", "toolkit.cli", *self.args(*args)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.status_file.read_text(encoding="utf-8"))
        return data

    def snapshots(self) -> list[str]:
        if not self.store.exists():
            return []
        return [s.status for s in Store.open(str(self.store)).snapshots()]

    def revoke(self, key: str) -> None:
        """Revoke one of the world's keys now (the platform answers 401 from here on)."""
        digest = hashlib.sha256(self.sim.keys[key].encode()).hexdigest()
        with self.sim.lock:
            self.sim.world.keys[digest].revoked_at = self.sim.now


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Job]:
    monkeypatch.chdir(tmp_path)  # no ./platform-audit.toml of the developer's is read
    sim = Simulator(seed=31, services=5)
    with SimulatorServer(sim) as server:
        yield Job(sim, server, tmp_path)


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON log lines of a job's stderr (other lines, e.g. rich errors, are skipped)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


BUCKET = "team-audit-bucket"


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed")
    boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    try:
        yield endpoint
    finally:
        server.stop()


MOTO_ENV = {
    "AWS_ALLOW_HTTP": "true",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}
"""What deltalake needs, beside ``AWS_ENDPOINT_URL``, to reach moto's S3 server."""


@pytest.fixture
def s3_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The moto S3 endpoint, set in the environment (deltalake reads the process's)."""
    for name, value in {"AWS_ENDPOINT_URL": s3_endpoint, **MOTO_ENV}.items():
        monkeypatch.setenv(name, value)
    return s3_endpoint


class ScriptedLease:
    """A store lock whose renewals answer from a script: None renews, an exception is
    raised, and renewing goes on once the script is spent. With ``thread``, only renewals
    on the thread of that name (``MainThread``: before a run and between runs;
    ``lease-keeper``: during a run) take from the script."""

    def __init__(self, *answers: Exception | None, thread: str | None = None) -> None:
        self.answers, self.thread, self.renewals = list(answers), thread, 0

    def renew(self) -> None:
        self.renewals += 1
        scripted = self.thread in (None, threading.current_thread().name)
        answer = self.answers.pop(0) if scripted and self.answers else None
        if answer is not None:
            raise answer

    def release(self) -> None:
        pass

    def __enter__(self) -> ScriptedLease:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
