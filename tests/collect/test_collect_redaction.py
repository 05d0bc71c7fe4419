"""The HMAC key: from the environment or a private key file, never next to the store."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

import pytest

from toolkit.errors import ConfigError
from toolkit.snapshot.redaction import Fingerprinter, load_fingerprinter, redact_url

if TYPE_CHECKING:
    from pathlib import Path


def test_a_key_file_is_created_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "hmac.key"
    first = load_fingerprinter(path, environ={})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_fingerprinter(path, environ={}).of("x") == first.of("x")
    assert repr(first) == "Fingerprinter(key=********)"


def test_a_readable_key_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hmac.key"
    load_fingerprinter(path, environ={})
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_fingerprinter(path, environ={})


def test_the_environment_wins(tmp_path: Path) -> None:
    env = {"PLATFORM_AUDIT_HMAC_KEY": "an-environment-key-of-some-length"}
    fingerprints = load_fingerprinter(tmp_path / "never.key", environ=env)
    assert fingerprints.of("v") == Fingerprinter(env["PLATFORM_AUDIT_HMAC_KEY"].encode()).of("v")
    assert not (tmp_path / "never.key").exists()


def test_a_key_inside_the_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="inside the store"):
        load_fingerprinter(
            tmp_path / "store" / "hmac.key", environ={}, store_root=tmp_path / "store"
        )


def test_a_short_key_is_refused() -> None:
    with pytest.raises(ConfigError, match="too short"):
        Fingerprinter(b"short")


@pytest.mark.parametrize(
    ("url", "safe", "credentials"),
    [
        ("https://deploy:pw@hooks.example.net/notify", "https://hooks.example.net/notify", True),
        (
            "https://h.example/in?token=abc&channel=x",
            "https://h.example/in?token=***&channel=***",
            True,
        ),
        ("http://10.0.12.7:8080/hook", "http://10.0.12.7:8080/hook", False),
        ("https://h.example/p?k8sJ2x9#frag", "https://h.example/p?***=***", False),
        ("not a url at all", None, False),
    ],
)
def test_urls_are_redacted(url: str, safe: str | None, credentials: bool) -> None:
    redacted = redact_url(url)
    assert redacted.url == safe
    assert redacted.has_credentials is credentials
