"""Client configuration: one small, frozen, keyword-only value."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import httpx

from toolkit.api._endpoints import resolve_endpoints
from toolkit.api._exceptions import ConfigError
from toolkit.api._secret import Secret

if TYPE_CHECKING:
    from collections.abc import Mapping

URL_VAR = "PLATFORM_API_URL"
KEY_VAR = "PLATFORM_API_KEY"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The default cap on one answer's body. The largest page is an environment's unpaged
`/services/list`, about 4.7 KB a service: 64 MiB holds some 14,000 services in one
environment (the largest page of a simulated 10,000-service platform is under 100 KB)."""


def _default_user_agent() -> str:
    try:
        version = metadata.version("platform-audit")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"platform-audit/{version}"


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientConfig:
    """How to reach the platform and how politely to call it.

    `base_url` includes any path prefix (`https://host/api/go`). `token` is a `Secret`
    (a plain string is wrapped); it never shows in a repr. `endpoints` overrides paths of
    the endpoint catalogue by name. `rate_per_minute=None` (the default) sends as fast as
    `concurrency` allows and paces only after a 429 or clustered 5xx answers; a number is a
    ceiling that always paces (the MCP endpoint's 600 a minute, a shared platform).
    `timeout_s` bounds each connect, read and write; `deadline_s` bounds a whole call, every
    attempt, wait and body included. `max_response_bytes` caps one answer's body: a larger
    one fails with `ResponseTooLarge` without being read further.

    >>> config = ClientConfig(base_url="https://example.test/api/go", token=Secret("plat_x"))
    >>> config.max_attempts, config.token
    (5, Secret('********'))
    """

    base_url: str
    token: Secret
    timeout_s: float = 30.0
    max_attempts: int = 5
    deadline_s: float = 120.0
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    concurrency: int = 8
    rate_per_minute: float | None = None
    max_response_bytes: int = MAX_RESPONSE_BYTES
    endpoints: Mapping[str, str] = field(default_factory=dict, hash=False)
    user_agent: str = field(default_factory=_default_user_agent)
    retry_malformed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", Secret.of(self.token))
        object.__setattr__(self, "endpoints", MappingProxyType(dict(self.endpoints)))
        if not self.token:
            raise ConfigError(f"the token is empty: set {KEY_VAR} to an API key", setting="token")
        _check_url(self.base_url)
        _check_positive("timeout_s", self.timeout_s)
        _check_positive("deadline_s", self.deadline_s)
        _check_positive("backoff_cap_s", self.backoff_cap_s)
        _check_positive("max_attempts", self.max_attempts)
        _check_positive("concurrency", self.concurrency)
        _check_positive("max_response_bytes", self.max_response_bytes)
        if self.backoff_base_s < 0:
            raise ConfigError("backoff_base_s must be >= 0", setting="backoff_base_s")
        if self.rate_per_minute is not None:
            _check_positive("rate_per_minute", self.rate_per_minute)
        resolve_endpoints(self.endpoints)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ClientConfig:
        """Read `PLATFORM_API_URL` and `PLATFORM_API_KEY`; keyword overrides win.

        >>> env = {"PLATFORM_API_URL": "https://example.test", "PLATFORM_API_KEY": "plat_x"}
        >>> ClientConfig.from_env(env, concurrency=2).concurrency
        2
        """
        env = os.environ if environ is None else environ
        values = {"base_url": _required(env, URL_VAR, "the base URL, e.g. https://host/api/go")}
        values["token"] = _required(env, KEY_VAR, "an API key created in the account settings")
        return cls(**{**values, **overrides})


def _required(env: Mapping[str, str], name: str, what: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} is not set: export {name} with {what}", setting=name)
    return value


def _check_url(url: str) -> None:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ConfigError(f"base_url is not a valid URL: {exc}", setting="base_url") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(
            "base_url must be an http(s) URL with a host, e.g. https://host/api/go",
            setting="base_url",
        )
    if parsed.userinfo:
        raise ConfigError(
            "base_url must not carry credentials: put the key in PLATFORM_API_KEY",
            setting="base_url",
        )
    if parsed.query or parsed.fragment:
        raise ConfigError("base_url must not carry a query or fragment", setting="base_url")
    if ";" in url:  # `/api;token=...`: a parameter a proxy or a log would show
        raise ConfigError(
            "base_url must not carry path parameters (;name=value): put the key in "
            "PLATFORM_API_KEY and give the URL up to its prefix, e.g. https://host/api/go",
            setting="base_url",
        )


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise ConfigError(f"{name} must be greater than 0, got {value!r}", setting=name)
