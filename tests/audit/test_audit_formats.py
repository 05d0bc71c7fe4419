"""Every output format is valid, and whatever the platform returned stays plain text.

SARIF: no PyPI package ships the official SARIF 2.1.0 JSON schema (sarif-om, sarif-tools,
sarif-pydantic and pysarif were checked), and tests never download. So the output is
validated with jsonschema against ``sarif-2.1.0-subset.schema.json``: the official
definitions of every object the audit writes, with their required properties, enums and
``additionalProperties: false``, written by hand.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest
from audit_fixtures import fixture_connection
from engine_world import HOSTILE, engine_catalogue, history
from rich.console import Console

from toolkit.audit import FINDING_COLUMNS, AuditResult, Catalogue, run_audit
from toolkit.report.exports import escape_markdown, findings_table, render, sarif, to_sarif
from toolkit.report.exports.formats import csv_cell, evidence_text, owner_path, to_csv, visible

SCHEMA = json.loads(
    Path(__file__).with_name("sarif-2.1.0-subset.schema.json").read_text(encoding="utf-8")
)
WAIVER = """
[[waivers]]
check = "TST001"
resources = ["svc-new"]
reason = "Being fixed | soon"
owner = "alice@example.com"
expires = 2099-01-01
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    waivers = tmp_path_factory.mktemp("waivers") / "waivers.toml"
    waivers.write_text(WAIVER, encoding="utf-8")
    con = fixture_connection(history(hostile=True))
    return run_audit(con, checks=engine_catalogue(), waivers=waivers)


def test_json(result: AuditResult) -> None:
    data = json.loads(render(result, "json"))
    assert data["snapshot"]["snapshot_id"] == result.target.snapshot_id
    assert len(data["findings"]) == len(result.findings) == 8
    first = data["findings"][0]
    assert set(first) == set(FINDING_COLUMNS)
    assert isinstance(first["evidence"], dict)  # parsed, not a string of JSON
    assert data["summary"]["high"]["waived"] == 1
    by_check = {row["check_id"]: row for row in data["by_check"]}
    assert list(by_check) == ["TST001", "TST002", "TST003"]
    assert (by_check["TST001"]["new"], by_check["TST001"]["waived"]) == (0, 1)  # waived apart
    assert by_check["TST001"]["mttr_hours"] == pytest.approx(42.0)
    assert by_check["TST002"]["mttr_hours"] is None  # none resolved: null, not NaN
    names = {f["resource_name"] for f in data["findings"]}
    assert HOSTILE in names  # exactly as returned


def test_csv(result: AuditResult) -> None:
    rows = list(csv.DictReader(io.StringIO(render(result, "csv"))))
    assert len(rows) == 8
    assert tuple(rows[0]) == FINDING_COLUMNS
    assert HOSTILE in {r["resource_name"] for r in rows}
    assert {r["waived"] for r in rows} == {"True", "False"}


def test_csv_keeps_formulas_from_running_in_a_spreadsheet(result: AuditResult) -> None:
    findings = result.findings.copy()
    first = findings.index[0]
    findings.loc[first, "resource_name"] = '=HYPERLINK("https://evil.example","x")'
    findings.loc[first, "reason"] = "-2+3"
    findings.loc[first, "team_name"] = "@SUM(A1)"
    rows = list(csv.DictReader(io.StringIO(to_csv(replace(result, findings=findings)))))
    assert rows[0]["resource_name"] == '\'=HYPERLINK("https://evil.example","x")'
    assert rows[0]["reason"] == "'-2+3"
    assert "@SUM(A1)" not in {v for r in rows for v in r.values()}
    assert csv_cell(-1) == -1 and csv_cell("-1") == "'-1" and csv_cell(None) == ""
    assert csv_cell("web|x") == "web|x"


def test_markdown_escapes_hostile_names(result: AuditResult) -> None:
    text = render(result, "markdown")
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| severity | state | check"))
    table = lines[lines.index(header) : lines.index(header) + 10]
    rows = [line for line in table if line.startswith("| ")]
    columns = header.count(" | ") + 1
    for line in rows:  # an unescaped pipe in a name would add a column
        unescaped = line.replace("\\|", "")
        assert unescaped.count("|") == columns + 1, line
    hostile_row = next(line for line in rows if "rm -rf" in line)
    assert "\\`rm -rf\\`" in hostile_row
    assert "\\<img" in hostile_row and "<img" not in hostile_row.replace("\\<img", "")
    assert "second line" in hostile_row  # the line break is folded into the cell


def test_escape_markdown() -> None:
    assert escape_markdown("a|b`c`*d*_e_[f](g)<h>") == "a\\|b\\`c\\`\\*d\\*\\_e\\_\\[f\\](g)\\<h\\>"
    assert escape_markdown("two\nlines") == "two lines"
    assert escape_markdown(None) == ""


def test_table_prints_markup_as_text(result: AuditResult) -> None:
    buffer = io.StringIO()
    Console(file=buffer, width=400, color_system=None).print(findings_table(result))
    text = buffer.getvalue()
    assert "[bold]x[/bold]" in text  # not interpreted as rich markup
    assert "8 checks" not in text and "3 checks;" in text
    # a line break in a name is shown as an escape: on a line of its own, its second half
    # would pass for the line under the name (where the resource lives)
    assert "_z_\\x0asecond line" in text
    assert "payments / shop / production" in text  # where each resource lives


def test_owner_path_names_the_service_of_a_resource_inside_one() -> None:
    row = {"resource_type": "variable", "team_name": "core", "team_id": "t1",
           "project_name": None, "project_id": "p1", "environment_name": "prod",
           "service_name": "api", "service_id": "s1"}  # fmt: skip
    assert owner_path(row) == "core / p1 / prod / api"
    assert owner_path({**row, "resource_type": "service"}) == "core / p1 / prod"
    assert owner_path({"resource_type": "credential"}) == ""


def test_sarif_is_valid_and_carries_the_lifecycle(result: AuditResult) -> None:
    log = json.loads(render(result, "sarif"))
    jsonschema.validate(log, SCHEMA)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["TST001", "TST002", "TST003"]
    results = run["results"]
    assert len(results) == 6  # in alarm: resolved findings are not results
    for item in results:
        assert rules[item["ruleIndex"]] == item["ruleId"]
    baseline = {(r["ruleId"], r["properties"]["state"]): r["baselineState"] for r in results}
    assert baseline[("TST001", "open")] == "unchanged"
    assert baseline[("TST001", "regressed")] == "new"
    waived = [r for r in results if "suppressions" in r]
    assert len(waived) == 1
    assert waived[0]["suppressions"][0]["status"] == "accepted"
    assert "alice@example.com" in waived[0]["suppressions"][0]["justification"]
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels == {"TST001": "error", "TST002": "warning", "TST003": "note"}
    for rule in run["tool"]["driver"]["rules"]:  # GitHub shows severity for security rules only
        assert "security" in rule["properties"]["tags"]
        assert float(rule["properties"]["security-severity"]) > 0


def test_sarif_is_valid_with_every_builtin_rule(result: AuditResult) -> None:
    """The rules of the shipped catalogue, security checks included (their area is one
    of the tags every rule carries), in a log the schema accepts."""
    findings = result.findings.iloc[0:0]
    builtin = replace(result, checks=tuple(Catalogue.load().specs), findings=findings)
    log = to_sarif(builtin)
    jsonschema.validate(log, SCHEMA)
    areas = {rule["properties"]["area"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert "security" in areas


def test_sarif_locations_are_paths_github_code_scanning_accepts(result: AuditResult) -> None:
    # GitHub refuses a result with no physical location, or a URI with a scheme or absolute
    results = to_sarif(result)["runs"][0]["results"]
    uris = {}
    for item in results:
        physical = item["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        parsed = urlsplit(uri)
        assert not parsed.scheme and not parsed.netloc and not uri.startswith("/"), uri
        assert physical["region"]["startLine"] >= 1
        resource = item["properties"]["resource_id"]
        assert unquote(uri) == f"platform/service/{resource}"  # the id: names change
        uris[(item["ruleId"], resource)] = uri
    assert len(set(uris.values())) == len({resource for _, resource in uris})
    # a hostile id stays one path segment
    odd = replace(result, findings=result.findings.assign(resource_id="a/b c?#d"))
    uri = to_sarif(odd)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"]["uri"] == "platform/service/a%2Fb%20c%3F%23d"


def test_the_subset_schema_rejects_broken_sarif(result: AuditResult) -> None:
    log = to_sarif(result)
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SCHEMA)
    log = to_sarif(result)
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SCHEMA)


def test_unknown_format(result: AuditResult) -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        render(result, "xml")


def test_table_fits_80_columns_and_keeps_every_word(result: AuditResult) -> None:
    """A terminal's (or a pipe's) 80 columns: the reason keeps most of the width, the team
    sits under the resource and a waiver under the reason; no word is cut off."""
    buffer = io.StringIO()
    Console(file=buffer, width=80, color_system=None).print(findings_table(result))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    words = set(text.split())
    for f in result.findings.to_dict("records"):
        assert set(str(f["reason"]).split()) <= words, f["reason"]
        assert str(f["team_name"] or f["team_id"]).split()[0] in words
    waived = result.findings[result.findings["waived"]]
    assert not waived.empty
    assert f"waived by {waived['waiver_owner'].iloc[0]}" in " ".join(text.split())


def test_visible_writes_control_characters_as_escapes() -> None:
    assert visible("a\x1b[31mb\x07\x9b\u202ec\x7f") == "a\\x1b[31mb\\x07\\x9b\\u202ec\\x7f"
    assert visible("two\nlines\tand\ra tab") == "two\nlines\\x09and\\x0da tab"
    assert visible("two\nlines", keep="") == "two\\x0alines"
    assert visible("naïve café – ok") == "naïve café – ok"  # printable text as it is
    assert escape_markdown("x\x1b[0m") == "x\\\\x1b\\[0m"
    assert csv_cell("a\tb\nc\x1b") == "a\tb\nc\\x1b"  # CSV keeps tabs and line breaks
    assert csv_cell("\x1b=1") == "\\x1b=1" and csv_cell("\t=1") == "'\t=1"


def test_sarif_keeps_the_most_severe_results_within_githubs_limit(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    alarming = result.findings[result.findings.state.isin(["new", "regressed", "open"])]
    everything = to_sarif(result)["runs"][0]
    assert len(everything["results"]) == len(alarming)
    assert everything["properties"]["results_left_out"] == 0
    assert sarif.results_left_out(result) == 0
    monkeypatch.setattr(sarif, "MAX_RESULTS", 3)
    run = to_sarif(result)["runs"][0]
    kept = [(r["level"], r["baselineState"], r["ruleId"]) for r in run["results"]]
    # the high ones (errors), new and regressed before open, whatever the findings' order
    assert kept == [("error", "new", "TST001"), ("error", "new", "TST001"),
                    ("error", "unchanged", "TST001")]  # fmt: skip
    assert run["properties"]["findings_in_alarm"] == len(alarming)
    assert run["properties"]["results_left_out"] == len(alarming) - 3
    assert sarif.results_left_out(result) == len(alarming) - 3


USER_CHECK = """-- id: USR001
-- title: Every service, with evidence that is not a JSON object (a user's check)
-- severity: low
-- area: replicas
-- risk: None: it shows how each format carries such evidence.
-- remediation: None.
select snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id, 'alarm' as status,
    'Service ' || name || '.' as reason,
    if(coalesce(replicas, 0) % 2 = 0, 'replicas: ' || coalesce(replicas, 0),
        '[' || coalesce(replicas, 0) || ']') as evidence
from services
"""


def test_evidence_that_is_not_a_json_object_is_shown_as_the_check_wrote_it(
    tmp_path: Path,
) -> None:
    # The contract asks for JSON, but nothing refuses words or a JSON list from a user's
    # check: JSON output carries words as text and a list as a list, text shows either.
    (tmp_path / "USR001.sql").write_text(USER_CHECK, encoding="utf-8")
    checks = Catalogue.load([tmp_path], builtin=False)
    result = run_audit(fixture_connection(history()), checks=checks)
    written = dict(zip(result.findings.resource_name, result.findings.evidence, strict=True))
    assert {"replicas: 2", "[1]"} <= set(written.values()), written
    shown = {
        f["resource_name"]: f["evidence"] for f in json.loads(render(result, "json"))["findings"]
    }
    for name, evidence in written.items():
        assert shown[name] == (json.loads(evidence) if evidence.startswith("[") else evidence)
        assert evidence_text(evidence) == evidence  # the report's and the story's text


def test_markdown_of_an_audit_without_findings_says_so() -> None:
    quiet = {"TST002": {"min_replicas": 0}}  # no service runs fewer than none
    result = run_audit(
        fixture_connection(history()), checks=engine_catalogue(quiet).select(["TST002"])
    )
    assert result.findings.empty
    text = render(result, "markdown")
    assert text.split("## Findings\n\n", 1)[1].startswith("No findings.\n"), text


def test_same_named_variables_in_two_services_tell_apart(result: AuditResult) -> None:
    # VAR008 SECRET_KEY in two services: the Markdown's where column and the table's
    # "resource / where" cell name each one's service, so the rows differ
    findings = result.findings.head(2).copy()
    findings["check_id"], findings["resource_type"] = "TST001", "variable"
    findings["resource_name"], findings["reason"] = "SECRET_KEY", "a secret in plain text"
    findings["team_name"], findings["project_name"] = "payments", "shop"
    findings["environment_name"] = "production"
    findings["service_name"] = ["billing", "checkout"]
    two = replace(result, findings=findings)
    rows = [line for line in render(two, "markdown").splitlines() if "SECRET\\_KEY" in line]
    assert len(rows) == 2 and rows[0] != rows[1]
    assert "| payments / shop / production / billing |" in rows[0]
    assert "| payments / shop / production / checkout |" in rows[1]
    table = [line.strip() for line in render(two, "table").splitlines()]
    assert sum(line.startswith("payments / shop / production") for line in table) == 2
    assert "/ billing" in table and "/ checkout" in table  # the where cell wraps at a slash
