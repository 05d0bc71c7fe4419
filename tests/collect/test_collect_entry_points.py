"""The blocking entry points: `crawl` (also inside a running loop) and the pipeline's
`crawl_settings`."""

from __future__ import annotations

import asyncio
import io
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from toolkit.collect import (
    CollectionAborted,
    CrawlOptions,
    CrawlProgress,
    crawl,
)
from toolkit.config import Credential, Settings, load_settings
from toolkit.pipeline.snapshot_job import crawl_settings
from toolkit.snapshot.redaction import Fingerprinter

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.sim import Simulator, SimulatorServer

World = tuple["Simulator", "SimulatorServer"]


def test_crawl_blocks_even_inside_a_running_loop(fresh: World) -> None:
    from collect_world import config_for

    sim, server = fresh
    config = config_for(server, sim.keys["viewer"])

    async def notebook_cell() -> int:
        rows, result = crawl(config, fingerprints=Fingerprinter(b"k" * 16), quiet=True)
        assert result.role == "viewer"
        return len(rows["services"])

    assert asyncio.run(notebook_cell()) == len(sim.world.services)


def _settings(server: SimulatorServer, tmp_path: Path) -> Settings:
    return Settings(
        base_url=server.base_url,
        credential="collector",
        credentials={
            "collector": Credential(name="collector", token_env="TEST_COLLECTOR_KEY"),
            "dashboard": Credential(name="dashboard", token_env="TEST_DASHBOARD_KEY"),
        },
        rate_per_minute=None,
        hmac_key_file=tmp_path / "keys" / "hmac.key",
        store_url=str(tmp_path / "store"),
    )


def test_crawl_settings_audits_the_other_credentials(
    fresh: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim, server = fresh
    monkeypatch.delenv("PLATFORM_AUDIT_HMAC_KEY", raising=False)
    monkeypatch.setenv("TEST_COLLECTOR_KEY", sim.keys["editor"])
    monkeypatch.setenv("TEST_DASHBOARD_KEY", sim.keys["viewer"])
    rows, result = crawl_settings(_settings(server, tmp_path), quiet=True)
    assert result.credential == "collector" and result.role == "editor"
    roles = {r["name"]: r["role"] for r in rows["credentials"]}
    assert roles == {"collector": "editor", "dashboard": "viewer"}
    assert (tmp_path / "keys" / "hmac.key").exists()


def test_crawl_settings_names_the_variable_of_a_refused_key(
    fresh: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim, server = fresh
    monkeypatch.setenv("TEST_COLLECTOR_KEY", sim.keys["expired"])
    monkeypatch.setenv("TEST_DASHBOARD_KEY", sim.keys["viewer"])
    with pytest.raises(CollectionAborted, match=r"\$TEST_COLLECTOR_KEY"):
        crawl_settings(_settings(server, tmp_path), quiet=True)


def test_crawl_settings_takes_the_collect_section_unless_given_options(
    fresh: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim, server = fresh
    monkeypatch.delenv("PLATFORM_AUDIT_HMAC_KEY", raising=False)
    monkeypatch.setenv("TEST_COLLECTOR_KEY", sim.keys["editor"])
    monkeypatch.setenv("TEST_DASHBOARD_KEY", sim.keys["limited"])
    config = tmp_path / "platform-audit.toml"
    config.write_text(
        '[platform]\ncredential = "collector"\n'
        '[credentials.collector]\ntoken_env = "TEST_COLLECTOR_KEY"\n'
        '[credentials.dashboard]\ntoken_env = "TEST_DASHBOARD_KEY"\n'
        '[client]\nrate_per_minute = 0\n[store]\nhmac_key_file = "keys/hmac.key"\n'
        "[collect]\nverify_scope = true\ndeployment_depth = 0\n",
        encoding="utf-8",
    )
    settings = load_settings(config, environ={}, base_url=server.base_url)
    rows, result = crawl_settings(settings, quiet=True)
    assert {r["credential_name"] for r in rows["credential_probes"]} == {"dashboard"}
    assert "deployments.list" not in {call.endpoint for call in result.planned}
    rows, result = crawl_settings(settings, options=CrawlOptions(), quiet=True)  # it wins
    assert rows["credential_probes"] == []
    assert "deployments.list" in {call.endpoint for call in result.planned}


def test_progress_is_quiet_off_a_terminal() -> None:
    out = io.StringIO()
    with CrawlProgress(console=Console(file=out)) as progress:
        progress.planned(2)
        progress.finished(ok=False)
    assert not progress.enabled and out.getvalue() == ""
    with CrawlProgress(quiet=True, console=Console(file=out, force_terminal=True)) as progress:
        progress.planned(1)
    assert out.getvalue() == ""
