"""No planted secret reaches any byte the snapshot command writes, logging at DEBUG.

The simulator runs in this process, so the test knows every secret its world ever held
(`sim.canaries()`: the `CANARY<hex>` markers inside variable values, webhook credentials and
bucket secret keys, and every API key). `platform-audit --log-level debug snapshot` runs as
a subprocess for the admin, editor and viewer keys, with stdout and stderr captured to
files, the world evolving (secrets rotate) between runs and one run through faults that
corrupt bodies. Then every file under the store (Parquet decoded with pyarrow as well as
read raw, and the Delta JSON logs), the captured output, and the HMAC key's folder are
searched for every canary; the store and the output for the HMAC key too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest

from toolkit.sim import FaultProfile, Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# Faults whose error paths might quote a body (cut, broken and drifted JSON), on the
# answers that carry secrets; the hierarchy is left alone so the crawl reaches them all.
CORRUPTING = FaultProfile(
    rate_truncate=0.1,
    rate_malformed=0.1,
    rate_unknown_fields=0.3,
    seed=4,
    paths=("/variables/list", "/webhooks/list", "/storage/s3/list", "/storage/s3/get"),
)


def run_snapshot(
    tmp_path: Path, base_url: str, token: str, config: Path, name: str
) -> subprocess.CompletedProcess[bytes]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PLATFORM_API", "PLATFORM_AUDIT"))
    }
    env.update(
        PLATFORM_API_URL=base_url,
        PLATFORM_API_KEY=token,
        PLATFORM_AUDIT_STORE=str(tmp_path / "store"),
        PLATFORM_AUDIT_CONFIG=str(config),
    )
    out, err = tmp_path / "logs" / f"{name}.stdout", tmp_path / "logs" / f"{name}.stderr"
    out.parent.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "toolkit.cli", "--log-level", "debug", "snapshot"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        return subprocess.run(
            command, stdout=stdout, stderr=stderr, env=env, cwd=tmp_path, timeout=120, check=False
        )


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def parquet_text(path: Path) -> str:
    """Every value of a Parquet file, decoded, as text (compression hides raw bytes)."""
    return json.dumps(pq.read_table(path).to_pylist(), default=str)


def leaks(secrets: Iterable[str], haystack: bytes) -> list[str]:
    return sorted(s for s in secrets if s.encode() in haystack)


@pytest.fixture
def world() -> Simulator:
    return Simulator(seed=31, services=8)


def test_no_canary_in_store_logs_or_key_folder(world: Simulator, tmp_path: Path) -> None:
    key_folder = tmp_path / "hmac"
    config = tmp_path / "platform-audit-test.toml"
    config.write_text(
        "[client]\nrate_per_minute = 0\nmax_attempts = 2\n"
        f'[store]\nhmac_key_file = "{key_folder / "hmac.key"}"\n',
        encoding="utf-8",
    )
    codes = {}
    with SimulatorServer(world) as server:
        for role in ("admin", "editor", "viewer"):
            world.set_faults(CORRUPTING if role == "editor" else "none")
            result = run_snapshot(tmp_path, server.base_url, world.keys[role], config, role)
            codes[role] = result.returncode
            world.advance(hours=24)  # secrets rotate: new canaries for the next run
    assert codes["admin"] == codes["viewer"] == 0, codes
    assert codes["editor"] in (0, 3), codes

    secrets = set(world.canaries())
    secrets |= {token.split("_", 1)[1] for token in world.keys.values()}  # a token's secret part
    assert sum(s.startswith("CANARY") for s in secrets) > 10, "the world plants canaries"

    key_files = files_under(key_folder)
    assert [p.name for p in key_files] == ["hmac.key"]
    for path in key_files:
        assert not leaks(secrets, path.read_bytes()), path
    secrets.add(key_files[0].read_text("ascii").strip())  # the key itself stays in its file

    store = tmp_path / "store"
    parquet = [p for p in files_under(store) if p.suffix == ".parquet"]
    delta_logs = [p for p in files_under(store) if p.suffix == ".json"]
    assert parquet and delta_logs, "the snapshots were written"
    for path in files_under(store):
        assert not leaks(secrets, path.read_bytes()), path
    for path in parquet:
        assert not leaks(secrets, parquet_text(path).encode()), path

    logs = files_under(tmp_path / "logs")
    stderr = b"".join(p.read_bytes() for p in logs if p.suffix == ".stderr")
    assert b"DEBUG toolkit.api" in stderr and b"DEBUG toolkit.collect" in stderr
    for path in logs:
        assert not leaks(secrets, path.read_bytes()), path


def test_log_level_is_validated(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", "--log-level", "loud", "version"],
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert b"use one of debug, info, warning, error" in result.stderr
