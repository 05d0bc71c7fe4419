"""The store commands, driven through typer's CliRunner."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from deltalake import DeltaTable
from store_harness import T0, WriteSnapshot
from typer.testing import CliRunner

from toolkit.cli.store import resolve_store_url, sql_command, store_app
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

runner = CliRunner()


def test_ls_verify_and_maintenance_commands(tmp_path: Path, write_snapshot: WriteSnapshot) -> None:
    store = Store.open(tmp_path / "s")
    infos = [write_snapshot(store, at=T0 + timedelta(minutes=i), version=i) for i in range(2)]
    args = ["--store", store.url]
    result = runner.invoke(store_app, ["ls", *args])
    assert result.exit_code == 0, result.output
    assert "2 snapshot(s)" in result.output and infos[-1].chain_hash in result.output
    for info in infos:  # whole on one line at 80 columns, to be copied
        assert info.snapshot_id in result.output, result.output
    result = runner.invoke(store_app, ["verify", *args])
    assert result.exit_code == 0 and "ok: 2 snapshot(s)" in result.output
    for command in (
        ["gc", "--min-age-minutes", "0"],
        ["compact"],
        ["vacuum", "--retention-hours", "0"],
    ):
        result = runner.invoke(store_app, [*command, *args])
        assert result.exit_code == 0, (command, result.output)
    result = runner.invoke(store_app, ["retain", *args])
    assert result.exit_code == 0 and "kept" in result.output
    for command in (  # negative periods: usage errors, not tracebacks
        ["retain", "--daily-days", "-1"],
        ["vacuum", "--retention-hours", "-5"],
        ["gc", "--min-age-minutes", "-1"],  # would delete rows of writes still going on
    ):
        result = runner.invoke(store_app, [*command, *args])
        assert result.exit_code == 2, (command, result.output)
        assert f"Invalid value for '{command[1]}'" in result.output, command
    assert len(store.snapshots()) == 2

    DeltaTable(store.table_uri("services")).update(
        new_values={"replicas": 99}, predicate=f"snapshot_id = '{infos[1].snapshot_id}'"
    )
    result = runner.invoke(store_app, ["verify", *args])
    assert result.exit_code == 1
    assert "BROKEN" in result.output and infos[1].snapshot_id in result.output


def test_sql_command_formats(
    tmp_path: Path, write_snapshot: WriteSnapshot, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store.open(tmp_path / "s")
    write_snapshot(store)
    query = "select id, capabilities_add from services_latest order by id"
    sql_command(query, store.url, "json")
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["svc-0", "svc-1", "svc-2"]
    assert rows[1]["capabilities_add"] == ["NET_ADMIN"]
    sql_command(query, store.url, "csv")
    text = capsys.readouterr().out
    out = text.splitlines()
    assert out[0] == "id,capabilities_add" and out[2] == 'svc-1,"[""NET_ADMIN""]"'
    assert "\r" not in text  # $(platform-audit sql --format csv ...) in a shell
    sql_command("select 'x' || chr(27) || '[31mred' as name", store.url, "table")
    shown = capsys.readouterr().out
    assert r"x\x1b[31mred" in shown and "\x1b" not in shown  # the escape as text, not ESC
    sql_command("select count(*) as n from deployments", store.url, "table")
    table = capsys.readouterr().out.splitlines()
    assert table[0].strip() == "1 row(s)" and [line.strip() for line in table[2:5:2]] == ["n", "3"]
    with pytest.raises(Exception, match="format must be"):
        sql_command(query, store.url, "xml")


def test_store_url_comes_from_flag_env_config_or_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no platform-audit.toml here
    monkeypatch.delenv("PLATFORM_AUDIT_STORE", raising=False)
    monkeypatch.delenv("PLATFORM_AUDIT_CONFIG", raising=False)
    assert resolve_store_url(None) == "data/store"
    config = tmp_path / "platform-audit.toml"
    config.write_text('[store]\nurl = "from-the-file"\n', encoding="utf-8")
    assert resolve_store_url(None) == "from-the-file"  # as `audit` and `report` read it
    monkeypatch.setenv("PLATFORM_AUDIT_STORE", "s3://bucket/prefix")
    assert resolve_store_url(None) == "s3://bucket/prefix"
    assert resolve_store_url("elsewhere") == "elsewhere"


def test_a_malformed_configuration_file_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from toolkit.cli import ExitCode, app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLATFORM_AUDIT_STORE", raising=False)
    monkeypatch.delenv("PLATFORM_AUDIT_CONFIG", raising=False)
    (tmp_path / "platform-audit.toml").write_text("[store\n", encoding="utf-8")
    result = runner.invoke(app, ["store", "ls"])
    assert result.exit_code == ExitCode.CONFIG, result.output
    assert "platform-audit.toml" in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    "command",
    [
        ["audit"],
        ["diff"],
        ["report", "--format", "json"],
        ["sql", "select 1"],
        *(["store", name] for name in ("ls", "verify", "gc", "compact", "vacuum", "retain")),
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_a_command_pointed_at_no_store_says_so_and_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    from toolkit.cli import ExitCode, app

    missing = tmp_path / "mistyped" / "store"
    result = runner.invoke(app, [*command, "--store", str(missing)])
    assert result.exit_code == ExitCode.CONFIG, result.output
    assert f"no snapshot store at {missing}" in " ".join(result.stderr.split())
    assert not (tmp_path / "mistyped").exists(), "a reading command must not create a store"


def test_open_without_create_refuses_a_folder_that_holds_no_store(tmp_path: Path) -> None:
    from toolkit.snapshot import StoreNotFound

    with pytest.raises(StoreNotFound, match="platform-audit snapshot"):
        Store.open(tmp_path, create=False)  # exists, but no snapshot was ever written there
    Store.open(tmp_path / "new")  # the default creates, as the snapshot command needs
    assert (tmp_path / "new").is_dir()


def test_a_store_that_cannot_be_read_is_one_message_and_exit_7(
    tmp_path: Path, write_snapshot: WriteSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unreachable bucket or missing credentials: the storage library's error chain (with
    its terminal colours) once ended every reading command in a traceback."""
    from toolkit.cli import app
    from toolkit.snapshot import store_tables as store_module

    store = Store.open(tmp_path / "s")
    write_snapshot(store)
    chain = (
        "Kernel error -> Operation not supported\n  \x1b[31m↳\x1b[0m an error occurred "
        "while loading credentials\n   \x1b[31m↳\x1b[0m request forbidden"
    )

    def unreachable(*args: object, **kwargs: object) -> None:
        raise OSError(chain)

    monkeypatch.setattr(store_module, "DeltaTable", unreachable)
    for command in (["store", "ls"], ["store", "verify"], ["audit"], ["diff"], ["report"]):
        result = runner.invoke(app, [*command, "--store", store.url])
        assert result.exit_code == 7, (command, result.output)
        message = " ".join(result.output.split())
        assert "error: cannot open" in message, command
        assert "↳ an error occurred while loading credentials ↳ request forbidden" in message
        assert "\x1b[" not in result.output and "Traceback" not in result.output


def test_a_data_file_gone_from_the_store_is_exit_7_naming_it(
    tmp_path: Path, write_snapshot: WriteSnapshot
) -> None:
    """Deleted by hand, or by a vacuum that kept too little: once a DuckDB traceback."""
    from toolkit.audit import run_audit
    from toolkit.cli import app
    from toolkit.errors import StoreUnavailable

    store = Store.open(tmp_path / "s")
    for i in range(2):
        write_snapshot(store, at=T0 + timedelta(minutes=i), version=i)
    opened = store.duckdb()  # its views were made while every file was there
    gone = sorted((tmp_path / "s" / "services").glob("*.parquet"))[0]
    gone.unlink()
    with pytest.raises(StoreUnavailable, match=f"could not read the store .*{gone.name}"):
        run_audit(opened)  # a check's query meets the missing file
    result = runner.invoke(app, ["audit", "--store", store.url, "--format", "json"])
    assert result.exit_code == 7, result.output  # a new connection meets it first
    message = " ".join(result.output.split())
    assert gone.name in message and "store verify" in message, message
    verify = runner.invoke(app, ["store", "verify", "--store", store.url])
    assert verify.exit_code == 7, verify.output
    assert "a file the store's Delta log lists is missing" in verify.output


def test_maintenance_waits_for_no_job_writing_the_store(
    tmp_path: Path, write_snapshot: WriteSnapshot
) -> None:
    """gc, compact, vacuum and retain change the store: while a scheduled job holds its lock
    they exit 6 naming it and change nothing; afterwards they run."""
    from toolkit.schedule import acquire_lock

    store = Store.open(tmp_path / "s")
    write_snapshot(store)

    def files() -> list[str]:  # the lock's own file aside
        return sorted(p.name for p in (tmp_path / "s").rglob("*") if p.name != "_schedule.lock")

    before = files()
    commands = [["gc", "--min-age-minutes", "0"], ["compact"],
                ["vacuum", "--retention-hours", "0"], ["retain"]]  # fmt: skip
    with acquire_lock(store.url, owner="scheduled-job"):
        for command in commands:
            result = runner.invoke(store_app, [*command, "--store", store.url])
            assert result.exit_code == 6, (command, result.output)
            assert "holds the lock on store" in " ".join(result.output.split()), command
    assert files() == before
    for command in commands:
        assert runner.invoke(store_app, [*command, "--store", store.url]).exit_code == 0


def test_unlock_says_who_holds_the_lock_and_clears_a_dead_holder(
    tmp_path: Path, write_snapshot: WriteSnapshot
) -> None:
    from toolkit.schedule import acquire_lock

    store = Store.open(tmp_path / "s")
    write_snapshot(store)
    unlocked = runner.invoke(store_app, ["unlock", "--store", store.url])
    assert unlocked.exit_code == 0 and "is not locked" in unlocked.output, unlocked.output
    with acquire_lock(store.url, owner="scheduled-job"):
        held = runner.invoke(store_app, ["unlock", "--force", "--store", store.url])
    assert held.exit_code == 6, held.output
    assert f"pid {os.getpid()}" in " ".join(held.output.split())
    stale = {"owner": "x", "pid": 2**22 + 7, "host": "h", "acquired_at": "2026-01-01"}
    (tmp_path / "s" / "_schedule.lock").write_text(json.dumps(stale))
    cleared = runner.invoke(store_app, ["unlock", "--store", store.url])
    assert cleared.exit_code == 0, cleared.output
    assert f"cleared the lock of pid {2**22 + 7} on h" in " ".join(cleared.output.split())


def test_vacuum_says_what_the_retention_window_kept(
    tmp_path: Path, write_snapshot: WriteSnapshot
) -> None:
    """After a compact, the old files are younger than the window: a vacuum that removes
    nothing says how many it kept, why, and the option that removes them."""
    store = Store.open(tmp_path / "s")
    for i in range(3):
        write_snapshot(store, at=T0 + timedelta(minutes=i), version=i)
    args = ["--store", store.url]
    assert runner.invoke(store_app, ["compact", *args]).exit_code == 0
    result = runner.invoke(store_app, ["vacuum", *args])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    kept = int(re.search(r"removed 0 file\(s\); kept (\d+) file\(s\)", said)[1])  # type: ignore[index]
    assert kept >= 3 and "retention window of 168 hour(s)" in said
    assert "platform-audit store vacuum --retention-hours 0" in said
    assert "[schedule] vacuum_retention_hours" in said  # the setting of the scheduled job
    result = runner.invoke(store_app, ["vacuum", "--retention-hours", "0", *args])
    said = " ".join(result.output.split())
    assert f"removed {kept} file(s); no other file is unneeded" in said, said
    assert store.verify().ok
