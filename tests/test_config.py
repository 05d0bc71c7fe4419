"""Settings: file, environment and option precedence; refusal of bad files with a useful message."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from toolkit.config import Credential, Settings, example_config, load_settings
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_need_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(environ={})
    assert settings.source is None
    assert settings.base_url is None
    assert settings.collecting == Credential(name="default", token_env="PLATFORM_API_KEY")
    assert settings.rate_per_minute is None  # the HTTP API has no rate limit (spec part 8)
    assert settings.store_url == "data/store"


def test_environment_is_enough_for_a_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {
        "PLATFORM_API_URL": "https://p.example/api/go",
        "PLATFORM_API_KEY": "plat_secret",
        "PLATFORM_AUDIT_STORE": "s3://bucket/audit",
    }
    settings = load_settings(environ=env)
    assert settings.require_base_url() == "https://p.example/api/go"
    assert settings.token(env) == "plat_secret"
    assert settings.store_url == "s3://bucket/audit"


def test_precedence_option_over_env_over_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[platform]\nbase_url = "http://file.example"\n')
    assert load_settings(path, environ={}).base_url == "http://file.example"
    env = {"PLATFORM_API_URL": "http://env.example"}
    assert load_settings(path, environ=env).base_url == "http://env.example"
    assert (
        load_settings(path, environ=env, base_url="http://opt.example").base_url
        == "http://opt.example"
    )


def test_store_paths_in_the_file_are_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    path = write(folder, '[store]\nurl = "../stores/audit"\nhmac_key_file = "keys/hmac.key"\n')
    monkeypatch.chdir(tmp_path)  # not the file's folder
    settings = load_settings(path, environ={})
    assert settings.store_url == str(folder / "../stores/audit")
    assert settings.hmac_key_file == folder / "keys" / "hmac.key"
    s3 = write(folder, '[store]\nurl = "s3://bucket/audit"\n')
    assert load_settings(s3, environ={}).store_url == "s3://bucket/audit"
    # an option or the environment is relative to where the command runs, as any argument
    assert load_settings(path, environ={}, store_url="here").store_url == "here"


def test_credentials_collecting_and_audited(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[platform]\ncredential = "ci"\n'
        '[credentials.collector]\ntoken_env = "A_KEY"\n'
        '[credentials.ci]\ntoken_env = "B_KEY"\n',
    )
    settings = load_settings(path, environ={})
    assert settings.collecting.name == "ci"
    assert [c.name for c in settings.audited] == ["collector"]
    overridden = load_settings(path, environ={}, token_env="C_KEY")
    assert overridden.collecting == Credential(name="ci", token_env="C_KEY")
    assert overridden.audited == settings.audited


def test_missing_token_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"\$MY_KEY, which is not set"):
        Credential(name="x", token_env="MY_KEY").token({})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[platfrom]\n", "unknown setting 'platfrom'; did you mean 'platform'"),
        ("[client]\nconcurency = 3\n", "did you mean 'concurrency'"),
        ('[client]\nconcurrency = "many"\n', "concurrency must be a whole number"),
        ("[client]\ndeadline_s = true\n", "deadline_s must be a number"),
        ("[credentials.ci]\ntoken = 'plat_x'\n", "needs token_env"),
        (
            '[platform]\ncredential = "nope"\n[credentials.a]\ntoken_env = "A"\n',
            "only a are defined",
        ),
        ('[endpoints]\nlist_teams = "teams"\n', "must be a path"),
        ("[platform\n", "not valid TOML"),
        ('[platform]\nbase_url = "ftp://x"\n', "must start with http"),
    ],
)
def test_bad_files_are_refused_with_what_to_do(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_settings(write(tmp_path, text), environ={})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # a section written as a value: once an AttributeError, or a loop over its letters
        ('checks = ["x"]\n', "checks must be a table of [checks.ID] tables"),
        ('checks = ["x"]\n', "write checks = [...] under [audit]"),
        (
            'endpoints = "x"\n',
            "endpoints is set to a value, but it is a section: write [endpoints]",
        ),
        ('credentials = ["a"]\n', "credentials must be a table of [credentials.NAME] tables"),
        ('audit = "strict"\n', "write [audit] on a line of its own"),
        ('schedule = "1h"\n', "write [schedule] on a line of its own"),
        ('[audit]\nwaivers = ""\n', "[audit] waivers must name a file"),
        ('[audit]\nchecks = [""]\n', "[audit] checks must be a list of folders"),
    ],
)
def test_a_section_given_as_a_value_or_an_empty_path_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    assert message in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"\x00\xff\xfe\x80[audit]\n",
            "is not UTF-8 text, byte 1 cannot be read: save it as UTF-8",
        ),
        ("[audit]\n".encode("utf-16"), "is not UTF-8 text (it is UTF-16)"),
    ],
)
def test_a_config_file_that_is_not_text_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "platform-audit.toml"
    path.write_bytes(content)  # once a UnicodeDecodeError traceback, from every command
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_a_byte_order_mark_is_read_past_and_a_folder_is_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "platform-audit.toml"
    path.write_bytes(b'\xef\xbb\xbf[audit]\nfail_on = "high"\n')
    assert load_settings(path, environ={}).fail_on == "high"
    with pytest.raises(ConfigError, match="is a folder"):
        load_settings(tmp_path, environ={})


def test_missing_base_url_says_how_to_set_it() -> None:
    with pytest.raises(ConfigError, match=r"--base-url.*PLATFORM_API_URL.*base_url"):
        Settings().require_base_url()


def test_missing_named_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", environ={})
    with pytest.raises(ConfigError, match="PLATFORM_AUDIT_CONFIG"):
        load_settings(environ={"PLATFORM_AUDIT_CONFIG": str(tmp_path / "nope.toml")})


def test_example_file_loads_and_matches_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, example_config()), environ={})
    defaults = Settings()
    assert settings.collecting == Credential(name="collector", token_env="PLATFORM_API_KEY")
    for name in (
        "concurrency",
        "rate_per_minute",
        "max_attempts",
        "timeout_s",
        "deadline_s",
        "max_response_bytes",
    ):
        assert getattr(settings, name) == getattr(defaults, name), name
    assert settings.store_url == str(tmp_path / defaults.store_url)  # relative to the file
    assert settings.hmac_key_file == defaults.hmac_key_file


def test_zero_rate_switches_the_limit_off(tmp_path: Path) -> None:
    assert (
        load_settings(
            write(tmp_path, "[client]\nrate_per_minute = 0\n"), environ={}
        ).rate_per_minute
        is None
    )


def test_the_response_cap_reaches_the_client(tmp_path: Path) -> None:
    from toolkit.api import ClientConfig

    env = {"PLATFORM_API_KEY": "plat_x"}
    default = Settings(base_url="http://platform.example").client_config(environ=env)
    assert (
        default.max_response_bytes
        == ClientConfig(base_url="http://h", token="x").max_response_bytes
    )
    path = write(
        tmp_path, '[platform]\nbase_url = "http://p.example"\n[client]\nmax_response_bytes = 1000\n'
    )
    assert load_settings(path, environ={}).client_config(environ=env).max_response_bytes == 1000
    with pytest.raises(ConfigError, match="max_response_bytes must be greater than 0"):
        Settings(base_url="http://p.example", max_response_bytes=0).client_config(environ=env)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (Settings(base_url="http://user:pw@platform.example"), "must not carry credentials"),
        (
            Settings(base_url="http://platform.example", endpoints={"nope": "/x"}),
            "unknown endpoint name",
        ),
    ],
)
def test_client_refusals_are_the_toolkits_config_error(settings: Settings, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings.client_config(environ={"PLATFORM_API_KEY": "plat_x"})


def test_audit_skip_is_a_list_of_patterns(tmp_path: Path) -> None:
    path = write(tmp_path, '[audit]\nskip = ["KEY006", "webhooks"]\n')
    assert load_settings(path, environ={}).skip_checks == ("KEY006", "webhooks")
    for bad in ('"KEY006"', "[1]", '[""]'):
        path = write(tmp_path, f"[audit]\nskip = {bad}\n")
        with pytest.raises(ConfigError, match=r"\[audit\] skip must be a list"):
            load_settings(path, environ={})


def test_the_removed_status_cache_setting_says_what_to_do(tmp_path: Path) -> None:
    """The findings history lives in the store: an old [audit] status_cache line is refused
    with what to do, not silently ignored."""
    for value in ('"audit-cache"', "false"):
        path = write(tmp_path, f"[audit]\nstatus_cache = {value}\n")
        with pytest.raises(ConfigError, match=r"status_cache is gone.*remove the line"):
            load_settings(path, environ={})


def test_the_audit_options_carry_the_audit_settings_of_the_file(tmp_path: Path) -> None:
    """``[audit]`` and ``[checks.ID]`` reach the audit as its own value, paths relative to
    the file and the file named for errors; with no file, the built-in defaults."""
    from toolkit.audit import AuditOptions

    path = write(
        tmp_path,
        '[audit]\nchecks = ["team-checks"]\nbuiltin_checks = false\nskip = ["KEY006"]\n'
        "waivers = \"waivers.toml\"\nproduction_pattern = '\\blive\\b'\n"
        "[checks.RES005]\nmax_ratio = 10\n",
    )
    assert load_settings(path, environ={}).audit_options() == AuditOptions(
        check_folders=(tmp_path / "team-checks",),
        builtin_checks=False,
        skip=("KEY006",),
        check_params={"RES005": {"max_ratio": 10}},
        waivers_file=tmp_path / "waivers.toml",
        production_pattern=r"\blive\b",
        source=path,
    )
    assert Settings().audit_options() == AuditOptions()
