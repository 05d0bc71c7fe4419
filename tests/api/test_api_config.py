"""ClientConfig: defaults, checks, and reading the environment."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit.api import ClientConfig, ConfigError, Secret

ENV = {"PLATFORM_API_URL": "https://platform.test/api/go", "PLATFORM_API_KEY": "plat_secret"}


def test_defaults() -> None:
    config = ClientConfig(base_url="https://h", token=Secret("plat_x"))
    assert (config.max_attempts, config.concurrency, config.rate_per_minute) == (5, 8, None)
    assert config.timeout_s > 0 and config.deadline_s > config.timeout_s
    assert config.user_agent.startswith("platform-audit/")
    assert dict(config.endpoints) == {}
    assert config.retry_malformed is False


def test_frozen_and_keyword_only() -> None:
    config = ClientConfig(base_url="https://h", token=Secret("plat_x"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_attempts = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        ClientConfig("https://h", Secret("plat_x"))  # type: ignore[misc]
    changed = dataclasses.replace(config, concurrency=2)
    assert changed.concurrency == 2 and changed.token == config.token


def test_from_env() -> None:
    config = ClientConfig.from_env(ENV, concurrency=3)
    assert config.base_url == "https://platform.test/api/go"
    assert config.token.reveal() == "plat_secret"
    assert config.concurrency == 3


@pytest.mark.parametrize("missing", ["PLATFORM_API_URL", "PLATFORM_API_KEY"])
def test_from_env_names_the_missing_variable(missing) -> None:
    env = {k: v for k, v in ENV.items() if k != missing}
    with pytest.raises(ConfigError, match=missing) as caught:
        ClientConfig.from_env(env)
    assert caught.value.setting == missing
    with pytest.raises(ConfigError, match=missing):
        ClientConfig.from_env({**env, missing: "  "})


def test_from_env_reads_os_environ(monkeypatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    assert ClientConfig.from_env().base_url == ENV["PLATFORM_API_URL"]


@pytest.mark.parametrize(
    ("overrides", "setting"),
    [
        ({"base_url": "platform.test"}, "base_url"),
        ({"base_url": "ftp://platform.test"}, "base_url"),
        ({"base_url": "https://user:pw@platform.test"}, "base_url"),
        ({"base_url": "https://platform.test/?x=1"}, "base_url"),
        ({"token": Secret("")}, "token"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"concurrency": 0}, "concurrency"),
        ({"rate_per_minute": -1.0}, "rate_per_minute"),
        ({"backoff_base_s": -1.0}, "backoff_base_s"),
        ({"deadline_s": 0}, "deadline_s"),
        ({"endpoints": {"nope": "/x"}}, "endpoints"),
    ],
)
def test_invalid_settings_are_refused(overrides, setting) -> None:
    values = {"base_url": "https://platform.test", "token": Secret("plat_x"), **overrides}
    with pytest.raises(ConfigError) as caught:
        ClientConfig(**values)
    assert caught.value.setting == setting


@pytest.mark.parametrize(
    "base_url",
    [
        "https://platform.test/api/go;token=CANARYbase0url",
        "https://platform.test;k=CANARYbase0url/x",
    ],
)
def test_a_base_url_with_path_parameters_is_refused_without_echoing_them(base_url) -> None:
    with pytest.raises(ConfigError) as caught:
        ClientConfig(base_url=base_url, token=Secret("plat_x"))
    assert caught.value.setting == "base_url"
    assert "path parameters" in str(caught.value)
    assert "CANARYbase0url" not in str(caught.value)
