"""The four ways to run the job (deploy/): cron, systemd, a container image, a Kubernetes
CronJob with the store on S3 (run here against moto's S3 server on loopback)."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from job_harness import BUCKET, Job
from typer.testing import CliRunner

from toolkit.cli import ExitCode
from toolkit.config import load_settings
from toolkit.errors import LockHeld
from toolkit.schedule import LeaseKeeper, acquire_lock
from toolkit.schedule.lock import unlock
from toolkit.schedule.settings import validate_cron
from toolkit.snapshot import Store

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SCHEDULING = Path(__file__).resolve().parents[2] / "docs" / "scheduling.md"
TOKEN_LIKE = re.compile(r"plat_[A-Za-z0-9]|AKIA[0-9A-Z]{12}|hooks\.slack\.com/services/")


def test_cron_line() -> None:
    lines = [
        line
        for line in (DEPLOY / "cron" / "platform-audit.cron").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(lines) == 1
    fields = lines[0].split(None, 6)
    validate_cron(" ".join(fields[:5]))
    assert fields[5] == "platform-audit"  # the user (an /etc/cron.d file names one)
    command = fields[6]
    assert "platform-audit schedule --max-runs 1" in command
    assert ". /etc/platform-audit/env" in command  # secrets from a 0600 file, not the line
    assert not TOKEN_LIKE.search(command) and "PLATFORM_API_KEY=" not in command


def test_systemd_units_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    service = (DEPLOY / "systemd" / "platform-audit.service").read_text()
    timer = (DEPLOY / "systemd" / "platform-audit.timer").read_text()
    assert "Type=oneshot" in service and "EnvironmentFile=/etc/platform-audit/env" in service
    assert "schedule --max-runs 1" in service and "User=platform-audit" in service
    assert "OnCalendar=hourly" in timer and "Persistent=true" in timer
    assert not TOKEN_LIKE.search(service)
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here; the units' text was checked")
    # verify wants ExecStart to exist: point it at this checkout's command.
    executable = Path(sys.executable).with_name("platform-audit")
    (tmp_path / "platform-audit.service").write_text(
        service.replace("/opt/platform-audit/bin/platform-audit", str(executable))
    )
    (tmp_path / "platform-audit.timer").write_text(timer)
    units = [str(tmp_path / "platform-audit.service"), str(tmp_path / "platform-audit.timer")]
    done = subprocess.run(
        [analyze, "verify", *units], capture_output=True, text=True, timeout=60, check=False
    )
    problems = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if "platform-audit" in line and "/etc/platform-audit/env" not in line
    ]
    assert done.returncode == 0 and not problems, done.stdout + done.stderr


def test_containerfile_structure() -> None:
    text = (DEPLOY / "container" / "Containerfile").read_text()
    instructions = [line for line in text.splitlines() if line and not line.startswith("#")]
    base = next(line for line in instructions if line.startswith("FROM "))
    image = base.split()[1]
    assert re.search(r":\d+\.\d+\.\d+-", image) or "@sha256:" in image, "pin the base image"
    assert not image.endswith(":latest")
    user = next(line for line in instructions if line.startswith("USER "))
    assert user.split()[1].split(":")[0] not in ("root", "0")
    assert any(re.match(r"RUN pip install /src", line) for line in instructions)
    assert 'ENTRYPOINT ["platform-audit", "schedule"]' in instructions
    assert text.index("USER ") > text.index("pip install")  # installed as root, run as not
    assert not TOKEN_LIKE.search(text) and "ENV PLATFORM_API_KEY" not in text


def _manifests() -> dict[str, dict[str, Any]]:
    docs = yaml.safe_load_all((DEPLOY / "kubernetes" / "cronjob.yaml").read_text())
    return {doc["kind"]: doc for doc in docs}


def _container(cronjob: dict[str, Any]) -> dict[str, Any]:
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    return dict(container)


def test_kubernetes_cronjob_structure(tmp_path: Path) -> None:
    manifests = _manifests()
    cronjob = manifests["CronJob"]
    assert cronjob["apiVersion"] == "batch/v1"
    validate_cron(cronjob["spec"]["schedule"])
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = _container(cronjob)
    assert container["args"][:2] == ["--max-runs", "1"]
    assert container["resources"]["requests"] and container["resources"]["limits"]
    env = {item["name"]: item for item in container["env"]}
    for secret in ("PLATFORM_API_KEY", "AWS_SECRET_ACCESS_KEY", "PLATFORM_AUDIT_HMAC_KEY"):
        assert "value" not in env[secret]
        assert env[secret]["valueFrom"]["secretKeyRef"]["name"] == "platform-audit"
    assert env["PLATFORM_AUDIT_STORE"]["value"].startswith("s3://")
    text = (DEPLOY / "kubernetes" / "cronjob.yaml").read_text()
    assert not TOKEN_LIKE.search(text)
    # The ConfigMap's settings file is one the toolkit accepts.
    config = tmp_path / "platform-audit.toml"
    config.write_text(manifests["ConfigMap"]["data"]["platform-audit.toml"])
    settings = load_settings(config, environ={})
    assert settings.notify.url_env == "PLATFORM_AUDIT_WEBHOOK"


def test_the_docs_document_the_four_recipes() -> None:
    text = SCHEDULING.read_text("utf-8")
    section = text[text.index("## Four deployment recipes") :]
    for path in ("deploy/cron/", "deploy/systemd/", "deploy/container/", "deploy/kubernetes/"):
        assert path in section


def test_the_cronjob_runs_against_an_s3_store(job: Job, s3_env: str) -> None:
    container = _container(_manifests()["CronJob"])
    plain = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    store_url = plain["PLATFORM_AUDIT_STORE"]
    assert store_url.startswith(f"s3://{BUCKET}/")
    args = [a for a in container["args"] if not a.startswith("/etc/")]
    args.remove("--config")  # the test's own file stands in for the ConfigMap
    env = {"PLATFORM_AUDIT_STORE": store_url}
    first = job.run(*args, **env)
    assert first.exit_code == ExitCode.OK, first.output
    assert job.run(*args, **env).exit_code == ExitCode.OK
    store = Store.open(store_url)
    assert [s.status for s in store.snapshots()] == ["complete", "complete"]
    assert store.verify().ok
    # A second job while the lock object is leased: it exits 6 and writes nothing.
    with acquire_lock(store_url, owner="another-pod", ttl_s=60):
        locked = job.run(*args, **env)
    assert locked.exit_code == ExitCode.LOCKED, locked.output
    assert "holds the lock" in " ".join(locked.stderr.split())
    assert len(Store.open(store_url).snapshots()) == 2


def test_s3_lease_lock_is_exclusive_and_expires(
    s3_env: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"s3://{BUCKET}/lease-test"
    held = "holds the lock on store s3://team-audit-bucket"
    with acquire_lock(url, owner="a", ttl_s=60), pytest.raises(LockHeld, match=held):
        acquire_lock(url, owner="b", ttl_s=60)
    with acquire_lock(url, owner="b", ttl_s=60) as lock:
        lock.renew()
    forgotten = acquire_lock(url, owner="c", ttl_s=0.01)  # a job that died elsewhere
    assert forgotten is not None
    time.sleep(0.05)
    with caplog.at_level(logging.WARNING), acquire_lock(url, owner="d", ttl_s=60):
        pass
    assert "recovered a stale lock" in caplog.text and "its lease expired" in caplog.text
    # A run longer than the lease keeps it: the keeper renews it on the object store.
    with acquire_lock(url, owner="e", ttl_s=1.5) as lock, LeaseKeeper(lock, every_s=0.3) as kept:
        time.sleep(2.0)
        with pytest.raises(LockHeld, match=held):
            acquire_lock(url, owner="f", ttl_s=60)
    assert kept.lost is None


def test_unlock_ends_a_lease_left_by_another_machine_only_when_forced(
    s3_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"s3://{BUCKET}/unlock-test"
    assert unlock(url).holder is None  # no job has locked it yet
    with monkeypatch.context() as elsewhere:  # a job on a machine that then died
        elsewhere.setattr("toolkit.schedule.lock_holder.socket.gethostname", lambda: "lost-node")
        acquire_lock(url, owner="lost-job", ttl_s=3600)
    with pytest.raises(LockHeld, match=r"lost-node.*store unlock --force"):
        acquire_lock(url, owner="next", ttl_s=60)
    with pytest.raises(LockHeld, match="lease ends at"):
        unlock(url)
    done = unlock(url, force=True)
    assert done.cleared == "forced" and done.holder is not None
    assert done.holder.host == "lost-node"
    # Free again; a live job on this machine is to be stopped, not forced out.
    with acquire_lock(url, owner="next", ttl_s=60), pytest.raises(LockHeld, match="this machine"):
        unlock(url, force=True)
    acquire_lock(url, owner="short", ttl_s=0.01)
    time.sleep(0.05)
    assert unlock(url).cleared == "expired"
    assert unlock(url).holder is None


def test_a_data_object_gone_from_an_s3_store_is_exit_7_naming_it(job: Job, s3_env: str) -> None:
    """Over S3 the files are read through Arrow datasets, whose I/O errors DuckDB reports
    as invalid input: still the store, not 'the check failed to run'."""
    boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
    from toolkit.cli import app

    url = f"s3://{BUCKET}/gone-object"
    assert job.run("--max-runs", "1", PLATFORM_AUDIT_STORE=url).exit_code == ExitCode.OK
    s3 = boto3.client(
        "s3", endpoint_url=s3_env, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix="gone-object/services/")["Contents"]
    data = sorted(o["Key"] for o in listed if "_delta_log" not in o["Key"])
    s3.delete_object(Bucket=BUCKET, Key=data[0])
    result = CliRunner().invoke(app, ["audit", "--store", url, "--format", "json"])
    assert result.exit_code == ExitCode.STORE, result.output
    message = " ".join(result.output.split())
    assert data[0].rsplit("/", 1)[1] in message and "store verify" in message, message
    assert "the check failed to run" not in message
