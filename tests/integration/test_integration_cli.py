"""The command line against the live simulator: `check`, `init`, `sim serve`, `demo`."""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.sim import Simulator, SimulatorServer

runner = CliRunner()


def run_check(base_url: str, token: str | None, *args: str) -> tuple[int, str]:
    env = {"PLATFORM_API_URL": base_url, "PLATFORM_API_KEY": token or ""}
    result = runner.invoke(app, ["check", *args], env=env)
    return result.exit_code, result.output


def test_check_describes_a_limited_key(
    shared_sim: Simulator, shared_server: SimulatorServer
) -> None:
    code, out = run_check(shared_server.base_url, shared_sim.keys["limited"])
    assert code == ExitCode.OK, out
    assert "The credential works." in out
    assert "editor" in out
    assert "limited to project" in out


@pytest.mark.parametrize("key", ["revoked", "expired"])
def test_check_refused_key_exits_auth(
    shared_sim: Simulator, shared_server: SimulatorServer, key: str
) -> None:
    code, out = run_check(shared_server.base_url, shared_sim.keys[key])
    assert code == ExitCode.AUTH
    assert "create a new key" in out
    assert shared_sim.keys[key].split("_", 1)[1] not in out


def test_check_suggests_the_prefix_on_404(
    shared_sim: Simulator, shared_server: SimulatorServer
) -> None:
    code, out = run_check(shared_server.base_url + "/wrong", shared_sim.keys["viewer"])
    assert code == ExitCode.UNREACHABLE
    assert "/wrong/api/go" in out.replace("\n", "")


@pytest.mark.parametrize(
    ("suffix", "suggested"),
    [("/api", "/api/go"), ("/api/go", ""), ("/api/go/", "")],
)
def test_check_never_doubles_the_prefix(
    shared_sim: Simulator, shared_server: SimulatorServer, suffix: str, suggested: str
) -> None:
    code, out = run_check(shared_server.base_url + suffix, shared_sim.keys["viewer"])
    text = " ".join(out.split())
    assert code == ExitCode.UNREACHABLE
    assert f"try --base-url {shared_server.base_url}{suggested}," in text
    assert "/api/api/go" not in text and "/api/go/api/go" not in text
    assert f"GET {suffix.rstrip('/')}/users/me answered 404" in text


def test_check_without_key_is_a_config_error(shared_server: SimulatorServer) -> None:
    code, out = run_check(shared_server.base_url, None)
    assert code == ExitCode.CONFIG
    assert "PLATFORM_API_KEY" in out


def test_check_token_env_option(shared_sim: Simulator, shared_server: SimulatorServer) -> None:
    env = {"PLATFORM_API_URL": shared_server.base_url, "OTHER_KEY": shared_sim.keys["session"]}
    result = runner.invoke(app, ["check", "--token-env", "OTHER_KEY"], env=env)
    assert result.exit_code == 0, result.output
    assert "access token" in result.output


def test_check_unreachable_platform() -> None:
    env = {"PLATFORM_API_URL": "http://127.0.0.1:9", "PLATFORM_API_KEY": "plat_x"}
    result = runner.invoke(app, ["check"], env={**env, "PLATFORM_AUDIT_CONFIG": ""})
    assert result.exit_code == ExitCode.UNREACHABLE, result.output
    assert "network" in result.output.lower()


def test_init_writes_a_file_once(tmp_path: Path) -> None:
    target = tmp_path / "platform-audit.toml"
    assert runner.invoke(app, ["init", str(target)]).exit_code == 0
    assert "token_env" in target.read_text()
    again = runner.invoke(app, ["init", str(target)])
    assert again.exit_code == ExitCode.CONFIG
    assert "--force" in again.output
    nowhere = runner.invoke(app, ["init", str(tmp_path / "missing" / "x.toml")])
    assert nowhere.exit_code == ExitCode.CONFIG  # not a traceback
    assert "cannot write" in nowhere.output and "No such file or directory" in nowhere.output


def test_messages_print_brackets_as_they_are(tmp_path: Path) -> None:
    """Paths and values are text, not rich markup: "[bold]" vanished from messages, and
    "[/]" made rich raise a traceback (exit 1, the findings code) instead of the error."""
    target = tmp_path / "odd [bold]name.toml"
    wrote = runner.invoke(app, ["init", str(target)])
    assert wrote.exit_code == 0, wrote.output
    assert f"wrote {target}:" in " ".join(wrote.output.split())  # rich may wrap the line
    again = runner.invoke(app, ["init", str(target)])
    assert again.exit_code == ExitCode.CONFIG, again.output
    assert f"error: {target} exists; pass --force" in again.output
    level = runner.invoke(app, ["--log-level", "[/]", "version"])
    assert level.exit_code == ExitCode.CONFIG, level.output
    assert "error: --log-level '[/]' is not a level" in level.output


def test_every_help_text_is_shown_as_written() -> None:
    """typer's rich help keeps line breaks inside a paragraph and reads ``[store]`` as
    markup (dropping it): each paragraph is one line, and every bracketed setting name of a
    command's or an option's help is in its rendered ``--help``."""
    import inspect
    import re

    import typer.main

    def commands(group: object, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
        found = []
        for name, command in getattr(group, "commands", {}).items():
            found.append(((*path, name), command))
            found.extend(commands(command, (*path, name)))
        return found

    listed = commands(typer.main.get_command(app), ())
    assert len(listed) > 15  # the sub-apps (store, sim) are walked too
    for path, command in listed:
        paragraphs = inspect.cleandoc(command.help or "").split("\n\n")
        assert paragraphs[0], path
        for paragraph in paragraphs:
            assert "\n" not in paragraph.strip(), (path, paragraph)
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        names = set(re.findall(r"\[[a-z_]+\]", " ".join(texts).replace("\\[", "[")))
        shown = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert shown.exit_code == 0, (path, shown.output)
        for name in names:
            assert name in shown.output, (path, name)


def test_sim_serve_on_a_taken_or_impossible_port_is_a_usage_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["sim", "serve", "--port", str(port)])
    assert result.exit_code == ExitCode.CONFIG, result.output
    assert f"cannot serve on 127.0.0.1:{port}" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert runner.invoke(app, ["sim", "serve", "--port", "99999"]).exit_code == ExitCode.CONFIG


def test_sim_serve_prints_url_and_writes_keys(tmp_path: Path) -> None:
    keys_out = tmp_path / "keys.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolkit.cli",
            "sim",
            "serve",
            "--services",
            "5",
            "--keys-out",
            str(keys_out),
            "--prefix",
            "/api/go",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/api/go")
        deadline = time.monotonic() + 10
        while not keys_out.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        written = json.loads(keys_out.read_text())
        assert written["base_url"] == url
        assert set(written["keys"]) >= {
            "admin",
            "editor",
            "viewer",
            "limited",
            "revoked",
            "expired",
        }
        assert stat.S_IMODE(keys_out.stat().st_mode) == 0o600
        me = httpx.get(
            url + "/users/me", headers={"Authorization": f"Bearer {written['keys']['viewer']}"}
        )
        assert me.json()["data"]["api_key"]["role"] == "viewer"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0


def test_demo_runs(tmp_path: Path) -> None:
    args = ["demo", "--services", "10", "--days", "3", "--out", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # rich wraps long lines
    assert "Through a flaky platform" in out
    assert out.count(" complete: ") == 3
    assert "operator, day 2: memory limit of" in out
    assert "make lab" in out
    for report in ("report.html", "report.md"):
        assert (tmp_path / report).stat().st_size > 0
    assert len(Store.open(tmp_path / "store").snapshots()) == 3


def test_demo_prints_an_error_with_brackets_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo shows what failed, in the failure's own words: "[/]" in them once raised."""
    from io import StringIO
    from types import SimpleNamespace

    from rich.console import Console

    from toolkit.pipeline import demo

    def failing(store: object, out: Path) -> None:
        raise RuntimeError("bucket [/] [bold]refused")

    monkeypatch.setattr(demo, "write_reports", failing)
    store = SimpleNamespace(url="data/[x]", verify=lambda: SimpleNamespace(summary=lambda: "ok"))
    text = StringIO()
    assert demo._audit(Console(file=text, width=200), store, tmp_path) == ()
    assert "Store data/[x]: ok" in text.getvalue()
    assert "failed (RuntimeError: bucket [/] [bold]refused)" in text.getvalue()
