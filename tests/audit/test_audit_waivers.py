"""Waivers: shown not dropped, expired ones reported and not hiding, stale ones reported."""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from audit_fixtures import fixture_connection
from engine_world import engine_catalogue, history, service_id

from toolkit.audit import WaiverError, load_waivers, run_audit

if TYPE_CHECKING:
    from toolkit.audit import AuditResult
    from toolkit.audit.waivers.file import Waiver

TODAY = date(2026, 2, 1)
WAIVERS = """
[[waivers]]
check = "TST001"
resources = ["svc-open"]
reason = "Legacy service, limit set by the runtime."
owner = "alice@example.com"
expires = 2026-03-01

[[waivers]]
check = "TST001"
team = "core-*"
environment = "prod*"
reason = "Core team migrates these in Q1."
owner = "bob@example.com"
expires = 2026-01-15

[[waivers]]
check = "TST002"
service = "n?w"
reason = "Singleton by design."
owner = "carol@example.com"
expires = "2026-12-31"

[[waivers]]
check = "TST003"
service = "does-not-exist-*"
reason = "Left over."
owner = "dave@example.com"
expires = 2026-12-31
"""


def audit(tmp_path: Path, text: str = WAIVERS, name: str = "waivers.toml") -> AuditResult:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return run_audit(
        fixture_connection(history()), checks=engine_catalogue(), waivers=path, today=TODAY
    )


def row(frame: pd.DataFrame, check: str, name: str) -> pd.Series:
    rows = frame[(frame.check_id == check) & (frame.resource_id == service_id(name))]
    assert len(rows) == 1, (check, name)
    return rows.iloc[0]


def test_waived_findings_are_shown_as_waived(tmp_path: Path) -> None:
    result = audit(tmp_path)
    waived = row(result.findings, "TST001", "open")
    assert waived.waived and waived.state == "open"
    assert waived.waiver_owner == "alice@example.com"
    assert waived.waiver_status == "active"
    assert row(result.findings, "TST002", "new").waived  # glob on the service name
    assert not row(result.findings, "TST002", "open").waived
    assert len(result.findings) == 8  # nothing dropped
    assert result.summary().loc["high", "waived"] == 1
    assert result.summary().loc["high", "open"] == 0


def test_expired_waiver_stops_hiding_and_is_reported(tmp_path: Path) -> None:
    result = audit(tmp_path)
    regressed = row(result.findings, "TST001", "regressed")  # core-platform / production
    assert not regressed.waived
    assert regressed.waiver_status == "expired" and regressed.waiver_owner == "bob@example.com"
    assert not row(result.findings, "TST001", "new").waived  # payments / staging: no match
    report = result.waiver_report.set_index("entry")
    assert report.loc[2, "status"] == "expired"
    assert report.loc[2, "matched"] == 1
    assert {"TST001"} <= set(result.failing("high").check_id)


def test_stale_waiver_is_reported(tmp_path: Path) -> None:
    report = audit(tmp_path).waiver_report.set_index("entry")
    assert report.loc[4, "status"] == "stale" and report.loc[4, "matched"] == 0
    assert report.loc[1, "status"] == "active" and report.loc[3, "status"] == "active"
    assert report.loc[4, "selector"] == "service does-not-exist-*"


def test_a_waiver_ending_within_two_weeks_is_expiring_and_still_hides(tmp_path: Path) -> None:
    text = "".join(
        f'[[waivers]]\ncheck = "TST001"\nresources = ["svc-{name}"]\nreason = "r"\n'
        f'owner = "o"\nexpires = {expires}\n'
        for name, expires in (("open", "2026-02-01"), ("new", "2026-02-15"),
                              ("regressed", "2026-02-16"), ("gone", "2026-02-10"),
                              ("fine", "2026-01-31"))
    )  # fmt: skip
    result = audit(tmp_path, text)
    report = result.waiver_report.set_index("entry")
    # a stale waiver is stale however soon it ends: removing it is what to do
    assert report.status.tolist() == ["expiring", "expiring", "active", "stale", "expired"]
    assert report.days_left.tolist() == [0, 14, 15, 9, -1]  # it ends on its day, inclusive
    assert {"open", "new", "regressed"} == {
        name for name in ("open", "new", "regressed") if row(result.findings, "TST001", name).waived
    }
    assert result.failing("high").empty


def test_a_waiver_for_a_resolved_finding_only_is_stale(tmp_path: Path) -> None:
    text = """
[[waivers]]
check = "TST001"
resources = ["svc-resolved"]
reason = "Fixed already."
owner = "erin@example.com"
expires = 2026-12-31
"""
    result = audit(tmp_path, text)
    # it was shown waived and active while the report called its waiver stale, and it
    # dropped out of every count (resolved 2 became 1, waived stayed 0)
    resolved = row(result.findings, "TST001", "resolved")
    assert not resolved.waived and pd.isna(resolved.waiver_status)
    assert result.waiver_report.status.tolist() == ["stale"]
    assert result.summary().loc["high", "resolved"] == 2
    assert result.per_check().set_index("check_id").loc["TST001", "resolved"] == 2


def test_counts_add_up_to_every_finding_whatever_is_waived(tmp_path: Path) -> None:
    names = ("open", "new", "regressed", "resolved", "gone")
    result = audit(
        tmp_path, "".join(entry("2026-12-31", f'resources = ["svc-{n}"]') for n in names)
    )
    assert result.findings.waived.sum() == 3  # the three in alarm; resolved ones stay resolved
    assert int(result.summary().to_numpy().sum()) == len(result.findings) == 8
    counts = result.per_check()[["new", "regressed", "open", "resolved", "waived"]]
    assert int(counts.to_numpy().sum()) == 8
    # a findings table marking a resolved finding waived still counts it, once, as resolved
    import dataclasses

    marked = dataclasses.replace(result, findings=result.findings.assign(waived=True))
    assert marked.summary().loc["high"].to_dict() == {
        "new": 0, "regressed": 0, "open": 0, "resolved": 2, "waived": 3
    }  # fmt: skip
    assert int(marked.summary().to_numpy().sum()) == 8


def one_waiver(check: str) -> str:
    entry = '[[waivers]]\ncheck = "{}"\nservice = "*"\nreason = "r"\nowner = "o"\n'
    return entry.format(check) + "expires = 2026-12-31\n"


@pytest.mark.parametrize(
    ("check", "said"),
    [("TST0001", "did you mean TST001?"), ("tst002", "did you mean TST002?"),
     ("ZZZ999", "`platform-audit checks` lists them")],
)  # fmt: skip
def test_a_waiver_naming_no_check_is_refused(tmp_path: Path, check: str, said: str) -> None:
    # it could never match: the finding it meant to waive would fail the gate unexplained
    message = rf"waivers.toml: waiver #2 \({check}\): no check has this id; {re.escape(said)}"
    with pytest.raises(WaiverError, match=message):
        audit(tmp_path, one_waiver("TST001") + one_waiver(check))


def test_a_waiver_check_is_one_exact_id_not_a_glob(tmp_path: Path) -> None:
    # "TST*" once got "did you mean TST001?", as if it were a typo for one id
    message = (
        r"waiver #2 \(TST\*\): 'check' must be one exact check id, not a glob: write one "
        r"waiver per check \(ids it would cover: TST001, TST002, TST003\)"
    )
    with pytest.raises(WaiverError, match=message):
        audit(tmp_path, one_waiver("TST001") + one_waiver("TST*"))
    with pytest.raises(WaiverError, match=r"not a glob: .*`platform-audit checks` lists them"):
        audit(tmp_path, one_waiver("ZZZ?"))


def test_a_waiver_for_a_check_not_run_is_unchecked_not_stale(tmp_path: Path) -> None:
    # RES002 is a built-in check the engine's catalogue does not run, as with --check
    result = audit(tmp_path, one_waiver("RES002") + one_waiver("TST003"))
    assert result.waiver_report.status.tolist() == ["unchecked", "active"]


def test_waivers_in_yaml(tmp_path: Path) -> None:
    text = """
waivers:
  - check: TST001
    resources: [svc-new]
    reason: Being fixed.
    owner: frank@example.com
    expires: 2026-06-30
"""
    result = audit(tmp_path, text, "waivers.yaml")
    assert row(result.findings, "TST001", "new").waived
    assert not row(result.findings, "TST001", "open").waived


def test_failing_ignores_waived_findings(tmp_path: Path) -> None:
    text = "\n".join(
        f'[[waivers]]\ncheck = "TST001"\nresources = ["svc-{name}"]\nreason = "r"\n'
        f'owner = "o"\nexpires = 2026-12-31\n'
        for name in ("open", "new", "regressed")
    )
    assert audit(tmp_path, text).failing("high").empty


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[waivers]]\ncheck = "TST001"\nreason = "r"\nowner = "o"\nexpires = 2026-01-01\n',
         r"waiver #1 \(TST001\): say what it waives"),
        ('[[waivers]]\ncheck = "TST001"\nservice = "x"\nowner = "o"\nexpires = 2026-01-01\n',
         r"waiver #1 \(TST001\): 'reason' is required"),
        ('[[waivers]]\ncheck = "TST001"\nservice = "x"\nreason = "r"\nowner = "o"\n',
         r"'expires' is required"),
        ('[[waivers]]\ncheck = "TST001"\nservice = "x"\nreason = "r"\nowner = "o"\n'
         'expires = "soon"\n', r"'expires' = \"soon\" is not a date: give one such as"),
        ('[[waivers]]\ncheck = "TST001"\nservcie = "x"\nreason = "r"\nowner = "o"\n'
         "expires = 2026-01-01\n", r"unknown key 'servcie'; did you mean 'service'"),
        ('[[waivers]]\ncheck = "TST001"\nresources = []\nreason = "r"\nowner = "o"\n'
         "expires = 2026-01-01\n", r"'resources' must be a non-empty list"),
        ('[[waiver]]\ncheck = "TST001"\n',
         r"top-level key 'waiver' is not understood: .*only the 'waivers' list.*did you mean"),
        ("[[waivers\n", r"not valid TOML"),
    ],
)  # fmt: skip
def test_bad_waiver_files_name_the_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WaiverError, match=message) as caught:
        load_waivers(path)
    assert str(path) in str(caught.value)


def test_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "waivers.yml"
    path.write_text("waivers: [unclosed\n", encoding="utf-8")
    with pytest.raises(WaiverError, match="not valid YAML"):
        load_waivers(path)
    path.write_text("waivers:\n  - just a string\n", encoding="utf-8")
    with pytest.raises(WaiverError, match="waiver #1 must be a table"):
        load_waivers(path)
    with pytest.raises(WaiverError, match="does not exist"):
        load_waivers(tmp_path / "nope.toml")


ENTRY = 'check = "TST001"\nservice = "x"\nreason = "r"\nowner = "o"\n'
YAML_ENTRY = "waivers:\n  - check: TST001\n    service: x\n    reason: r\n"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        # unreadable bytes: once a UnicodeDecodeError traceback
        ("waivers.toml", b"\x00\xff\xfe\x80garbage", r"is not UTF-8 text, byte 1 cannot be read"),
        ("waivers.yaml", "waivers: []\n".encode("utf-16"), r"is not UTF-8 text \(it is UTF-16\)"),
        # a date that does not exist, in YAML: once a bare ValueError
        ("waivers.yaml", YAML_ENTRY + "    owner: o\n    expires: 2026-02-30\n",
         r"'2026-02-30' is not a real date"),
        # a key written twice: PyYAML kept the last, waiving postgres instead of mongodb
        ("waivers.yaml", YAML_ENTRY + "    service: y\n    owner: o\n    expires: 2099-01-01\n",
         r"found 'service' twice"),
        # a date and time: its time was dropped without a word
        ("waivers.toml", f"[[waivers]]\n{ENTRY}expires = 2026-11-22T00:00:01Z\n",
         r"'expires' = 2026-11-22T00:00:01\+00:00 is a date and time: give a date \(YYYY-MM-DD\)"),
        ("waivers.toml", f'[[waivers]]\n{ENTRY}expires = "2026-12-31T10:00:00Z"\n',
         r"'expires' = \"2026-12-31T10:00:00Z\" is a date and time"),
        ("waivers.yaml", YAML_ENTRY + "    owner: o\n    expires: 2026-12-31 10:00:00\n",
         r"'expires' = 2026-12-31T10:00:00 is a date and time"),
        # present but not a date: the value is shown, and it is not called missing
        ("waivers.toml", f'[[waivers]]\n{ENTRY}expires = "2026-13-01"\n',
         r"'expires' = \"2026-13-01\" is not a date: give one such as 2026-06-30"),
        ("waivers.toml", f"[[waivers]]\n{ENTRY}expires = 20261231\n",
         r"'expires' = 20261231 is not a date"),
        ("waivers.toml", f'[[waivers]]\n{ENTRY}expires = "20261231"\n',
         r"'expires' = \"20261231\" is not a date"),
        ("waivers.toml", f"[[waivers]]\n{ENTRY}expires = 12:00:00\n",
         r"'expires' = 12:00:00 is not a date"),
        # YAML 1.1 reads a bare no as false
        ("waivers.yaml", YAML_ENTRY.replace("reason: r", "reason: r\n    owner: no")
         + "    expires: 2099-01-01\n",
         r"'owner' must be text, not false: put it in quotes, as YAML reads a bare no, yes"),
        ('waivers.toml', f"[waivers]\n{ENTRY}expires = 2026-12-31\n",
         r"under \[\[waivers\]\] \(two brackets\), not \[waivers\]"),
        # the suffix picks the parser
        ("waivers.toml", YAML_ENTRY + "    owner: o\n    expires: 2099-01-01\n",
         r"it looks like YAML, which is read only from a \.yaml or \.yml file"),
        ("waivers.json", '{"waivers": []}\n', r"the suffix picks the parser"),
        ("waivers.yaml", f"[[waivers]]\n{ENTRY}expires = 2026-12-31\n",
         r"it looks like TOML, which is read from a \.toml file"),
    ],
)  # fmt: skip
def test_unreadable_or_ambiguous_waivers_are_refused_naming_the_file(
    tmp_path: Path, name: str, content: str | bytes, message: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(WaiverError, match=message) as caught:
        load_waivers(path)
    assert str(path) in str(caught.value)


TOML_OWNER = '[[waivers]]\ncheck = "TST001"\nservice = "x"\nreason = "r"\nowner = {}\n'


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [("waivers.toml", TOML_OWNER.format(42) + "expires = 2026-12-31\n",
      "'owner' must be text, not 42: put it in quotes (owner = \"42\")"),
     ("waivers.toml", TOML_OWNER.format("true") + "expires = 2026-12-31\n",
      "'owner' must be text, not true: put it in quotes (owner = \"true\")"),
     ("waivers.yaml", YAML_ENTRY + "    owner: 42\n    expires: 2099-01-01\n",
      "'owner' must be text, not 42: put it in quotes (owner: \"42\")")],
)  # fmt: skip
def test_the_yaml_boolean_hint_is_only_for_a_yaml_boolean(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    assert f"{path}: waiver #1 (TST001): {said}" == str(caught.value)  # no word of YAML's no/yes


YAML_ANCHORED = """
{key}: &common
  reason: Migrating in Q3.
  owner: grace@example.com
  expires: 2026-09-30
waivers:
  - <<: *common
    check: TST001
    service: x
"""


def test_a_top_level_key_besides_waivers_is_named(tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(YAML_ANCHORED.format(key="base"), encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: top-level key 'base' is not understood: the file may hold ")
    assert "only the 'waivers' list" in said and "'x-'" in said  # where YAML anchors may go
    path.write_text(YAML_ANCHORED.format(key="x-common"), encoding="utf-8")
    assert [(w.owner, w.expires) for w in load_waivers(path)] == [
        ("grace@example.com", date(2026, 9, 30))
    ]
    toml = tmp_path / "waivers.toml"
    toml.write_text(f'version = 2\nteam = "x"\n[[waivers]]\n{ENTRY}expires = 2026-12-31\n')
    with pytest.raises(WaiverError, match=r"top-level keys 'team', 'version' are not understood"):
        load_waivers(toml)


@pytest.mark.parametrize(
    ("field", "glob", "said"),
    [("service", "[abc", "opens a [ set that is never closed"),
     ("team", "core-[!]", "opens a [ set that is never closed"),  # a ] first in a set is literal
     ("project", "web\\", "ends in a lone \\"),
     ("environment", "prod-[9-0]", "range 9-0 is backwards"),
     ("service", "caf[éè]", "'é' is not ASCII")],
)  # fmt: skip
def test_a_glob_that_can_never_match_is_refused_when_loading(
    tmp_path: Path, field: str, glob: str, said: str
) -> None:
    # it once loaded, matched nothing, and was reported as stale as if no finding were left
    path = tmp_path / "waivers.toml"
    shown = json.dumps(glob, ensure_ascii=False)
    body = ENTRY.replace('service = "x"', f"{field} = {shown}")
    path.write_text(f"[[waivers]]\n{body}expires = 2026-12-31\n", encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    message = f"{path}: waiver #1 (TST001): '{field}' = {shown} "
    assert str(caught.value).startswith(message)
    assert said in str(caught.value)


PATTERNS = ["[abc", "[]", "[!]", "[]]", "[!]]", "[a-]", "[-a]", "a\\", "a\\*", "[z-a]", "[!z-a]",
            "[b-az]", "[[]", "[\\]", "a[", "*[", "[a-", "a[!-]"]  # fmt: skip


def test_the_glob_check_agrees_with_duckdb() -> None:
    import itertools

    import duckdb

    from toolkit.audit.waivers import parse_waivers

    names = ["".join(p) for n in range(4) for p in itertools.product("abz-[]!\\*", repeat=n)]
    con = duckdb.connect()
    for pattern in PATTERNS:
        matches = con.execute(
            "select count(*) from unnest($names) t(name) where name glob $glob",
            {"names": names, "glob": pattern},
        ).fetchone()
        entry = {"check": "TST001", "service": pattern, "reason": "r", "owner": "o",
                 "expires": date(2026, 12, 31)}  # fmt: skip
        try:
            parse_waivers({"waivers": [entry]})
            refused = False
        except WaiverError:
            refused = True
        assert refused == (matches == (0,)), pattern


def test_a_folder_is_not_a_waivers_file(tmp_path: Path) -> None:
    with pytest.raises(WaiverError, match="is a folder, not a file"):
        load_waivers(tmp_path)


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "waivers.toml"
    path.write_bytes(b"\xef\xbb\xbf" + f"[[waivers]]\n{ENTRY}expires = 2026-12-31\n".encode())
    assert [w.expires for w in load_waivers(path)] == [date(2026, 12, 31)]


def entry(expires: str, selector: str, check: str = "TST001") -> str:
    return (
        f'[[waivers]]\ncheck = "{check}"\n{selector}\nreason = "r"\nowner = "o"\n'
        f"expires = {expires}\n"
    )


def test_an_id_of_a_waiver_that_matches_no_finding_is_reported(tmp_path: Path) -> None:
    # matched 2 of 3 ids: the waiver was 'active', and the typo'd id was never named
    text = entry("2026-12-31", 'resources = ["svc-open", "typo-0000", "svc-new", "svc-resolved"]')
    report = audit(tmp_path, text).waiver_report
    assert report.status.tolist() == ["active"]
    assert report.stale_ids.tolist() == ["typo-0000, svc-resolved"]  # in the file's order
    assert report.covered_by.isna().all()


def test_a_waiver_wholly_covered_by_a_longer_one_is_a_duplicate_not_expiring(
    tmp_path: Path,
) -> None:
    text = (
        entry("2026-12-31", 'resources = ["svc-open", "svc-new"]')
        + entry("2026-02-10", 'resources = ["svc-open"]')  # ends in 9 days: it nagged "renew it"
        + entry("2026-12-31", 'resources = ["svc-new"]')  # as long as #1: the later is the copy
        + entry("2027-06-30", 'resources = ["svc-new", "svc-regressed"]')  # only partly covered
    )
    report = audit(tmp_path, text).waiver_report.set_index("entry")
    assert report.status.tolist() == ["active", "duplicate", "duplicate", "active"]
    assert report.covered_by.tolist()[1:3] == [1, 4]  # the one lasting longest covers it
    assert report.covered_by.isna()[[1, 4]].all()


def test_an_expired_waiver_covers_nothing(tmp_path: Path) -> None:
    text = entry("2026-01-15", 'resources = ["svc-open"]') + entry(
        "2026-02-10", 'resources = ["svc-open"]'
    )
    assert audit(tmp_path, text).waiver_report.status.tolist() == ["expired", "expiring"]


def test_the_audit_command_says_what_to_do_and_counts_past_twenty(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import pandas as pd

    from toolkit.audit.waivers import ATTENTION
    from toolkit.cli.audit import _print_waiver_messages

    def row(entry: int, status: str, stale_ids: str | None = None, covered_by: int | None = None
            ) -> dict[str, object]:  # fmt: skip
        return {"entry": entry, "check_id": "TST001", "owner": "o", "expires": "2026-02-10",
                "days_left": 9, "status": status, "stale_ids": stale_ids,
                "covered_by": covered_by}  # fmt: skip

    rows = [row(1, "active", stale_ids="typo-0000"), row(2, "expiring", covered_by=None),
            row(3, "duplicate", covered_by=1)]  # fmt: skip
    _print_waiver_messages(pd.DataFrame(rows), ATTENTION)
    said = " ".join(capsys.readouterr().err.split())
    assert "waiver #1 (TST001, o): resource id(s) typo-0000 match no finding in alarm" in said
    assert "waiver #2 (TST001, o) ends in 9 day(s)" in said
    assert "waiver #3 (TST001, o) is a duplicate: waiver #1 holds every finding" in said
    assert "renew" not in said.split("waiver #3", 1)[1]
    _print_waiver_messages(pd.DataFrame([row(n, "stale") for n in range(1, 50_001)]), ATTENTION)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 21 and "... and 49980 more waiver message(s)" in lines[-1]


def test_a_finding_two_waivers_hold_shows_the_one_the_report_keeps(tmp_path: Path) -> None:
    # it showed entry #1, the earliest, which the report calls a duplicate to remove
    text = entry("2026-06-30", 'resources = ["svc-open"]') + entry(
        "2026-12-31", 'resources = ["svc-open", "svc-new"]'
    ).replace('owner = "o"', 'owner = "kept"')
    result = audit(tmp_path, text)
    report = result.waiver_report.set_index("entry")
    assert report.status.tolist() == ["duplicate", "active"] and report.loc[1, "covered_by"] == 2
    shown = row(result.findings, "TST001", "open")
    assert (shown.waiver_owner, shown.waiver_expires) == ("kept", date(2026, 12, 31))


def test_of_two_expired_waivers_a_finding_shows_the_one_that_ended_last(tmp_path: Path) -> None:
    text = entry("2026-01-10", 'resources = ["svc-open"]') + entry(
        "2026-01-20", 'resources = ["svc-open"]'
    )
    shown = row(audit(tmp_path, text).findings, "TST001", "open")
    assert not shown.waived and shown.waiver_status == "expired"
    assert shown.waiver_expires == date(2026, 1, 20)


YAML_REST = {"check": "TST001", "service": "x", "reason": "r", "owner": "o",
             "expires": "2026-12-31"}  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [("check", "&c [*c]", "waiver #1: 'check' must be text, not [[...]]"),
     ("expires", "&e [*e]", "'expires' = [[...]] is not a date"),
     ("service", "&s [*s]", "'service' must be a name or glob such as 'web-*', not [[...]]"),
     ("reason", "&r {a: *r}", '\'reason\' must be text, not {"a": {...}}'),
     ("owner", "&o [1, [2, *o]]", "'owner' must be text, not [1, [2, [...]]]")],
)  # fmt: skip
def test_a_yaml_alias_of_itself_is_refused_not_a_crash(
    tmp_path: Path, key: str, value: str, said: str
) -> None:
    # json.dumps raised "ValueError: Circular reference detected": exit 1, as if findings failed
    path = tmp_path / "waivers.yaml"
    lines = [f"    {k}: {value if k == key else v}" for k, v in YAML_REST.items()]
    path.write_text("waivers:\n  -" + "\n".join(lines)[3:] + "\n", encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    assert str(caught.value).startswith(f"{path}: waiver #1")
    assert said in str(caught.value)


def test_a_huge_or_deep_value_is_cut_or_refused(tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    levels = ["l0: &l0 [xxxxxxxxxx, xxxxxxxxxx, xxxxxxxxxx]"]
    levels += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 6)]
    rest = "\n".join(f"    {k}: {v}" for k, v in YAML_REST.items() if k != "owner")
    body = "x-" + "\nx-".join(levels) + f"\nwaivers:\n  - owner: *l5\n{rest}\n"
    path.write_text(body, encoding="utf-8")  # 300,000 strings once written out
    with pytest.raises(WaiverError, match=r"'owner' must be text, not \[\[\[.{60,80}\.\.\.: "):
        load_waivers(path)
    for name, assign in (("deep.yaml", "waivers: "), ("deep.toml", "waivers = ")):
        path = tmp_path / name
        path.write_text(assign + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
        with pytest.raises(WaiverError, match=f"{re.escape(str(path))} nests lists or tables"):
            load_waivers(path)  # a RecursionError of the parser


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd to name a pipe")
def test_a_pipe_is_read_as_a_waivers_file(tmp_path: Path) -> None:
    # --waivers <(sops -d waivers.toml) was refused: "does not exist", as it is no regular file
    toml_text = f"[[waivers]]\n{ENTRY}expires = 2026-12-31\n"
    assert [w.owner for w in _through_a_pipe(toml_text)] == ["o"]
    with pytest.raises(WaiverError, match="is a folder, not a file"):
        load_waivers(tmp_path)
    with pytest.raises(WaiverError, match="does not exist"):
        load_waivers(tmp_path / "nope.toml")


def _through_a_pipe(text: str) -> list[Waiver]:
    read, write = os.pipe()
    try:
        os.write(write, text.encode())
        os.close(write)
        return load_waivers(Path(f"/dev/fd/{read}"))
    finally:
        os.close(read)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd to name a pipe")
def test_a_pipe_of_yaml_is_read_as_yaml() -> None:
    # <(sops -d waivers.yaml) has no suffix: it was read as TOML and refused, with the advice
    # to rename the file
    yaml_text = YAML_ENTRY + "    owner: o\n    expires: 2026-12-31\n"
    assert [w.owner for w in _through_a_pipe(yaml_text)] == ["o"]  # TOML: the test above
    with pytest.raises(
        WaiverError,
        match=r"not valid TOML .*with no suffix \(a pipe\), a file is "
        r"read as YAML when a line starts 'waivers:', else as TOML",
    ):
        _through_a_pipe("check = TST001\n")


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [("waivers.toml", 'waivers = ""\n',
      "'waivers' must be a list of entries ([[waivers]] entries in TOML), not \"\""),
     ("waivers.toml", "waivers = false\n", "'waivers' must be a list of entries (" ),
     ("waivers.toml", "waivers = 0\n", "'waivers' must be a list of entries ("),
     ("waivers.toml", "waivers = {}\n",
      "'waivers' must be a list of entries, not a table: in TOML write each one under "
      "[[waivers]] (two brackets), not [waivers]"),
     ("waivers.yaml", "[]\n", "the file must hold one list named 'waivers' ('- ' items under "
      "'waivers:' in YAML), not []"),
     ("waivers.yaml", "false\n", "the file must hold one list named 'waivers' ("),
     ("waivers.yaml", "0\n", "the file must hold one list named 'waivers' ("),
     ("waivers.yaml", '""\n', "the file must hold one list named 'waivers' ("),
     ("waivers.yaml", "waivers: no\n", "'waivers' must be a list of entries ('- ' items under "
      "'waivers:' in YAML), not false")],
)  # fmt: skip
def test_a_waivers_list_of_the_wrong_type_is_refused_not_read_as_none(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    assert str(caught.value).startswith(f"{path}: {said}")


@pytest.mark.parametrize(
    ("name", "content"),
    [("waivers.toml", ""), ("waivers.toml", "# none yet\n"), ("waivers.yaml", ""),
     ("waivers.yaml", "# none yet\n"), ("waivers.yaml", "waivers:\n"),
     ("waivers.yaml", "waivers: []\n"), ("waivers.toml", "waivers = []\n")],
)  # fmt: skip
def test_an_empty_file_or_list_holds_no_waivers(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert load_waivers(path) == []


YAML_WAIVER = "waivers:\n  - check: TST001\n    reason: r\n    owner: o\n    expires: 2026-12-31\n"
ONE_CHECK = ENTRY.replace('"TST001"', '["TST001"]') + "expires = 2026-12-31\n"
TWO_CHECKS = ENTRY.replace('"TST001"', '["TST001", "TST002"]') + "expires = 2026-12-31\n"


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [("waivers.yaml", "waivers:\n  check: TST001\n",
      "'waivers' must be a list of entries, not a table: start each entry with '- ' under "
      "'waivers:'"),
     ("waivers.yaml", YAML_WAIVER + "    service: no\n",
      "waiver #1 (TST001): 'service' must be a name or glob such as 'web-*', not false: put it "
      "in quotes, as YAML reads a bare no, yes, on or off as true or false"),
     ("waivers.yaml", YAML_WAIVER + "    team: on\n", "'team' must be a name or glob such as "
      "'web-*', not true: put it in quotes, as YAML reads a bare no"),
     ("waivers.yaml", YAML_WAIVER + "    project: 2026\n",
      "'project' must be a name or glob such as 'web-*', not 2026: put it in quotes "
      '(project: "2026")'),
     ("waivers.toml", f'[[waivers]]\n{ENTRY}expires = "2026-12-31 "\n',
      "'expires' = \"2026-12-31 \" has a space before or after the date: write \"2026-12-31\""),
     ("waivers.toml", f'[[waivers]]\n{ENTRY}expires = "2026-12-31x"\n',
      "'expires' = \"2026-12-31x\" is not a date"),
     ("waivers.toml", f"[[waivers]]\n{ONE_CHECK}",
      "waiver #1: 'check' must be text, not [\"TST001\"]: write the one value, not a list "
      '(check = "TST001")'),
     ("waivers.toml", f"[[waivers]]\n{TWO_CHECKS}", "write one waiver per check"),
     ("waivers.toml", "[[waivers]]\n" + ENTRY.replace('"x"', '["a", "b"]')
      + "expires = 2026-12-31\n",
      "not [\"a\", \"b\"]: write one glob matching them all, or one waiver per name")],
)  # fmt: skip
def test_each_message_says_what_is_wrong_in_the_files_own_words(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WaiverError) as caught:
        load_waivers(path)
    message = str(caught.value)
    assert said in message and message.startswith(f"{path}: ")
    if name.endswith(".yaml"):
        assert "TOML" not in message and " = " not in message  # once TOML advice for YAML


def _example_waivers() -> dict[str, str]:
    """The example waivers a user copies: the example config's commented entry, the waivers
    file's docstring and the concepts page, each as TOML text."""
    import toolkit.audit.waivers.file
    from toolkit.config import example_config

    root = Path(__file__).resolve().parents[2]
    config = example_config().splitlines()
    start = config.index("#   [[waivers]]")
    block = []
    for line in config[start:]:
        if not line.startswith("#   "):
            break
        block.append(line.removeprefix("#   "))
    doc = toolkit.audit.waivers.file.__doc__ or ""
    indented = doc.split("::\n\n", 1)[1].split("\n\n``expires``", 1)[0]
    concepts = (root / "docs" / "concepts.md").read_text(encoding="utf-8")
    fenced = concepts.split("```toml\n[[waivers]]", 1)[1].split("```", 1)[0]
    return {
        "the example config": "\n".join(block),
        "waiver_file's docstring": "\n".join(line[4:] for line in indented.splitlines()),
        "docs/concepts.md": "[[waivers]]" + fenced,
    }


@pytest.mark.parametrize("where", ["the example config", "waiver_file's docstring",
                                   "docs/concepts.md"])  # fmt: skip
def test_example_waivers_load_and_have_not_expired(where: str, tmp_path: Path) -> None:
    # an example copied as it is must not be an expired waiver, which hides nothing
    path = tmp_path / "waivers.toml"
    path.write_text(_example_waivers()[where], encoding="utf-8")
    waivers = load_waivers(path)
    assert waivers and all(w.expires > date.today() for w in waivers), waivers
