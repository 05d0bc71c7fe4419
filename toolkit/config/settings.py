"""Settings: one TOML file plus environment variables, with the secrets only in the environment.

Precedence, highest first: command-line options, environment variables, the TOML file,
defaults. The file is ``--config FILE``, else ``$PLATFORM_AUDIT_CONFIG``, else
``./platform-audit.toml`` when it exists; with none of them the defaults and the
environment are enough, so a scheduled job needs no file.

Tokens never appear in the file: a credential names the environment variable that holds
it (``token_env``). Example::

    settings = load_settings(Path("platform-audit.toml"))
    token = settings.token()            # reads the collecting credential's variable
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.api import ClientConfig, Secret
from toolkit.api import ConfigError as ApiConfigError
from toolkit.config.audit_section import AUDIT_KEYS, FAIL_ON, audit_from_file
from toolkit.config.collect_section import COLLECT_KEYS, collect_from_file
from toolkit.config.config_file import (
    DEFAULT_CONFIG_NAME,
    find_file,
    is_kind,
    kind_name,
    not_a_table,
    read_toml,
    refuse_unknown,
)
from toolkit.config.server_sections import endpoints_from_file, fields_from_file
from toolkit.errors import ConfigError
from toolkit.review.settings import REVIEW_KEYS, ReviewSettings, review_from_file
from toolkit.schedule.settings import (
    NOTIFY_KEYS,
    SCHEDULE_KEYS,
    NotifySettings,
    ScheduleSettings,
    notify_from_file,
    schedule_from_file,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.audit.catalogue import AuditOptions
    from toolkit.collect import CrawlOptions

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "FAIL_ON",
    "Credential",
    "Settings",
    "example_config",
    "load_settings",
]

ENV_URL = "PLATFORM_API_URL"
ENV_KEY = "PLATFORM_API_KEY"
ENV_STORE = "PLATFORM_AUDIT_STORE"

# Every key the file may hold, with its type; anything else is refused with a suggestion.
_SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "platform": {"base_url": str, "credential": str},
    "client": {
        "concurrency": int,
        "rate_per_minute": (int, float),
        "max_attempts": int,
        "timeout_s": (int, float),
        "deadline_s": (int, float),
        "max_response_bytes": int,
    },
    "store": {"url": str, "hmac_key_file": str},
    "audit": AUDIT_KEYS,
    "schedule": SCHEDULE_KEYS,
    "notify": NOTIFY_KEYS,
    "collect": COLLECT_KEYS,
    "review": REVIEW_KEYS,
}
_TABLES_OF_TABLES = {"credentials", "endpoints", "checks", "fields"}


@dataclass(frozen=True, kw_only=True)
class Credential:
    """A named credential: where its token lives, never the token itself."""

    name: str
    token_env: str

    def token(self, environ: Mapping[str, str] | None = None) -> str:
        """The token from the environment; a ConfigError naming the variable when unset."""
        env = os.environ if environ is None else environ
        value = env.get(self.token_env, "").strip()
        if not value:
            raise ConfigError(
                f"credential {self.name!r} reads its token from ${self.token_env}, which is "
                f"not set: export {self.token_env}=<your API key> (never put the key in the "
                "config file)"
            )
        return value


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything the toolkit is configured with; build it with :func:`load_settings`."""

    base_url: str | None = None
    credential: str = "default"
    credentials: Mapping[str, Credential] = field(
        default_factory=lambda: {"default": Credential(name="default", token_env=ENV_KEY)}
    )
    concurrency: int = 16
    rate_per_minute: float | None = None
    max_attempts: int = 5
    timeout_s: float = 30.0
    deadline_s: float = 120.0
    max_response_bytes: int = 64 * 1024 * 1024
    """The largest answer body the client reads ([client] max_response_bytes)."""
    endpoints: Mapping[str, str] = field(default_factory=dict)
    """Path overrides by catalogue name ([endpoints] "replicas.list" = "/instances/list")."""
    fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Field renames per kind of record ([fields.services] server_field = "spec_field"),
    applied with the built-in product words by :class:`toolkit.collect.aliases.FieldAliases`."""
    store_url: str = "data/store"
    hmac_key_file: Path = field(
        default_factory=lambda: Path("~/.config/platform-audit/hmac.key").expanduser()
    )
    audit_checks: tuple[Path, ...] = ()
    """Folders of the user's own checks, run beside the built-in ones ([audit] checks)."""
    builtin_checks: bool = True
    audit_frameworks: tuple[Path, ...] = ()
    """Folders of the user's own framework files, beside the built-in soc2, iso27001 and
    cis ([audit] frameworks; see :mod:`toolkit.audit.frameworks`)."""
    skip_checks: tuple[str, ...] = ()
    """Checks left out of every audit: ids, globs on ids or areas ([audit] skip)."""
    waivers_file: Path | None = None
    fail_on: str | None = None
    fail_on_new: bool = False
    """Gate only on findings new or regressed since the compared snapshot ([audit] fail_on_new)."""
    production_pattern: str | None = None
    """What production environments are named ([audit] production_pattern); None: the
    built-in pattern (``views/all_resources.sql``), "prod" or "production" as a word."""
    check_params: Mapping[str, Mapping[str, int | float | str | bool]] = field(default_factory=dict)
    """Threshold overrides per check id ([checks.RES003] min_ratio = 6)."""
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    """When ``platform-audit schedule`` runs, its backoff, lock, status file and maintenance."""
    notify: NotifySettings = field(default_factory=NotifySettings)
    """Where the scheduled job posts new findings ([notify] url_env names the variable)."""
    review: ReviewSettings = field(default_factory=ReviewSettings)
    """Days to fix a finding per severity, for ``platform-audit review`` ([review])."""
    collect: CrawlOptions | None = None
    """What snapshots collect ([collect]); None: the crawl's defaults, ``CrawlOptions()``."""
    source: Path | None = None

    @property
    def collecting(self) -> Credential:
        """The credential that collects snapshots."""
        return self.credentials[self.credential]

    @property
    def audited(self) -> tuple[Credential, ...]:
        """The other configured credentials, whose scope is audited but which do not collect."""
        return tuple(c for n, c in self.credentials.items() if n != self.credential)

    def require_base_url(self) -> str:
        """The base URL, or a ConfigError that says the three ways to set it."""
        if not self.base_url:
            raise ConfigError(
                f"no platform URL configured: pass --base-url, export {ENV_URL}, or set "
                f"[platform] base_url in {DEFAULT_CONFIG_NAME} (run `platform-audit init`)"
            )
        return self.base_url

    def token(self, environ: Mapping[str, str] | None = None) -> str:
        """The collecting credential's token, read from its environment variable."""
        return self.collecting.token(environ)

    def audit_options(self) -> AuditOptions:
        """What an audit is configured with ([audit], [checks.ID]), as the audit's own value
        (built on demand, as ``[collect]``'s options are only when the section sets some)."""
        from toolkit.audit.catalogue import AuditOptions

        return AuditOptions(
            check_folders=self.audit_checks,
            builtin_checks=self.builtin_checks,
            skip=self.skip_checks,
            check_params=self.check_params,
            waivers_file=self.waivers_file,
            production_pattern=self.production_pattern,
            source=self.source,
        )

    def client_config(
        self, credential: Credential | None = None, environ: Mapping[str, str] | None = None
    ) -> ClientConfig:
        """The API client's settings for one credential (the collecting one by default).

        What the client refuses (a URL with credentials, an unknown endpoint name) becomes
        the toolkit's own :class:`ConfigError`, so every command reports it the same way.
        """
        cred = credential or self.collecting
        try:
            return ClientConfig(
                base_url=self.require_base_url(),
                token=Secret(cred.token(environ)),
                timeout_s=self.timeout_s,
                max_attempts=self.max_attempts,
                deadline_s=self.deadline_s,
                max_response_bytes=self.max_response_bytes,
                concurrency=self.concurrency,
                rate_per_minute=self.rate_per_minute,
                endpoints=self.endpoints,
            )
        except ApiConfigError as exc:
            raise ConfigError(str(exc)) from None


def example_config() -> str:
    """The commented example file that ``platform-audit init`` writes.

    Its ``[checks.ID]`` block is generated from the built-in checks' headers, so it lists
    every threshold there is, with its default and meaning, and never drifts from them.
    """
    from toolkit.audit.catalogue import params_example

    static = (
        resources.files("toolkit.config").joinpath("platform-audit.example.toml").read_text("utf-8")
    )
    return static.rstrip("\n") + "\n" + params_example()


def load_settings(
    path: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    base_url: str | None = None,
    token_env: str | None = None,
    store_url: str | None = None,
    audited: Mapping[str, str] | None = None,
) -> Settings:
    """Read the file (if any), then the environment, then the given overrides.

    ``token_env`` replaces the collecting credential's variable (``--token-env``);
    ``audited`` adds credentials to audit, name -> variable (``--credential NAME=VAR``).
    """
    env = os.environ if environ is None else environ
    source = find_file(path, env)
    raw = read_toml(source) if source else {}
    values = _from_file(raw, source)
    if env.get(ENV_URL):
        values["base_url"] = env[ENV_URL]
    if env.get(ENV_STORE):
        values["store_url"] = env[ENV_STORE]
    if base_url:
        values["base_url"] = base_url
    if store_url:
        values["store_url"] = store_url
    settings = Settings(**values, source=source)
    if token_env or audited:
        creds = dict(settings.credentials)
        if token_env:
            creds[settings.credential] = Credential(name=settings.credential, token_env=token_env)
        for name, variable in (audited or {}).items():
            if name == settings.credential:
                raise ConfigError(f"--credential {name}=... names the collecting credential")
            creds[name] = Credential(name=name, token_env=variable)
        settings = Settings(**{**values, "credentials": creds}, source=source)
    if settings.base_url is not None:
        _check_url(settings.base_url)
    return settings


def _from_file(raw: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    where = str(source)
    refuse_unknown(raw, set(_SCHEMA) | _TABLES_OF_TABLES, where)
    for section in (*_SCHEMA, *sorted(_TABLES_OF_TABLES)):
        if section in raw and not isinstance(raw[section], dict):
            raise ConfigError(f"{where}: {not_a_table(section, raw[section])}")
    for section, keys in _SCHEMA.items():
        table = raw.get(section, {})
        refuse_unknown(table, set(keys), f"{where} [{section}]")
        for key, kind in keys.items():
            if key in table and not is_kind(table[key], kind):
                raise ConfigError(f"{where}: [{section}] {key} must be {kind_name(kind)}")
    platform, client, store = (raw.get(s, {}) for s in ("platform", "client", "store"))
    values: dict[str, Any] = {k: client[k] for k in _SCHEMA["client"] if k in client}
    if values.get("rate_per_minute") == 0:
        values["rate_per_minute"] = None  # 0: no ceiling, as when the key is absent
    if "base_url" in platform:
        values["base_url"] = platform["base_url"]
    # relative paths are relative to the config file, as every other path the file names
    base = source.parent if source is not None else Path()
    if "url" in store:
        url = store["url"]
        local = "://" not in url or url.startswith("file://")
        path = Path(url.removeprefix("file://")).expanduser()
        values["store_url"] = str(base / path) if local and url.strip() else url
    if "hmac_key_file" in store:
        values["hmac_key_file"] = base / Path(store["hmac_key_file"]).expanduser()
    values["endpoints"] = endpoints_from_file(raw.get("endpoints", {}), where)
    values["fields"] = fields_from_file(raw.get("fields", {}), where)
    credentials = _credentials(raw.get("credentials", {}), where)
    if credentials:
        values["credentials"] = credentials
    chosen = platform.get("credential", "default" if not credentials else next(iter(credentials)))
    if credentials and chosen not in credentials:
        raise ConfigError(
            f"{where}: [platform] credential = {chosen!r} but only "
            f"{', '.join(sorted(credentials))} are defined under [credentials.NAME]"
        )
    values["credential"] = chosen
    values.update(audit_from_file(raw.get("audit", {}), raw.get("checks", {}), source))
    values["schedule"] = schedule_from_file(raw.get("schedule", {}), source)
    values["notify"] = notify_from_file(raw.get("notify", {}), source)
    values["collect"] = collect_from_file(raw.get("collect", {}), source)
    values["review"] = review_from_file(raw.get("review", {}), source)
    return values


def _credentials(table: Mapping[str, Any], where: str) -> dict[str, Credential]:
    found: dict[str, Credential] = {}
    for name, body in table.items():
        if not isinstance(body, dict) or not isinstance(body.get("token_env"), str):
            raise ConfigError(
                f'{where}: [credentials.{name}] needs token_env = "ENV_VAR_NAME" (the '
                "variable that holds the key; the key itself never goes in the file)"
            )
        refuse_unknown(body, {"token_env"}, f"{where} [credentials.{name}]")
        found[name] = Credential(name=name, token_env=body["token_env"])
    return found


def _check_url(url: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"platform URL {url!r} must start with http:// or https:// (include any prefix, "
            "e.g. https://platform.example.com/api/go)"
        )
