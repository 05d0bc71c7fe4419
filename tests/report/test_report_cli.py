"""``platform-audit report``: where each format goes, and the exit codes and messages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import SimStore

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PLATFORM_AUDIT_STORE", "PLATFORM_AUDIT_CONFIG", "PLATFORM_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./platform-audit.toml, and the default --out lands here


def report(*args: str) -> tuple[int, str, str]:
    outcome = runner.invoke(app, ["report", *args])
    return outcome.exit_code, outcome.stdout, outcome.stderr


def test_html_to_the_default_file(sim_store: SimStore, tmp_path: Path) -> None:
    code, out, err = report("--store", str(sim_store.path), "--waivers", str(sim_store.waivers))
    assert code == ExitCode.OK, err
    written = tmp_path / "audit-report.html"
    assert written.is_file() and "wrote html report to audit-report.html" in err
    assert written.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert out == ""


def test_json_to_stdout_with_since_and_compare_to(sim_store: SimStore) -> None:
    first = sim_store.snapshot_ids[0]
    code, out, err = report(
        "--store", str(sim_store.path), "--format", "json", "--compare-to", first,
        "--since", "2000-01-01",
    )  # fmt: skip
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert document["compared_to"]["snapshot_id"] == first
    assert document["report"]["since"].startswith("2000-01-01T00:00:00")


def test_check_and_skip_choose_what_the_report_covers(sim_store: SimStore) -> None:
    args = ("--store", str(sim_store.path), "--format", "json")
    code, out, err = report(*args, "--check", "security", "--check", "KEY*", "--skip", "KEY003")
    assert code == ExitCode.OK, err
    document = json.loads(out)
    ran = {row["check_id"] for row in document["by_check"]}
    assert ran and all(c.startswith(("SEC", "KEY")) for c in ran) and "KEY003" not in ran
    assert {f["check_id"] for f in document["findings"]} <= ran
    assert document["checks"] == len(ran)
    code, _, err = report(*args, "--check", "NOPE*")
    assert code == ExitCode.CONFIG and "platform-audit checks" in err


def test_every_format_says_what_the_audit_was_configured_with(
    sim_store: SimStore, tmp_path: Path
) -> None:
    """A reviewer must see a threshold raised from its default (max_ratio = 50 hides most
    of RES005's findings), the checks left out and what counts as production."""
    config = tmp_path / "review.toml"  # not the default name: the last report reads none
    config.write_text(
        "[audit]\nskip = [\"KEY006\"]\nproduction_pattern = '\\bprd\\b'\n"
        "[checks.RES005]\nmax_ratio = 50\n",
        encoding="utf-8",
    )
    args = ("--store", str(sim_store.path), "--config", str(config))
    code, out, err = report(*args, "--format", "json")
    assert code == ExitCode.OK, err
    assert json.loads(out)["configured"] == [
        "RES005 max_ratio = 50 (default 8)",
        "left out by [audit] skip: KEY006",
        "production: environments named as [audit] production_pattern = '\\bprd\\b'",
    ]
    code, out, err = report(*args, "--format", "markdown")
    assert code == ExitCode.OK, err
    assert "Configured: RES005 max\\_ratio = 50 (default 8); left out" in out
    code, out, err = report(*args, "--format", "html", "--out", "-")
    assert code == ExitCode.OK, err
    assert "Configured: RES005 max_ratio = 50 (default 8); left out" in out
    assert "production_pattern = &#39;\\bprd\\b&#39;" in out  # escaped
    code, out, err = report("--store", str(sim_store.path), "--format", "json")
    assert code == ExitCode.OK, err
    assert json.loads(out)["configured"] == []  # the defaults say nothing


def test_missing_store_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, _, err = report("--store", str(missing))
    assert code == ExitCode.CONFIG
    assert "no snapshot store at" in err and "platform-audit snapshot" in err
    assert not missing.exists(), "a report must not create an empty store"


def test_unknown_snapshot_id(sim_store: SimStore) -> None:
    code, _, err = report("--store", str(sim_store.path), "--compare-to", "ffffffff")
    assert code == ExitCode.CONFIG
    assert "is not a committed snapshot" in err and "store ls" in err


def test_unknown_format(sim_store: SimStore) -> None:
    code, _, err = report("--store", str(sim_store.path), "--format", "pdf")
    assert code == ExitCode.CONFIG
    assert "--format must be one of html, markdown, json, csv" in err


def test_bad_waivers_file(sim_store: SimStore, tmp_path: Path) -> None:
    bad = tmp_path / "waivers.toml"
    bad.write_text('[[waivers]]\ncheck = "RES001"\n', encoding="utf-8")
    code, _, err = report("--store", str(sim_store.path), "--waivers", str(bad))
    assert code == ExitCode.CONFIG
    assert "waiver #1" in err
    # a waiver of a check that does not exist: the message names the file, as audit's does
    bad.write_text(
        '[[waivers]]\ncheck = "NOPE001"\nservice = "*"\nreason = "r"\nowner = "o"\n'
        "expires = 2099-01-01\n",
        encoding="utf-8",
    )
    code, _, err = report("--store", str(sim_store.path), "--waivers", str(bad))
    assert code == ExitCode.CONFIG
    assert f"{bad}: waiver #1" in " ".join(err.split()), err


def test_unwritable_out(sim_store: SimStore, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = report("--store", str(sim_store.path), "--out", str(blocker / "r.html"))
    assert code == ExitCode.CONFIG
    assert "cannot write the report" in err


@pytest.mark.parametrize(
    ("name", "args", "starts"),
    [
        ("weekly.md", (), "# "),  # the suffix picks the format
        ("weekly.json", (), "{"),
        ("weekly.HTM", (), "<!DOCTYPE html>"),
        ("weekly.txt", ("--format", "markdown"), "# "),  # --format decides for other names
    ],
)
def test_out_suffix_picks_the_format(
    sim_store: SimStore, tmp_path: Path, name: str, args: tuple[str, ...], starts: str
) -> None:
    code, _, err = report("--store", str(sim_store.path), "--out", str(tmp_path / name), *args)
    assert code == ExitCode.OK, err
    assert (tmp_path / name).read_text(encoding="utf-8").startswith(starts)


@pytest.mark.parametrize(
    ("name", "args", "said"),
    [
        ("weekly.pdf", (), "name it .html, .htm, .md, .json or .csv"),
        ("weekly", (), "print the HTML report from a browser"),
        ("weekly.md", ("--format", "html"), "names a markdown file but --format is html"),
    ],
)
def test_out_that_would_mislabel_the_report_is_refused(
    sim_store: SimStore, tmp_path: Path, name: str, args: tuple[str, ...], said: str
) -> None:
    code, _, err = report("--store", str(sim_store.path), "--out", str(tmp_path / name), *args)
    assert code == ExitCode.CONFIG
    assert said in " ".join(err.split())
    assert not (tmp_path / name).exists()


def test_out_dash_is_standard_output(sim_store: SimStore, tmp_path: Path) -> None:
    code, out, err = report("--store", str(sim_store.path), "--format", "json", "--out", "-")
    assert code == ExitCode.OK, err
    assert json.loads(out)["report"] and not (tmp_path / "-").exists()
    code, out, err = report("--store", str(sim_store.path), "--out", "-")  # the default: html
    assert code == ExitCode.OK, err
    assert out.startswith("<!DOCTYPE html>") and "wrote" not in err


def test_since_after_the_newest_snapshot_is_refused(sim_store: SimStore, tmp_path: Path) -> None:
    newest = sim_store.store.snapshots()[-1].snapshot_at
    code, _, err = report("--store", str(sim_store.path), "--since", "2999-01-01", "--out", "r.md")
    assert code == ExitCode.CONFIG, err
    assert f"{newest:%Y-%m-%d %H:%M:%S}" in err and "earlier" in err
    assert not (tmp_path / "r.md").exists()
