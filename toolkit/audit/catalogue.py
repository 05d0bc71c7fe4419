"""Which checks run, and with which thresholds: built-in checks, the user's folders, the config.

The built-in checks ship in ``toolkit/audit/checks``; ``[audit] checks = ["folder", ...]``
adds the user's own without touching the package, ``[checks.ID]`` tables override the
defaults a check declares in its header, and ``[audit] skip`` leaves checks out (ids, globs
such as ``VAR0*``, or areas such as ``webhooks``). Those keys are the audit's own value,
:class:`AuditOptions`, which :mod:`toolkit.config` builds (``Settings.audit_options()``) and
:class:`~toolkit.audit.AuditRequest` and :meth:`Catalogue.from_options` take: the audit never
reads the whole settings. Example::

    catalogue = Catalogue.from_options(load_settings().audit_options())
    catalogue = Catalogue.from_options(AuditOptions(skip=("KEY006",)))
    for spec in catalogue.specs:
        params = catalogue.params(spec)      # {"min_ratio": 6}: defaults, then configuration
    security = catalogue.select(only=["security", "WEB*"])
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.errors import CheckDefinitionError, ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from toolkit.audit.check_file import CheckSpec

__all__ = ["AuditOptions", "Catalogue", "params_example"]


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """Which checks run with which thresholds, which waivers apply and what production
    environments are named; the defaults are the built-in checks and thresholds alone."""

    check_folders: tuple[Path, ...] = ()
    """Folders of the user's own checks, run beside the built-in ones ([audit] checks)."""
    builtin_checks: bool = True
    """Whether the built-in checks run ([audit] builtin_checks)."""
    skip: tuple[str, ...] = ()
    """Checks left out of every audit: ids, globs on ids or areas ([audit] skip)."""
    check_params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Threshold overrides per check id ([checks.RES003] min_ratio = 6)."""
    waivers_file: Path | None = None
    """The waivers an audit applies unless it is given others ([audit] waivers)."""
    production_pattern: str | None = None
    """What production environments are named ([audit] production_pattern); None: the
    built-in pattern."""
    source: Path | None = None
    """The config file these come from, named in the errors about them."""

    @property
    def where(self) -> str | None:
        """The config file, as errors name it; None when the options come from no file."""
        return str(self.source) if self.source else None


@dataclass(frozen=True)
class Catalogue:
    """The checks to run and the configured parameter overrides, validated together.

    ``where`` names the config file the overrides come from, for their errors."""

    specs: tuple[CheckSpec, ...]
    overrides: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    where: str = "configuration"

    def __post_init__(self) -> None:
        by_id = {spec.id: spec for spec in self.specs}
        for check_id, values in self.overrides.items():
            spec = by_id.get(check_id)
            if spec is None:
                raise CheckDefinitionError(
                    f"{self.where}: [checks.{check_id}] is set, but no check {check_id} is "
                    "loaded; fix the id or add the folder that holds it to [audit] checks"
                )
            spec.bind(values, where=self.where)  # refuses what the check cannot take

    @classmethod
    def load(
        cls,
        folders: Iterable[Path] = (),
        overrides: Mapping[str, Mapping[str, object]] | None = None,
        *,
        builtin: bool = True,
        where: str | None = None,
    ) -> Catalogue:
        """The built-in checks (unless ``builtin=False``) plus those of ``folders``;
        ``where`` names the config file, for errors about its folders and thresholds."""
        roots = [BUILTIN_CHECKS, *folders] if builtin else list(folders)
        specs = discover_checks(roots, where=f"{where}: [audit] checks" if where else None)
        return cls(tuple(specs), dict(overrides or {}), where or "configuration")

    @classmethod
    def from_options(
        cls,
        options: AuditOptions | None = None,
        *,
        only: Sequence[str] = (),
        skip: Sequence[str] = (),
    ) -> Catalogue:
        """The checks and thresholds that ``options`` name (default: the built-in ones),
        less those of ``[audit] skip``; then, as :meth:`select`, those ``only``
        (``--check``) names and ``skip`` (``--skip``) does not.

        A ``--check`` pattern is looked for among every loaded check, so one that names only
        checks ``[audit] skip`` leaves out says so instead of "matches no check"."""
        chosen = options or AuditOptions()
        where = chosen.where
        loaded = cls.load(
            chosen.check_folders, chosen.check_params, builtin=chosen.builtin_checks, where=where
        )
        if not loaded.specs:
            raise ConfigError(
                f"{where or 'the settings'}: [audit] builtin_checks = false and no check in "
                "[audit] checks: there is no check to run; add a folder of checks, or leave "
                "builtin_checks out"
            )
        config_skip = f"{where or 'the settings'}: [audit] skip"
        loaded.select(skip=chosen.skip, where=config_skip)  # a pattern matching none
        loaded.select(only=only, skip=skip)  # patterns matching none, among every check
        configured = loaded._pick(skip=chosen.skip)
        for pattern in only:
            if not any(_matches(spec, pattern) for spec in configured.specs):
                raise ConfigError(
                    f"--check {pattern!r} names only checks that {config_skip} leaves out: "
                    "remove them from [audit] skip to run them"
                )
        return configured._pick(only=only, skip=skip)

    def select(
        self, only: Sequence[str] = (), skip: Sequence[str] = (), *, where: str | None = None
    ) -> Catalogue:
        """The checks that match a pattern of ``only`` (all when empty) and none of ``skip``.

        A pattern is a check id, a glob on ids (``VAR0*``) or an area (``webhooks``), in any
        case. One that matches no loaded check is a :class:`ConfigError`: a misspelt id
        would otherwise leave a check running, or the audit empty, without a word.
        """
        for option, patterns in (("--check", only), ("--skip", skip)):
            for pattern in patterns:
                if not any(_matches(spec, pattern) for spec in self.specs):
                    areas = ", ".join(sorted({spec.area for spec in self.specs}))
                    raise ConfigError(
                        f"{where or option} {pattern!r} matches no check: give an id (RES001), "
                        f"a glob on ids (VAR*) or an area ({areas}); "
                        "`platform-audit checks` lists them"
                    )
        return self._pick(only, skip)

    def _pick(self, only: Sequence[str] = (), skip: Sequence[str] = ()) -> Catalogue:
        """:meth:`select` without refusing a pattern that matches no check."""
        chosen = tuple(
            spec
            for spec in self.specs
            if (not only or any(_matches(spec, p) for p in only))
            and not any(_matches(spec, p) for p in skip)
        )
        ids = {spec.id for spec in chosen}
        overrides = {k: v for k, v in self.overrides.items() if k in ids}
        return Catalogue(chosen, overrides, self.where)

    def params(self, spec: CheckSpec) -> dict[str, object]:
        """The values DuckDB receives for ``spec``: its defaults, then the configuration."""
        return spec.bind(self.overrides.get(spec.id), where=self.where)

    def configured(self, options: AuditOptions | None = None) -> tuple[str, ...]:
        """One line per setting that changes what the checks find, for a reader of the
        findings: each threshold other than its check's default (``RES005 max_ratio = 50
        (default 8)``), and from ``options`` the checks ``[audit] skip`` leaves out and
        the production pattern, when one is configured. Empty: the defaults."""
        lines = []
        for spec in self.specs:
            values = self.params(spec)
            for name, param in spec.params.items():
                if values[name] != param.default:
                    shown, default = json.dumps(values[name]), json.dumps(param.default)
                    lines.append(f"{spec.id} {name} = {shown} (default {default})")
        if options is not None and options.skip:
            lines.append(f"left out by [audit] skip: {', '.join(options.skip)}")
        if options is not None and options.production_pattern is not None:
            pattern = options.production_pattern  # as the file writes it, a literal string
            lines.append(
                f"production: environments named as [audit] production_pattern = '{pattern}'"
            )
        return tuple(lines)

    def get(self, check_id: str) -> CheckSpec:
        for spec in self.specs:
            if spec.id == check_id:
                return spec
        raise KeyError(check_id)


def _matches(spec: CheckSpec, pattern: str) -> bool:
    return spec.area == pattern.lower() or fnmatchcase(spec.id, pattern.upper())


def params_example(specs: Iterable[CheckSpec] | None = None) -> str:
    """The commented ``[checks.ID]`` block of the example config, from the checks' headers.

    Every declared parameter appears with its default and its one-sentence meaning, so the
    example never drifts from the checks (``platform-audit init`` writes it).
    """
    chosen = list(discover_checks([BUILTIN_CHECKS]) if specs is None else specs)
    blocks: list[str] = []
    for spec in chosen:
        if not spec.params:
            continue
        lines = [f"# [checks.{spec.id}]  # {spec.title}"]
        for param in spec.params.values():
            value = json.dumps(param.default)
            lines.append(f"# {param.name} = {value}  # {param.doc}")
        blocks.append("\n".join(lines))
    if not blocks:
        return "# (no built-in check declares a parameter yet)\n"
    return "\n\n".join(blocks) + "\n"
