"""``platform-audit audit``: formats, --out, and the exit codes a CI gate relies on."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from engine_world import config_file, history, write_store
from typer.testing import CliRunner

from toolkit.audit import Catalogue
from toolkit.cli import ExitCode, app

if TYPE_CHECKING:
    from pathlib import Path

runner = CliRunner()


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit-cli")
    write_store(root / "store", history(hostile=True))
    return root


def audit(root: Path, *args: str, extra_config: str = "") -> tuple[int, str, str]:
    config = config_file(root, extra_config)
    outcome = runner.invoke(
        app, ["audit", "--store", str(root / "store"), "--config", str(config), *args]
    )
    return outcome.exit_code, outcome.stdout, outcome.stderr


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [
        ("critical", ExitCode.OK),  # the test checks have no critical one
        ("high", ExitCode.FINDINGS),
        ("low", ExitCode.FINDINGS),
    ],
)
def test_fail_on_gates_on_severity(store_dir: Path, fail_on: str, code: ExitCode) -> None:
    exit_code, _, err = audit(store_dir, "--format", "json", "--fail-on", fail_on)
    assert exit_code == code
    if code == ExitCode.FINDINGS:
        assert f"at or above {fail_on}" in err


def test_no_gate_without_fail_on(store_dir: Path) -> None:
    assert audit(store_dir, "--format", "csv")[0] == ExitCode.OK


def test_fail_on_from_the_config_file(store_dir: Path) -> None:
    code, _, _ = audit(store_dir, "--format", "json", extra_config='fail_on = "medium"\n')
    assert code == ExitCode.FINDINGS
    # one run without the gate the file sets
    code, _, _ = audit(
        store_dir, "--format", "json", "--fail-on", "Never", extra_config='fail_on = "medium"\n'
    )
    assert code == ExitCode.OK


def test_a_fail_on_that_is_no_severity_is_refused_naming_the_choices(store_dir: Path) -> None:
    code, out, err = audit(store_dir, "--format", "json", "--fail-on", "severe")
    assert code == ExitCode.CONFIG
    assert "--fail-on must be one of critical, high, medium, low or never, not 'severe'" in err
    assert out == ""  # refused before any audit ran


def tst001_waivers(root: Path, file_name: str, *services: str) -> Path:
    """A waivers file waiving TST001 for ``svc-<name>`` of each name, until 2099."""
    waivers = root / file_name
    waivers.write_text(
        "\n".join(
            f'[[waivers]]\ncheck = "TST001"\nresources = ["svc-{name}"]\nreason = "r"\n'
            'owner = "ops"\nexpires = 2099-01-01\n'
            for name in services
        ),
        encoding="utf-8",
    )
    return waivers


def test_waived_findings_do_not_fail_the_gate(store_dir: Path) -> None:
    waivers = tst001_waivers(store_dir, "waivers.toml", "open", "new", "regressed")
    args = ("--format", "json", "--fail-on", "high", "--waivers", str(waivers))
    code, out, _ = audit(store_dir, *args)
    assert code == ExitCode.OK
    assert json.loads(out)["summary"]["high"]["waived"] == 3
    assert audit(store_dir, "--format", "json", "--fail-on", "medium", "--waivers", str(waivers))[
        0
    ] == (ExitCode.FINDINGS)


def test_fail_on_new_gates_only_on_findings_that_got_worse(store_dir: Path) -> None:
    # TST001 (high) on day 4 against day 3: one finding open since day 1, one new, one regressed
    code, out, err = audit(store_dir, "--format", "json", "--fail-on", "high", "--fail-on-new")
    compared = json.loads(out)["compared_to"]["snapshot_id"]
    assert code == ExitCode.FINDINGS
    said = f"2 unwaived finding(s) at or above high, new or regressed since snapshot {compared}"
    assert said in " ".join(err.split())
    waivers = tst001_waivers(store_dir, "new-waived.toml", "new", "regressed")
    args = ("--format", "json", "--fail-on", "high", "--waivers", str(waivers))
    assert audit(store_dir, *args)[0] == ExitCode.FINDINGS  # the open one still fails...
    assert audit(store_dir, *args, "--fail-on-new")[0] == ExitCode.OK  # ...but is not new
    ratchet = "fail_on_new = true\n"
    assert audit(store_dir, *args, extra_config=ratchet)[0] == ExitCode.OK
    code = audit(store_dir, *args, "--no-fail-on-new", extra_config=ratchet)[0]
    assert code == ExitCode.FINDINGS


def test_fail_on_new_without_a_severity_is_a_usage_error(store_dir: Path) -> None:
    code, _, err = audit(store_dir, "--fail-on-new")
    assert code == ExitCode.CONFIG
    assert "add --fail-on high (or another)" in " ".join(err.split())
    # set in the config file only, it would turn the gate off silently: refused, naming it
    ratchet = "fail_on_new = true\n"
    code, _, err = audit(store_dir, "--format", "csv", extra_config=ratchet)
    assert code == ExitCode.CONFIG
    said = " ".join(err.split())
    config = store_dir / "platform-audit.toml"
    assert f"{config}: [audit] fail_on_new = true gates only with a severity" in said
    assert 'add [audit] fail_on = "high" (or another)' in said
    assert audit(store_dir, "--format", "csv", "--fail-on", "high", extra_config=ratchet)[0] == (
        ExitCode.FINDINGS
    )
    # a run that says it does not gate, or without the ratchet, is what it says
    for args in (("--fail-on", "never"), ("--no-fail-on-new",)):
        assert audit(store_dir, "--format", "csv", *args, extra_config=ratchet)[0] == ExitCode.OK


@pytest.mark.parametrize(
    ("extra_config", "said"),
    [
        ('fail_on = "medium"\n', '--fail-on never lifts the gate [audit] fail_on = "medium" '
         "sets ({config}), so --fail-on-new has nothing to gate on: leave out --fail-on never"),
        ("", "--fail-on never runs without a gate, so --fail-on-new has nothing to gate on"),
    ],
)  # fmt: skip
def test_fail_on_new_with_fail_on_never_says_never_lifted_the_gate(
    store_dir: Path, extra_config: str, said: str
) -> None:
    code, _, err = audit(
        store_dir, "--fail-on", "never", "--fail-on-new", extra_config=extra_config
    )
    assert code == ExitCode.CONFIG
    assert said.format(config=store_dir / "platform-audit.toml") in " ".join(err.split())
    assert "or set [audit] fail_on" not in err  # it may well be set


def test_waivers_that_need_someone_are_named_with_what_to_do(store_dir: Path) -> None:
    soon = datetime.now(UTC).date() + timedelta(days=3)
    waivers = store_dir / "attention.toml"
    waivers.write_text(
        "".join(
            f'[[waivers]]\ncheck = "TST001"\nresources = ["svc-{name}"]\nreason = "r"\n'
            f'owner = "ops"\nexpires = {expires}\n'
            for name, expires in (("open", soon), ("new", "2026-01-01"), ("fine", "2099-01-01"))
        ),
        encoding="utf-8",
    )
    code, _, err = audit(store_dir, "--format", "csv", "--waivers", str(waivers))
    said = " ".join(err.split())
    assert code == ExitCode.OK
    ends = rf"waiver #1 \(TST001, ops\) ends in [23] day\(s\), on {soon}: renew it or fix"
    assert re.search(ends, said)  # 2 if the clock passed midnight UTC since `soon`
    assert "waiver #2 (TST001, ops) ended 2026-01-01: its findings count again" in said
    assert "waiver #3 (TST001, ops) is stale: it matches no finding in alarm; remove it" in said


def test_waiver_owners_and_ids_reach_stderr_escaped(store_dir: Path) -> None:
    """A waivers file is text anyone may edit: its line breaks and escape sequences must not
    forge or erase a line of the CI log the audit writes."""
    entry = (
        '[[waivers]]\ncheck = "TST001"\nresources = ["svc-open", "gone\\nerror: id \\u001b[31m"]\n'
        'reason = "r"\nowner = "{owner}\\nerror: forged line \\u001b[2K"\nexpires = {expires}\n'
    )  # TOML escapes: the file holds a line break and an ESC in the owner and an id
    waivers = store_dir / "hostile-waivers.toml"
    waivers.write_text(
        entry.format(owner="a", expires="2026-01-01")
        + entry.format(owner="b", expires="2099-01-01"),
        encoding="utf-8",
    )
    code, _, err = audit(store_dir, "--format", "csv", "--waivers", str(waivers))
    assert code == ExitCode.OK
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", err), repr(err)
    assert not any(line.startswith("error: ") for line in err.splitlines()), err
    said = " ".join(err.split())
    owner = r"a\x0aerror: forged line \x1b[2K"
    assert f"waiver #1 (TST001, {owner}) ended 2026-01-01" in said
    stale = r"resource id(s) gone\x0aerror: id \x1b[31m match no finding in alarm"
    assert stale in said


def test_out_file_and_formats(store_dir: Path) -> None:
    for fmt in ("json", "csv", "markdown", "sarif", "table"):
        target = store_dir / f"report.{fmt}"
        code, _out, err = audit(store_dir, "--format", fmt, "--out", str(target))
        assert code == ExitCode.OK, err
        assert target.read_text(encoding="utf-8")
        assert f"wrote {fmt} report" in err
    sarif = json.loads((store_dir / "report.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"


def test_out_suffix_picks_the_format_and_a_mislabel_is_refused(store_dir: Path) -> None:
    sarif = store_dir / "picked.sarif"
    code, _, err = audit(store_dir, "--out", str(sarif))
    assert code == ExitCode.OK, err
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
    markdown = store_dir / "picked.MD"
    assert audit(store_dir, "--out", str(markdown))[0] == ExitCode.OK
    assert markdown.read_text(encoding="utf-8").startswith("#")
    for args, said in (
        (("--out", str(store_dir / "x.json"), "--format", "csv"), "names a json file but"),
        (
            ("--out", str(store_dir / "x.pdf")),
            "name it .txt, .json, .csv, .md, .sarif or .ocsf.json",
        ),
    ):
        code, _, err = audit(store_dir, *args)
        assert code == ExitCode.CONFIG and said in " ".join(err.split())
    assert not (store_dir / "x.json").exists() and not (store_dir / "x.pdf").exists()


def test_unwritable_out_is_a_usage_error(store_dir: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = audit(store_dir, "--out", str(blocker / "findings.json"))
    assert code == ExitCode.CONFIG, err
    assert "cannot write" in err and "choose another --out" in " ".join(err.split())


def test_table_on_stdout_keeps_markup_literal(store_dir: Path) -> None:
    code, out, _ = audit(store_dir, "--latest-only")
    assert code == ExitCode.OK
    assert "[bold]x[/bold]" in out.replace("\n", "") or "[bold]x" in out


def test_snapshot_choice_and_usage_errors(store_dir: Path) -> None:
    code, _, err = audit(store_dir, "--snapshot", "ffffffff")
    assert code == ExitCode.CONFIG and "is not a committed snapshot" in err
    assert audit(store_dir, "--format", "xml")[0] == ExitCode.CONFIG
    assert audit(store_dir, "--fail-on", "info")[0] == ExitCode.CONFIG
    code, _, err = audit(store_dir, "--waivers", str(store_dir / "missing.toml"))
    assert code == ExitCode.CONFIG and "does not exist" in err


def test_empty_store_says_to_take_a_snapshot(tmp_path: Path) -> None:
    code, _, err = audit(tmp_path, "--format", "json")
    assert code == ExitCode.CONFIG and "platform-audit snapshot" in err


def checks_of(out: str) -> set[str]:
    return {f["check_id"] for f in json.loads(out)["findings"]}


def test_check_and_skip_choose_the_checks_an_audit_runs(store_dir: Path) -> None:
    code, out, _ = audit(store_dir, "--format", "json")
    assert code == ExitCode.OK and checks_of(out) == {"TST001", "TST002", "TST003"}
    code, out, _ = audit(store_dir, "--format", "json", "--check", "replicas")
    assert code == ExitCode.OK and checks_of(out) == {"TST002", "TST003"}
    code, out, _ = audit(store_dir, "--format", "json", "--check", "tst00*", "--skip", "TST003")
    assert code == ExitCode.OK and checks_of(out) == {"TST001", "TST002"}
    # [audit] skip leaves a check out of every audit; a gate then ignores its findings.
    args = ("--format", "json", "--fail-on", "high")
    assert audit(store_dir, *args)[0] == ExitCode.FINDINGS  # TST001 is high
    code, out, _ = audit(store_dir, *args, extra_config='skip = ["TST001"]\n')
    assert code == ExitCode.OK and checks_of(out) == {"TST002", "TST003"}


def test_a_check_pattern_that_matches_nothing_is_a_usage_error(store_dir: Path) -> None:
    code, _, err = audit(store_dir, "--check", "TST009")
    message = " ".join(err.split())
    assert code == ExitCode.CONFIG and "--check 'TST009' matches no check" in message
    assert "platform-audit checks" in message
    code, _, err = audit(store_dir, extra_config='skip = ["webhook"]\n')
    assert code == ExitCode.CONFIG and "[audit] skip 'webhook' matches no check" in err
    code, _, err = audit(store_dir, "--check", "replicas", "--skip", "TST00*")
    assert code == ExitCode.CONFIG and "leave no check to run" in err


def test_checks_lists_the_catalogue_with_its_thresholds(store_dir: Path) -> None:
    config = config_file(
        store_dir,
        "skip = [\"TST003\"]\nproduction_pattern = '\\bprd\\b'\n"
        "[checks.TST002]\nmin_replicas = 3\n",
    )
    listed = runner.invoke(app, ["checks", "--config", str(config), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    entries = {e["id"]: e for e in json.loads(listed.stdout)}
    assert set(entries) == {"TST001", "TST002"}  # TST003 is skipped
    assert entries["TST002"]["params"]["min_replicas"] == 3  # the configured value
    assert entries["TST002"]["area"] == "replicas" and entries["TST002"]["risk"]
    table = runner.invoke(app, ["checks", "--config", str(config)], terminal_width=100)
    assert table.exit_code == 0 and "min_replicas = 3" in table.stdout
    assert "left out by [audit] skip: TST003" in table.stderr
    assert "named as [audit] production_pattern = '\\bprd\\b'" in table.stderr
    builtin = runner.invoke(app, ["checks", "--check", "WEB*", "--format", "json"])
    assert [e["id"] for e in json.loads(builtin.stdout)] == ["WEB001", "WEB002", "WEB003"]
    fewer = runner.invoke(
        app, ["checks", "--check", "WEB*", "--skip", "WEB002", "--format", "json"]
    )
    assert [e["id"] for e in json.loads(fewer.stdout)] == ["WEB001", "WEB003"]


def test_a_format_may_be_named_by_its_suffix(store_dir: Path) -> None:
    code, out, _ = audit(store_dir, "--format", "md")
    assert code == ExitCode.OK and out == audit(store_dir, "--format", "markdown")[1]
    assert out.startswith("# Platform audit")


def test_the_terminal_table_shows_the_first_findings_then_counts_per_check(
    store_dir: Path,
) -> None:
    _, out, _ = audit(store_dir, "--format", "json")
    findings = json.loads(out)["findings"]
    assert len(findings) > 2
    names = [f["resource_name"] or f["resource_id"] for f in findings]
    first = names[:2]
    # Names that fit their column whole (a longer one folds over lines); none of the first.
    rest = {n for n in names[2:] if len(n) <= 20 and " " not in n} - set(first)
    assert rest
    code, table, _ = audit(store_dir, "--limit", "2")
    flat = " ".join(table.split())
    assert code == ExitCode.OK
    assert f"showed the first 2 of {len(findings)} findings" in flat
    assert "findings per check" in table and all(name in table for name in first)
    per_check = table.split("findings per check", 1)[1]
    for check_id in {f["check_id"] for f in findings}:
        assert check_id in per_check
    shown_before_counts = table.split("findings per check", 1)[0]
    assert not any(name in shown_before_counts for name in rest), rest
    code, everything, _ = audit(store_dir, "--limit", "0")
    assert code == ExitCode.OK and "showed the first" not in everything
    assert all(name in everything for name in rest)
    target = store_dir / "all.txt"  # a file has every finding, whatever --limit says
    assert audit(store_dir, "--limit", "1", "--out", str(target))[0] == ExitCode.OK
    written = target.read_text(encoding="utf-8")
    assert all(name in written for name in rest)
    assert not [line for line in written.splitlines() if line != line.rstrip()]  # no padding


def test_counts_per_check_add_up_as_the_summary_does(store_dir: Path) -> None:
    """TST001 is the only high check: its row has the summary's high counts, waived ones
    (in alarm) apart; a resolved finding a waiver names counts as resolved (a waiver holds
    only findings in alarm)."""
    waivers = tst001_waivers(store_dir, "all-waivers.toml", "open", "new", "resolved")
    _, out, _ = audit(store_dir, "--format", "json", "--waivers", str(waivers))
    high = json.loads(out)["summary"]["high"]
    assert high["waived"] == 2 and high["resolved"] == 2  # svc-gone and svc-resolved
    _, table, _ = audit(store_dir, "--limit", "1", "--waivers", str(waivers))
    row = next(
        line.split() for line in table.split("findings per check", 1)[1].splitlines()
        if line.split()[:1] == ["TST001"]
    )  # fmt: skip
    columns = ("new", "regressed", "open", "resolved", "waived")
    assert [int(n) for n in row[2:]] == [high[c] for c in columns], row


class _UnwritableStdout(io.StringIO):
    """Standard output whose every write fails with ``error`` (a full disk, a closed pipe)."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error


def audit_to(stdout: io.TextIOBase, root: Path, *args: str) -> int:
    """Run ``audit`` in this process with ``stdout`` as standard output; its exit status."""
    config = config_file(root)
    argv = ["audit", "--store", str(root / "store"), "--config", str(config), *args]
    with contextlib.redirect_stdout(stdout), pytest.raises(SystemExit) as exit_:
        app(argv, prog_name="platform-audit")
    return int(exit_.value.code or 0)


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_full_disk_on_stdout_is_one_error_line_not_the_findings_status(
    store_dir: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    full = _UnwritableStdout(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    code = audit_to(full, store_dir, "--format", fmt, "--fail-on", "high")
    err = capsys.readouterr().err
    assert code == ExitCode.CONFIG, err
    assert "error: cannot write the output: No space left on device" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("gate", "code"), [((), ExitCode.OK), (("--fail-on", "high"), 1)])
def test_a_closed_pipe_ends_the_output_quietly_and_the_gate_still_decides(
    store_dir: Path, gate: tuple[str, ...], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("json", "table"):
        closed = _UnwritableStdout(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)))
        assert audit_to(closed, store_dir, "--format", fmt, *gate) == code
        err = capsys.readouterr().err
        assert "error" not in err and "Broken pipe" not in err and "Traceback" not in err


def test_a_pipe_closed_by_head_leaves_no_error_at_exit(store_dir: Path) -> None:
    """The whole process, as in ``platform-audit audit --format json | head -1``: nothing
    must fail again when Python flushes standard output on the way out."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first write
    config = config_file(store_dir)
    argv = ["audit", "--store", str(store_dir / "store"), "--config", str(config)]
    program = "from toolkit.cli import app; app(prog_name='platform-audit')"
    try:
        done = subprocess.run(
            [sys.executable, "-c", program, *argv, "--format", "json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (ExitCode.OK, "")


def test_out_dash_is_standard_output_and_a_symlink_stays(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = audit(store_dir, "--out", "-", "--format", "csv")
    assert code == ExitCode.OK and out.startswith("check_id,")
    assert not (tmp_path / "-").exists()
    link = tmp_path / "latest.json"
    link.symlink_to("audit-1.json")
    code, _, err = audit(store_dir, "--out", str(link))
    assert code == ExitCode.OK, err
    assert link.is_symlink()
    assert json.loads((tmp_path / "audit-1.json").read_text(encoding="utf-8"))["findings"]


def test_an_out_error_names_the_out_file_not_a_temporary_one(
    store_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "dir.json"
    folder.mkdir()
    code, _, err = audit(store_dir, "--out", str(folder))
    assert code == ExitCode.CONFIG
    assert f"cannot write {folder}: Is a directory; choose another --out" in " ".join(err.split())


ESC_NAME = "x\x1b[31mred\x1b]0;title\x07\x9b2J"  # colour, window title, C1 CSI clear-screen


@pytest.fixture(scope="module")
def esc_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The engine history with a service and a team named with terminal escape sequences."""
    root = tmp_path_factory.mktemp("esc-cli")
    fixture = history()
    for snapshot in fixture["snapshots"]:
        tables = snapshot["tables"]
        for service in tables["services"]:
            if service["id"] in ("svc-open", "svc-resolved"):  # resolved: in the diff too
                service["name"] = ESC_NAME
        tables["teams"][1]["name"] = "core\x1b[2J"
    write_store(root / "store", fixture)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--format", "table"),
        ("audit", "--format", "markdown"),
        ("audit", "--format", "csv"),
        ("finding", "TST001", "svc-open"),
        ("diff",),
    ],
)
def test_control_characters_in_names_never_reach_the_terminal(
    esc_store: Path, args: tuple[str, ...]
) -> None:
    config = config_file(esc_store)
    store = ("--store", str(esc_store / "store"), "--config", str(config))
    outcome = runner.invoke(app, [*args, *store], terminal_width=200)
    assert outcome.exit_code == ExitCode.OK, outcome.output
    shown = outcome.stdout
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown), repr(shown)
    assert "x\\x1b[31mred" in shown.replace("\\\\", "\\").replace("\\[", "[")  # md escapes


def test_every_format_says_what_the_audit_was_configured_with(
    store_dir: Path,
) -> None:
    """A gate that passes because a threshold was loosened must say so where it is read."""
    extra = 'skip = ["TST003"]\n[checks.TST002]\nmin_replicas = 3\n'
    said = ["TST002 min_replicas = 3 (default 2)", "left out by [audit] skip: TST003"]
    code, out, err = audit(store_dir, "--format", "json", extra_config=extra)
    assert code == ExitCode.OK, err
    assert json.loads(out)["configured"] == said
    code, out, err = audit(store_dir, "--format", "sarif", extra_config=extra)
    assert json.loads(out)["runs"][0]["properties"]["configured"] == said
    code, out, err = audit(store_dir, "--format", "markdown", extra_config=extra)
    assert "Configured: TST002 min\\_replicas = 3 (default 2); left out by" in out
    code, out, err = audit(store_dir, extra_config=extra)  # the table: on standard error
    assert f"configured: {said[0]}; {said[1]}" in " ".join(err.split())
    code, out, err = audit(store_dir, "--format", "json")  # the defaults: nothing to say
    assert json.loads(out)["configured"] == []
    code, out, err = audit(store_dir, "--format", "markdown")
    assert "Configured:" not in out


def test_sarif_over_githubs_limit_says_what_it_left_out(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.report.exports import sarif

    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    code, out, err = audit(store_dir, "--format", "sarif")
    assert code == ExitCode.OK
    run = json.loads(out)["runs"][0]
    assert len(run["results"]) == 2 and run["properties"]["results_left_out"] > 0
    left_out = run["properties"]["results_left_out"]
    said = " ".join(err.split())
    assert "SARIF holds the 2 most severe findings in alarm" in said
    assert f"{left_out} left out" in said


def test_fail_on_takes_any_case_and_an_error_repeats_the_value(store_dir: Path) -> None:
    assert audit(store_dir, "--format", "json", "--fail-on", "HIGH")[0] == ExitCode.FINDINGS
    code, _, err = audit(store_dir, "--fail-on", "bogus")
    assert code == ExitCode.CONFIG
    assert "--fail-on must be one of critical, high, medium, low or never, not 'bogus'" in err


@pytest.mark.parametrize("command", ["audit", "report", "diff"])
def test_audit_report_and_diff_judge_into_the_stores_findings_history(
    tmp_path: Path, command: str
) -> None:
    store = write_store(tmp_path / "store", history())
    config = tmp_path / "platform-audit.toml"
    config.write_text("", encoding="utf-8")

    def run() -> tuple[int, str]:
        out = ["--out", str(tmp_path / "report.json")] if command == "report" else []
        outcome = runner.invoke(
            app, [command, "--store", str(tmp_path / "store"), "--config", str(config), *out]
        )
        return outcome.exit_code, outcome.stderr

    code, err = run()
    assert code == ExitCode.OK, err
    runs = store.duckdb().sql(
        "select count(*), count(distinct (check_id, snapshot_id)) from check_runs"
    )
    judged, pairs = runs.fetchall()[0]
    assert judged == pairs == 4 * len(Catalogue.load().specs)  # every snapshot, once
    code, err = run()  # nothing new: nothing judged again
    assert code == ExitCode.OK, err
    assert store.duckdb().sql("select count(*) from check_runs").fetchall()[0][0] == judged
    config.write_text('[audit]\nstatus_cache = "kept"\n', encoding="utf-8")
    code, err = run()
    assert code == ExitCode.CONFIG
    assert "status_cache is gone" in err and "remove the line" in err
