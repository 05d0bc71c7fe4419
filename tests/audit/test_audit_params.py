"""Thresholds come from configuration as DuckDB parameters; the example lists every one."""

from __future__ import annotations

import re
import tomllib
from typing import TYPE_CHECKING

import pytest
from audit_fixtures import fixture_connection
from engine_world import engine_catalogue, history, service_id

from toolkit.audit import BUILTIN_CHECKS, Catalogue, CheckDefinitionError, params_example, run_audit
from toolkit.audit.check_file import discover_checks
from toolkit.cli.options import chosen_checks
from toolkit.config import example_config, load_settings
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from toolkit.audit import AuditOptions


def alarmed(frame: pd.DataFrame, check: str) -> set[str]:
    rows = frame[(frame.check_id == check) & (frame.status == "alarm")]
    return set(rows.resource_id)


def test_configured_threshold_reaches_duckdb(tmp_path: Path) -> None:
    con = fixture_connection(history())
    default = run_audit(con, checks=engine_catalogue())
    assert alarmed(default.findings, "TST002") == {service_id("open"), service_id("new")}
    config = tmp_path / "platform-audit.toml"
    config.write_text('[checks.TST002]\nmin_replicas = 3\nlabel = "pods"\n', encoding="utf-8")
    settings = load_settings(config, environ={})
    assert settings.check_params == {"TST002": {"min_replicas": 3, "label": "pods"}}
    stricter = run_audit(con, checks=engine_catalogue(settings.check_params))
    assert len(alarmed(stricter.findings, "TST002")) == 6  # every service but none with 3
    reasons = stricter.findings[stricter.findings.check_id == "TST002"].reason
    assert reasons.str.contains("pods \\(minimum 3\\)").all()


def test_settings_overrides_apply_to_given_specs(tmp_path: Path) -> None:
    config = tmp_path / "platform-audit.toml"
    config.write_text("[checks.TST002]\nmin_replicas = 1\n", encoding="utf-8")
    options = load_settings(config, environ={}).audit_options()
    specs = engine_catalogue().specs
    result = run_audit(fixture_connection(history()), checks=specs, options=options)
    assert alarmed(result.findings, "TST002") == set()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"TST002": {"min_replica": 3}}, "does not declare"),
        ({"NOP001": {"x": 1}}, "no check NOP001 is loaded"),
        # the wrong kind of value: refused with the setting named, not mid-audit by DuckDB
        (
            {"TST002": {"min_replicas": "3"}},
            r"\[checks.TST002\] min_replicas = \"3\", .* as a number",
        ),
        ({"TST002": {"min_replicas": True}}, "= true, .*write a number, not true or false"),
        (
            {"TST002": {"label": 5}},
            r"\[checks.TST002\] label = 5, .* as text .*: write it in quotes",
        ),
    ],
)
def test_unknown_or_mistyped_settings_are_refused(
    overrides: dict[str, dict[str, object]], message: str
) -> None:
    with pytest.raises(CheckDefinitionError, match=message):
        engine_catalogue(overrides)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[checks.tst]\nx = 1\n", "named for a check id"),
        ("[checks.TST002]\nmin_replicas = [1]\n", "must be a number, string or boolean"),
        ('[audit]\nfail_on = "severe"\n', "fail_on must be one of"),
        ('[audit]\nchecks = "folder"\n', "checks must be a list"),
        ('[audit]\nwaiver = "w.toml"\n', "did you mean 'waivers'"),
        (
            '[audit]\nproduction_pattern = "prd(("\n',
            r"\[audit\] production_pattern = 'prd\(\(' is not a regular expression DuckDB reads "
            r"\(missing \)",
        ),
        ("[audit]\nproduction_pattern = '(?=prd)'\n", "RE2 syntax: no look-around"),
        ('[audit]\nproduction_pattern = " "\n', "would make every environment production"),
        ("[audit]\nproduction_pattern = 5\n", r"\[audit\] production_pattern must be a string"),
    ],
)
def test_bad_audit_settings_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path, environ={})


def test_example_config_lists_every_declared_parameter() -> None:
    text = example_config()
    for spec in discover_checks([BUILTIN_CHECKS]):
        if not spec.params:
            continue
        assert f"# [checks.{spec.id}]" in text, spec.id
        block = text.split(f"# [checks.{spec.id}]", 1)[1].split("\n\n", 1)[0]
        for name, param in spec.params.items():
            assert re.search(rf"^# {name} = .*# {re.escape(param.doc)}$", block, re.M), name


def test_uncommented_example_block_is_valid_and_holds_the_defaults(tmp_path: Path) -> None:
    specs = engine_catalogue().specs
    block = params_example(specs)
    uncommented = "\n".join(
        line.removeprefix("# ") for line in block.splitlines() if line.startswith("# ")
    )
    parsed = tomllib.loads(uncommented)
    assert parsed == {"checks": {"TST002": {"min_replicas": 2, "label": "replicas"}}}
    path = tmp_path / "platform-audit.toml"
    path.write_text(uncommented, encoding="utf-8")
    settings = load_settings(path, environ={})
    catalogue = Catalogue(specs, settings.check_params)
    assert catalogue.params(catalogue.get("TST002")) == {"min_replicas": 2, "label": "replicas"}


def test_example_config_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "platform-audit.toml"
    path.write_text(example_config(), encoding="utf-8")
    settings = load_settings(path, environ={})
    assert settings.check_params == {} and settings.builtin_checks


def builtin_catalogue(tmp_path: Path, text: str) -> Catalogue:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return Catalogue.from_options(load_settings(path, environ={}).audit_options())


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        # never compares true: the check would never alarm (RES005 ran, rc 0, no alarm)
        ("[checks.RES005]\nmax_ratio = nan", "max_ratio = nan is not a finite number"),
        ("[checks.RES005]\nmax_ratio = inf", "max_ratio = inf is not a finite number"),
        ("[checks.RES005]\nmax_ratio = 1e400", "max_ratio = inf is not a finite number"),
        # 42 alarms "limits more than -5 times its requests"
        ("[checks.RES005]\nmax_ratio = -5", "max_ratio = -5 is negative, .*write 0 or more"),
        # DuckDB refused these mid-audit, blaming the built-in check's file
        ("[checks.KEY006]\nmax_idle_days = 7.5", "max_idle_days = 7.5, but KEY006 reads a whole "
         "number \\(default 90\\): write one without a fraction"),
        ("[checks.KEY006]\nmax_idle_days = 99999999999", "max_idle_days = 99999999999 is too "
         "large: write a whole number up to 10000000"),
        ("[checks.REP002]\nwindow_days = 1e12", "window_days = 1000000000000.0 is too large"),
        ("[checks.REP002]\nwindow_days = nan", "window_days = nan is not a finite number"),
        ("[checks.VAR004]\nsecret_names = \"token,passw(or\"",
         "secret_names = \"token,passw\\(or\": .* is not a regular expression DuckDB reads "
         "\\(missing \\)"),
        ("[checks.VAR004]\nsecret_names = \"(?=token)\"", "RE2 syntax: no look-around"),
        # an empty pattern matches every name: 121 findings instead of 67
        ("[checks.VAR004]\nsecret_names = \"\"", "secret_names = \"\" holds nothing \\(an empty "
         "pattern matches every name\\): give comma-separated regular expressions"),
        ("[checks.VAR004]\nsecret_names = \"token,,key\"", "holds an empty item"),
        ("[checks.VAR007]\nsecret_names = \"token,passw(or\"", "\"passw\\(or\" is not a regular"),
        ("[checks.VAR008]\nnot_secret_names = \"_id$,(x\"", "\"\\(x\" is not a regular"),
        ("[checks.SEC002]\ndangerous = \"\"",
         "dangerous = \"\" holds nothing: give comma-separated names .* add it to "
         "\\[audit\\] skip"),
    ],
)  # fmt: skip
def test_threshold_values_a_check_cannot_use_are_refused_naming_the_setting(
    tmp_path: Path, setting: str, message: str
) -> None:
    with pytest.raises(CheckDefinitionError, match=message) as caught:
        builtin_catalogue(tmp_path, setting + "\n")
    said = str(caught.value)
    assert said.startswith(f"{tmp_path / 'platform-audit.toml'}: [checks.")
    assert ".sql" not in said  # not the built-in check's file: it is not what is wrong


def test_threshold_values_that_fit_are_kept(tmp_path: Path) -> None:
    catalogue = builtin_catalogue(
        tmp_path,
        "[checks.KEY006]\nmax_idle_days = 30.0\n[checks.RES005]\nmax_ratio = 0\n"
        '[checks.VAR004]\nsecret_names = "^(pass|pwd)$"\n',
    )
    assert catalogue.params(catalogue.get("KEY006")) == {"max_idle_days": 30}
    assert isinstance(catalogue.params(catalogue.get("KEY006"))["max_idle_days"], int)
    assert catalogue.params(catalogue.get("RES005")) == {"max_ratio": 0}
    assert catalogue.params(catalogue.get("VAR004"))["secret_names"] == "^(pass|pwd)$"


def test_the_production_pattern_of_rep004_moved_to_audit_settings(tmp_path: Path) -> None:
    """REP004 had its own pattern while KEY003 and VAR007 judged by the built-in one."""
    with pytest.raises(CheckDefinitionError, match=r"move it to \[audit\] production_pattern"):
        builtin_catalogue(tmp_path, '[checks.REP004]\nenv_pattern = "^live$"\n')


def _production_world() -> dict[str, object]:
    """An environment named live-eu and one named production-archive; in each a service
    with one replica, a secret shared with staging, and an editor key limited to it."""
    environments = [("e-live", "live-eu"), ("e-old", "production-archive"), ("e-stg", "staging")]
    owner = {"team_id": "t1", "project_id": "p1"}
    tables = {
        "teams": [{"id": "t1", "name": "acme"}],
        "projects": [{"id": "p1", "team_id": "t1", "name": "shop"}],
        "environments": [{"id": i, "name": name, **owner} for i, name in environments],
        "services": [
            {"id": f"s-{i}", "name": "web", "environment_id": i, "replicas": 1, **owner}
            for i, _ in environments
        ],
        "variables": [  # API_SECRET: live and staging share it; ARCHIVE_SECRET: the others
            {
                "name": name,
                "level": "environment",
                "environment_id": i,
                "is_reference": False,
                "fingerprint": name,
                "value_length": 40,
                **owner,
            }
            for name, i in [
                ("API_SECRET", "e-live"),
                ("API_SECRET", "e-stg"),
                ("ARCHIVE_SECRET", "e-old"),
                ("ARCHIVE_SECRET", "e-stg"),
            ]
        ],
        "credentials": [
            {
                "name": f"k-{i}",
                "is_api_key": True,
                "key_id": f"k-{i}",
                "key_name": f"key {i}",
                "role": "editor",
                "access": "limited",
            }
            for i in ("e-live", "e-old")
        ],
        "credential_resources": [
            {
                "credential_name": f"k-{i}",
                "key_id": f"k-{i}",
                "resource_type": "environment",
                "resource_id": i,
            }
            for i in ("e-live", "e-old")
        ],
    }
    return {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": tables}]}


def test_one_production_pattern_reaches_every_check_that_judges_production(
    tmp_path: Path,
) -> None:
    """[audit] production_pattern decides REP004, KEY003 and VAR007 alike, on the cursors
    the checks run on (a DuckDB variable is a connection's own)."""
    checks = Catalogue.load().select(only=["REP004", "KEY003", "VAR007"])
    con = fixture_connection(_production_world())

    def production(options: AuditOptions | None) -> dict[str, set[str]]:
        findings = run_audit(con, checks=checks, options=options).findings
        return {check: alarmed(findings, check) for check in ("REP004", "KEY003", "VAR007")}

    assert production(None) == {  # the built-in pattern: "production" is a word of the name
        "REP004": {"s-e-old"},
        "KEY003": {"k-e-old"},
        "VAR007": {"environment:e-old:ARCHIVE_SECRET", "environment:e-stg:ARCHIVE_SECRET"},
    }
    path = tmp_path / "platform-audit.toml"
    path.write_text("[audit]\nproduction_pattern = '\\blive\\b'\n", encoding="utf-8")
    settings = load_settings(path, environ={})
    assert settings.production_pattern == r"\blive\b"
    assert production(settings.audit_options()) == {
        "REP004": {"s-e-live"},
        "KEY003": {"k-e-live"},
        "VAR007": {"environment:e-live:API_SECRET", "environment:e-stg:API_SECRET"},
    }


def test_threshold_errors_name_the_config_file(tmp_path: Path) -> None:
    with pytest.raises(CheckDefinitionError) as caught:
        builtin_catalogue(tmp_path, "[checks.RES999]\nx = 1\n")
    assert str(caught.value).startswith(f"{tmp_path / 'platform-audit.toml'}: [checks.RES999]")
    with pytest.raises(CheckDefinitionError) as caught:
        builtin_catalogue(tmp_path, "[checks.RES005]\nmax_ration = 1\n")
    assert str(caught.value).startswith(f"{tmp_path / 'platform-audit.toml'}: [checks.RES005]")
    assert "sets max_ration, which RES005 does not declare" in str(caught.value)


def chosen(tmp_path: Path, text: str, only: list[str] | None = None,
           skip: list[str] | None = None) -> Catalogue:  # fmt: skip
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return chosen_checks(load_settings(path, environ={}), only, skip)


@pytest.mark.parametrize(
    ("text", "only", "skip", "message"),
    [
        # said "--check and --skip leave no check to run" though neither option was given
        ("[audit]\nbuiltin_checks = false\n", None, None,
         "{config}: [audit] builtin_checks = false and no check in [audit] checks"),
        ('[audit]\nskip = ["*"]\n', None, None,
         "{config}: [audit] skip leaves no check to run; remove a pattern from it"),
        # said "--check 'KEY006' matches no check", though KEY006 exists
        ('[audit]\nskip = ["KEY006"]\n', ["KEY006"], None,
         "--check 'KEY006' names only checks that {config}: [audit] skip leaves out"),
        ('[audit]\nskip = ["KEY*"]\n', None, ["RES*", "REP*", "DEP*", "VAR*", "VOL*", "BAK*",
         "WEB*", "TPL*", "SEC*"], "--skip, beside those of {config}: [audit] skip, leave no"),
        ("", ["KEY999"], None, "--check 'KEY999' matches no check"),
    ],
)  # fmt: skip
def test_a_selection_that_leaves_no_check_names_what_left_none(
    tmp_path: Path, text: str, only: list[str] | None, skip: list[str] | None, message: str
) -> None:
    config = tmp_path / "platform-audit.toml"
    with pytest.raises(ConfigError) as caught:
        chosen(tmp_path, text, only, skip)
    assert message.format(config=config) in str(caught.value)


def test_skip_given_twice_is_not_a_pattern_matching_nothing(tmp_path: Path) -> None:
    catalogue = chosen(tmp_path, '[audit]\nskip = ["KEY006"]\n', ["key-scope"], ["KEY006"])
    assert "KEY006" not in {s.id for s in catalogue.specs}
    assert {s.area for s in catalogue.specs} == {"key-scope"}
