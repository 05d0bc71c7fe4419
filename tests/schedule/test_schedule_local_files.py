"""The lock and status files are never written through a link, and a store folder others
may write is refused: a user who can write the store folder once wiped any file of the
job's user (the HMAC key) with one symbolic link."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.errors import ConfigError, StoreUnavailable
from toolkit.schedule import acquire_lock
from toolkit.schedule.local_files import shared_with
from toolkit.schedule.lock import LOCAL_LOCK_NAME, unlock
from toolkit.schedule.status import check_writable, read_status
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

_SECRET = "the HMAC key: do not lose me\n"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store folder holding one committed snapshot."""
    folder = tmp_path / "store"
    writer = Store.open(str(folder)).begin(
        snapshot_at=datetime(2026, 3, 1, tzinfo=UTC), meta={"base_url": "http://sim.invalid"}
    )
    writer.write("teams", [{"id": "team-1", "name": "Core"}])
    writer.commit(status="complete")
    return folder


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "hmac.key"
    path.write_text(_SECRET, encoding="utf-8")
    return path


def test_store_compact_refuses_a_lock_file_that_links_elsewhere(store: Path, victim: Path) -> None:
    (store / LOCAL_LOCK_NAME).symlink_to(victim)
    result = CliRunner().invoke(app, ["store", "compact", "--store", str(store)])
    assert result.exit_code == ExitCode.STORE, result.output
    said = " ".join(result.stderr.split())
    assert f"{store / LOCAL_LOCK_NAME} is a symbolic link (to {victim})" in said
    assert f"rm {store / LOCAL_LOCK_NAME}" in said
    assert victim.read_text(encoding="utf-8") == _SECRET


def test_no_lock_taker_writes_through_a_hard_link_or_into_a_fifo(store: Path, victim: Path) -> None:
    lock_file = store / LOCAL_LOCK_NAME
    os.link(victim, lock_file)
    with pytest.raises(StoreUnavailable, match="has 2 names \\(hard links\\)"):
        acquire_lock(str(store), owner="me")
    with pytest.raises(StoreUnavailable, match="has 2 names"):
        unlock(str(store))
    assert victim.read_text(encoding="utf-8") == _SECRET
    lock_file.unlink()
    os.mkfifo(lock_file)  # once: opened for appending, it would have blocked the job
    with pytest.raises(StoreUnavailable, match="is not a regular file"):
        acquire_lock(str(store), owner="me")
    lock_file.unlink()
    with acquire_lock(str(store), owner="me"):  # a plain file: as before
        assert json.loads(lock_file.read_text())["owner"] == "me"


def test_a_store_folder_others_may_write_is_refused(store: Path) -> None:
    store.chmod(0o777)
    with pytest.raises(StoreUnavailable) as caught:
        acquire_lock(str(store), owner="me")
    said = str(caught.value)
    assert "is writable by every user (mode 0777)" in said and f"chmod go-w {store}" in said
    result = CliRunner().invoke(app, ["store", "gc", "--store", str(store)])
    assert result.exit_code == ExitCode.STORE and "chmod go-w" in result.stderr
    store.chmod(0o755)
    with acquire_lock(str(store), owner="me"):
        pass


def test_who_besides_the_owner_may_write_a_folder() -> None:
    uid, gid = os.getuid(), os.getgid()
    folder = stat.S_IFDIR
    assert shared_with(folder | 0o755, uid, gid) is None
    assert shared_with(folder | 0o700, uid, gid) is None
    assert shared_with(folder | 0o1777, uid, gid) == "every user"  # sticky does not help
    unknown = 2**31 - 7  # no such group: not the owner's own
    assert shared_with(folder | 0o775, uid, unknown) == f"group {unknown}"


def test_the_status_file_is_never_read_or_written_through_a_link(
    tmp_path: Path, victim: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "plat_never_copied"}', encoding="utf-8")
    status = tmp_path / "status.json"
    status.symlink_to(secret)
    assert read_status(status) == {}  # its target is not copied into the job's status
    with pytest.raises(ConfigError, match="is a symbolic link: the job replaces"):
        check_writable(status)
    status.unlink()
    os.mkfifo(status)
    assert read_status(status) == {}  # once: blocked the job forever
    with pytest.raises(ConfigError, match="is not a regular file"):
        check_writable(status)
