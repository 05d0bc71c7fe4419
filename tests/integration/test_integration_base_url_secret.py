"""A base URL carrying a credential as a path parameter is refused, never echoed or stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typer.testing import CliRunner

from toolkit.cli import ExitCode, app

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "CANARYbase0url0token"


def test_a_base_url_with_a_token_parameter_is_refused_unechoed(tmp_path: Path) -> None:
    env = {
        "PLATFORM_API_KEY": "plat_x",
        "PLATFORM_AUDIT_HMAC_KEY": "0123456789abcdef0123",
        "PLATFORM_AUDIT_CONFIG": "",
    }
    url = f"http://127.0.0.1:9/api;token={SECRET}"
    store = tmp_path / "store"
    result = CliRunner().invoke(
        app, ["snapshot", "--store", str(store), "--base-url", url], env=env
    )
    assert result.exit_code == ExitCode.CONFIG, result.output
    assert "path parameters" in result.output
    assert SECRET not in result.output
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert [p for p in files if SECRET.encode() in p.read_bytes()] == []
