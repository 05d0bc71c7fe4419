"""``audit --format ocsf``: OCSF Detection Findings that py-ocsf-models parses back, with the
lifecycle as OCSF status, the severity as severity_id, and no credential in any record."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from engine_world import ENGINE_CHECKS, config_file, history, write_store
from py_ocsf_models.events.findings.detection_finding import DetectionFinding
from typer.testing import CliRunner

from toolkit._version import __version__
from toolkit.cli import ExitCode, app
from toolkit.report.exports.ocsf import OCSF_STATUS, SEVERITY_IDS

if TYPE_CHECKING:
    from pathlib import Path

runner = CliRunner()
WAIVERS = """[[waivers]]
check = "TST001"
resources = ["svc-open"]
reason = "The job runner caps memory itself."
owner = "ops@example.com"
expires = 2099-01-01
"""
# Every pairing the toolkit writes: lifecycle state (or waived) -> activity, status ids.
PAIRS = {"new": (1, 1), "regressed": (2, 1), "open": (2, 2), "resolved": (3, 4), "waived": (2, 3)}
SEVERITY_CAPTIONS = {1: "Informational", 2: "Low", 3: "Medium", 4: "High", 5: "Critical"}


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit-ocsf")
    write_store(root / "store", history(hostile=True))
    (root / "waivers.toml").write_text(WAIVERS, encoding="utf-8")
    return root


def audit(root: Path, *args: str, config: Path | None = None) -> tuple[int, str, str]:
    config = config or config_file(root)
    outcome = runner.invoke(
        app, ["audit", "--store", str(root / "store"), "--config", str(config), *args]
    )
    return outcome.exit_code, outcome.stdout, outcome.stderr


def records_and_findings(root: Path, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The OCSF records of one audit and, by finding uid, the JSON format's findings."""
    code, out, err = audit(root, "--format", "ocsf", *args)
    assert code == ExitCode.OK, err
    code, plain, err = audit(root, "--format", "json", *args)
    assert code == ExitCode.OK, err
    findings = {
        f"platform-audit/{f['check_id']}/{f['resource_id']}": f
        for f in json.loads(plain)["findings"]
    }
    return json.loads(out), findings


def test_each_record_parses_back_as_a_detection_finding(store_dir: Path) -> None:
    records, findings = records_and_findings(
        store_dir, "--waivers", str(store_dir / "waivers.toml")
    )
    assert len(records) == len(findings) > 0
    for record in records:
        parsed = DetectionFinding.model_validate(record)  # the library's own pydantic model
        assert parsed.class_uid == 2004 and parsed.class_name == "Detection Finding"
        assert parsed.category_uid == 2 and parsed.category_name == "Findings"
        assert parsed.type_uid == 2004 * 100 + parsed.activity_id
        assert parsed.metadata.product.name == "platform-audit"
        assert parsed.metadata.product.version == __version__
        assert parsed.metadata.version == "1.5.0"  # the schema version py-ocsf-models builds
        finding = findings[parsed.finding_info.uid]
        state = "waived" if finding["waived"] else finding["state"]
        assert (parsed.activity_id, parsed.status_id) == PAIRS[state], state
        assert (record["activity_name"], record["status"]) == OCSF_STATUS[state]
        assert record["status_code"] == finding["state"]
        assert parsed.severity_id == SEVERITY_IDS[finding["severity"]]
        assert parsed.severity == SEVERITY_CAPTIONS[parsed.severity_id]
        assert parsed.finding_info.title == finding["title"]
        assert parsed.finding_info.desc == finding["reason"]
        assert parsed.finding_info.types == [finding["area"]]
        first = datetime.fromisoformat(finding["first_seen"])
        assert parsed.finding_info.first_seen_time == int(first.timestamp() * 1000)
        resource = record["resources"][0]
        assert resource["uid"] == finding["resource_id"]
        assert resource["type"] == finding["resource_type"]
    states = {findings[r["finding_info"]["uid"]]["state"] for r in records}
    assert states == {"new", "regressed", "open", "resolved"}  # every state was mapped


def test_a_waived_finding_is_suppressed_with_its_owner_and_reason(store_dir: Path) -> None:
    records, _ = records_and_findings(store_dir, "--waivers", str(store_dir / "waivers.toml"))
    waived = [r for r in records if r["finding_info"]["uid"] == "platform-audit/TST001/svc-open"]
    assert len(waived) == 1 and waived[0]["status"] == "Suppressed"
    assert waived[0]["status_detail"] == (
        "waived by ops@example.com until 2099-01-01: The job runner caps memory itself."
    )
    unwaived, _ = records_and_findings(store_dir)
    same = [r for r in unwaived if r["finding_info"]["uid"] == "platform-audit/TST001/svc-open"]
    assert same[0]["status"] == "In Progress" and "status_detail" not in same[0]


def test_the_resource_carries_where_it_lives(store_dir: Path) -> None:
    records, _ = records_and_findings(store_dir)
    (new,) = [r for r in records if r["finding_info"]["uid"] == "platform-audit/TST001/svc-new"]
    resource = new["resources"][0]
    assert resource["namespace"] == "payments / shop / staging"
    assert resource["group"] == {"uid": "t-pay", "name": "payments"}
    assert resource["data"]["environment"] == {"id": "e-stage", "name": "staging"}


def test_out_dot_ocsf_dot_json_picks_the_format(store_dir: Path) -> None:
    target = store_dir / "findings.ocsf.json"
    code, _, err = audit(store_dir, "--out", str(target))
    assert code == ExitCode.OK and "wrote ocsf report" in err
    records = json.loads(target.read_text(encoding="utf-8"))
    assert records and all(r["class_uid"] == 2004 for r in records)
    plain = store_dir / "findings.json"  # .json alone is still the JSON format
    assert audit(store_dir, "--out", str(plain))[0] == ExitCode.OK
    assert "findings" in json.loads(plain.read_text(encoding="utf-8"))
    code, _, err = audit(store_dir, "--out", str(store_dir / "x.json"), "--format", "ocsf")
    assert code == ExitCode.CONFIG and "names a json file but --format is ocsf" in err
    code, _, err = audit(store_dir, "--out", str(store_dir / "x.pdf"))
    assert code == ExitCode.CONFIG and ".sarif or .ocsf.json" in " ".join(err.split())


LEAKY = """-- id: LEAK001
-- title: A check whose reason quotes a connection string
-- severity: medium
-- area: deployments
-- risk: Crash messages quote connection strings.
-- remediation: Fix the start command.
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id, 'alarm' as status,
    'start failed: postgres://app:Sup3rS3cretPw@db:5432/app refused' as reason,
    to_json(struct_pack(command := 'PGPASSWORD=Sup3rS3cretPw psql -h db')) as evidence
from services
"""


def test_no_credential_reaches_an_ocsf_record(store_dir: Path, tmp_path: Path) -> None:
    """Findings carry no variable values; free text a check quotes is scrubbed once more."""
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "LEAK001.sql").write_text(LEAKY, encoding="utf-8")
    config = tmp_path / "platform-audit.toml"
    config.write_text(
        f'[audit]\nchecks = ["{ENGINE_CHECKS}", "{checks}"]\nbuiltin_checks = false\n',
        encoding="utf-8",
    )
    code, out, err = audit(store_dir, "--format", "ocsf", "--check", "LEAK001", config=config)
    assert code == ExitCode.OK, err
    assert "Sup3rS3cretPw" not in out
    records = json.loads(out)
    assert records[0]["message"] == "start failed: postgres://***@db:5432/app refused"
    assert records[0]["unmapped"]["evidence"] == {"command": "PGPASSWORD=*** psql -h db"}
