"""Frameworks as data: the built-in files, their validation, users' folders, ``checks
--framework``."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.audit import BUILTIN_CHECKS, Catalogue, discover_checks
from toolkit.audit.frameworks import (
    BUILTIN_FRAMEWORKS,
    Framework,
    available_frameworks,
    check_coverage,
    known_check_ids,
    load_framework,
    read_framework,
)
from toolkit.cli import ExitCode, app
from toolkit.config import load_settings
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

runner = CliRunner()

SOC2 = ["CC6.1", "CC6.2", "CC6.3", "CC6.6", "CC6.7", "CC6.8", "CC7.1", "CC7.2", "CC8.1", "A1.2"]
ISO = ["5.15", "5.17", "5.18", "8.2", "8.5", "8.6", "8.9", "8.13", "8.16", "8.20", "8.24", "8.32"]


def builtin_ids() -> set[str]:
    return {spec.id for spec in discover_checks([BUILTIN_CHECKS])}


def test_the_builtin_frameworks_hold_the_requirements_asked_for() -> None:
    assert available_frameworks() == ["cis", "iso27001", "soc2"]
    assert [r.id for r in load_framework("soc2").requirements] == SOC2
    assert [r.id for r in load_framework("iso27001").requirements] == ISO
    cis = load_framework("CIS")  # any case
    assert cis.id == "cis" and cis.version == "8" and len(cis.requirements) >= 10


@pytest.mark.parametrize("name", ["cis", "iso27001", "soc2"])
def test_every_mapping_names_a_real_check_and_says_why_in_a_sentence(name: str) -> None:
    framework = load_framework(name)
    ids = builtin_ids()
    for requirement in framework.requirements:
        assert requirement.title and len(requirement.title) <= 90, requirement.id
        for mapping in requirement.checks:
            assert mapping.check_id in ids
            assert mapping.why.endswith(".") and len(mapping.why.split()) >= 8, mapping


def test_every_builtin_check_is_mapped_or_listed_as_unmapped_with_a_reason() -> None:
    """A check added to the catalogue must say what it is evidence for (or why nothing)."""
    check_coverage(builtin_ids())
    unmapped = read_framework("soc2").unmapped
    assert set(unmapped) == {"VAR009"} and "qualifies the evidence" in unmapped["VAR009"]


def test_a_new_check_mapped_nowhere_fails_the_coverage(tmp_path: Path) -> None:
    folder = tmp_path / "checks"
    folder.mkdir()
    shutil.copy(BUILTIN_CHECKS / "security" / "SEC001.sql", folder / "NEW001.sql")
    text = (folder / "NEW001.sql").read_text(encoding="utf-8")
    (folder / "NEW001.sql").write_text(text.replace("SEC001", "NEW001"), encoding="utf-8")
    ids = {spec.id for spec in Catalogue.load([folder]).specs}
    assert "NEW001" in ids
    with pytest.raises(ConfigError) as raised:
        check_coverage(ids)
    said = str(raised.value)
    assert "NEW001 are mapped in no framework" in said and "[[unmapped]]" in said


def write(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(body, encoding="utf-8")
    return path


GOOD = """id = "{name}"
title = "Our platform policy"
version = "3"

[[requirements]]
id = "P1"
title = "Keys are narrow"

[[requirements.checks]]
check = "KEY001"
why = "An admin key is as wide as a key gets, so it breaks the policy."
"""


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (GOOD.replace("KEY001", "KEY999"),
         "requirement P1 maps check KEY999, which no check has: fix the id (`platform-audit "
         "checks` lists them), or add the folder that holds it to [audit] checks"),
        (GOOD + GOOD.split("version = \"3\"")[1],
         "requirement P1 is listed twice; merge its checks into one [[requirements]] entry"),
        (GOOD.replace('why = "An admin', 'whyy = "An admin'), "requirement P1: each"),
        (GOOD.replace('why = "An admin key is as wide as a key gets, so it breaks the policy."',
                      'why = " "'), "requirement P1, check KEY001: why must be non-empty"),
        (GOOD.replace('id = "{name}"', 'id = "other"'), 'its id must be its file name'),
        ('owner = "x"\n' + GOOD, "unknown key(s) owner"),
        (GOOD.replace("[[requirements.checks]]\ncheck = \"KEY001\"\nwhy = \"An admin key is as "
                      "wide as a key gets, so it breaks the policy.\"\n", ""),
         "requirement P1 maps no check"),
        (GOOD + '[[unmapped]]\ncheck = "KEY001"\nreason = "r"\n',
         "[[unmapped]] KEY001 is also mapped"),
        (GOOD + '[[unmapped]]\ncheck = "VAR009"\n', "each [[unmapped]] needs check and reason"),
        ("id = [", "is not valid TOML"),
    ],
)  # fmt: skip
def test_a_bad_framework_file_is_refused_naming_file_requirement_and_fix(
    tmp_path: Path, body: str, said: str
) -> None:
    path = write(tmp_path / "fw", "policy", body.replace("{name}", "policy"))
    with pytest.raises(ConfigError) as raised:
        load_framework(path)
    message = str(raised.value)
    assert str(path) in message and said in message


def test_users_add_frameworks_from_a_configured_folder(tmp_path: Path) -> None:
    write(tmp_path / "fw", "policy", GOOD.replace("{name}", "policy"))
    config = tmp_path / "platform-audit.toml"
    config.write_text('[audit]\nframeworks = ["fw"]\n', encoding="utf-8")
    settings = load_settings(config, environ={})
    assert settings.audit_frameworks == (tmp_path / "fw",)  # relative to the file
    assert available_frameworks(settings.audit_frameworks) == ["cis", "iso27001", "policy", "soc2"]
    policy = load_framework("policy", settings.audit_frameworks)
    assert policy == Framework("policy", "Our platform policy", "3", policy.requirements)
    assert policy.checks_of("P1") == ("KEY001",) and policy.requirements_of("KEY001") == ("P1",)
    with pytest.raises(ConfigError, match=r"\[audit\] frameworks must be a list of folders"):
        config.write_text('[audit]\nframeworks = [""]\n', encoding="utf-8")
        load_settings(config, environ={})


def test_a_users_framework_may_map_the_users_own_checks(tmp_path: Path) -> None:
    checks = tmp_path / "checks"
    checks.mkdir()
    source = (BUILTIN_CHECKS / "security" / "SEC001.sql").read_text(encoding="utf-8")
    (checks / "OWN001.sql").write_text(source.replace("SEC001", "OWN001"), encoding="utf-8")
    path = write(tmp_path / "fw", "policy", GOOD.replace("{name}", "policy").replace(
        "KEY001", "OWN001"))  # fmt: skip
    with pytest.raises(ConfigError, match="maps check OWN001, which no check has"):
        load_framework(path)  # the built-in checks alone: OWN001 is unknown
    framework = load_framework(path, known_checks=known_check_ids([checks]))
    assert framework.check_ids() == ("OWN001",)


def test_folder_and_name_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_framework("nist")
    assert "no framework is named 'nist': the frameworks are cis, iso27001, soc2" in str(
        raised.value
    )
    with pytest.raises(ConfigError, match="which is not there: name a folder"):
        available_frameworks([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no framework file"):
        available_frameworks([tmp_path / "empty"])
    write(tmp_path / "mine", "soc2", GOOD.replace("{name}", "soc2"))
    with pytest.raises(ConfigError, match="framework soc2 is built in"):
        available_frameworks([tmp_path / "mine"])
    assert BUILTIN_FRAMEWORKS.joinpath("soc2.toml").is_file()


def checks_cli(*args: str) -> tuple[int, str, str]:
    outcome = runner.invoke(app, ["checks", *args], terminal_width=120)
    return outcome.exit_code, outcome.stdout, outcome.stderr


def test_checks_framework_lists_requirements_with_their_checks_and_why() -> None:
    code, out, err = checks_cli("--framework", "soc2", "--format", "json")
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert document["id"] == "soc2" and [r["id"] for r in document["requirements"]] == SOC2
    first = document["requirements"][0]["checks"][0]
    assert first == {
        "id": "KEY001",
        "severity": "high",
        "title": "API key has the admin role",
        "why": load_framework("soc2").requirements[0].checks[0].why,
        "runs": True,
    }
    assert document["unmapped"][0]["check"] == "VAR009"
    code, out, _ = checks_cli("--framework", "iso27001", "--skip", "BAK*")
    assert code == ExitCode.OK
    flat = " ".join(out.split())
    assert "8.13" in flat and "Backups are taken" in flat and "BAK001 (critical)" in flat
    assert flat.count("not run: left out by") == 2  # BAK001 and BAK002, under 8.13
    code, out, _ = checks_cli("--framework", "iso27001", "--skip", "BAK*", "--format", "json")
    backups = json.loads(out)["requirements"][ISO.index("8.13")]["checks"]
    assert [(c["id"], c["runs"]) for c in backups] == [("BAK001", False), ("BAK002", False)]
    assert "not evidence for iso27001: VAR009" in flat


def test_checks_framework_names_the_frameworks_there_are(tmp_path: Path) -> None:
    code, out, err = checks_cli("--framework", "soc3")
    assert code == ExitCode.CONFIG and out == ""
    assert "no framework is named 'soc3': the frameworks are cis, iso27001, soc2" in " ".join(
        err.split()
    )
    write(tmp_path / "fw", "policy", GOOD.replace("{name}", "policy"))
    config = tmp_path / "platform-audit.toml"
    config.write_text('[audit]\nframeworks = ["fw"]\n', encoding="utf-8")
    code, out, err = checks_cli("--config", str(config), "--framework", "policy")
    assert code == ExitCode.OK, err
    assert "P1" in out and "Keys are narrow" in out


def test_the_framework_files_ship_in_the_package() -> None:
    """An installed toolkit (not only this checkout) finds soc2, iso27001 and cis."""
    import tomllib
    from fnmatch import fnmatch

    package = BUILTIN_FRAMEWORKS.parent.parent
    pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["toolkit"]
    for path in BUILTIN_FRAMEWORKS.glob("*.toml"):
        shipped = str(path.relative_to(package))
        assert any(fnmatch(shipped, glob) for glob in globs), shipped
