"""Options that several ``platform-audit`` commands share, declared once; the one way they
fail (:func:`fail`); and how ``--format`` and an ``--out`` file name agree
(:func:`output_format`).

Each command module imports what it needs, so ``--store`` or ``--config`` read the same
everywhere, and every error is one ``error:`` line with an :class:`ExitCode`.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from toolkit.config import DEFAULT_CONFIG_NAME
from toolkit.errors import ExitCode
from toolkit.report.report_formats import suffixes_text

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from toolkit.audit import Catalogue
    from toolkit.config import Settings

__all__ = [
    "WAIVERS_HELP",
    "BaseUrlOpt",
    "CheckOpt",
    "ConfigOpt",
    "SkipOpt",
    "SnapshotOpt",
    "StoreOpt",
    "TableOrJsonOpt",
    "TokenEnvOpt",
    "WaiversOpt",
    "audit_errors",
    "chosen_checks",
    "fail",
    "output_format",
    "table_or_json",
]

_err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


def fail(message: str, code: ExitCode) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the exit to raise::

        raise fail(f"{path} exists; pass --force to overwrite it", ExitCode.CONFIG)

    The message is plain text, never read as markup: paths, values and platform errors
    may hold brackets (``[/]`` made rich raise instead of printing the error).
    """
    _err.print(Text.assemble(("error: ", "bold red"), message), highlight=False)
    return typer.Exit(int(code))


@contextmanager
def audit_errors() -> Iterator[None]:
    """What an audit command's errors exit with: 2 for configuration, checks, waivers and
    snapshot choices, 7 for a store that cannot be read (URL, credentials, permissions)."""
    from toolkit.errors import AuditError, CheckDefinitionError, ConfigError, StoreError

    try:
        yield
    except (ConfigError, CheckDefinitionError, AuditError) as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    except StoreError as exc:
        raise fail(str(exc), ExitCode.STORE) from None


def table_or_json(format: str) -> None:
    """Refuse a ``--format`` other than ``table`` or ``json`` (2)."""
    if format not in ("table", "json"):
        raise fail("--format must be table or json", ExitCode.CONFIG)


ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help=f"TOML settings file (default ./{DEFAULT_CONFIG_NAME})."),
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help=(
            "Store folder or s3://bucket/prefix; else $PLATFORM_AUDIT_STORE, else \\[store] url "
            "of the config file, else data/store."
        ),
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="API base URL with any prefix; else $PLATFORM_API_URL."),
]
TokenEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--token-env", help="Environment variable holding the key (default PLATFORM_API_KEY)."
    ),
]


WAIVERS_HELP = (
    "Waivers file: .toml, or .yaml/.yml for YAML. Each entry: check, what it waives "
    "(resources = ids, or globs on team, project, environment, service; case-sensitive), "
    "reason, owner, expires (a date). See docs/concepts.md, 'Waivers'."
)
"""What ``--waivers`` says in ``--help`` (audit, report, finding)."""

WaiversOpt = Annotated[Path | None, typer.Option("--waivers", help=WAIVERS_HELP)]
SnapshotOpt = Annotated[
    str | None, typer.Option("--snapshot", help="Judge this snapshot (id or unique prefix).")
]
TableOrJsonOpt = Annotated[str, typer.Option("--format", help="table or json.")]
CheckOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--check",
        help='Run only the checks this names: an id, a glob on ids ("VAR*") or an area; '
        "repeat it for more.",
    ),
]
ListedOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--check",
        help='List only the checks this names: an id, a glob on ids ("VAR*") or an area; '
        "repeat it for more.",
    ),
]
SkipOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--skip",
        help="Leave out the checks this names (as --check), beside those of \\[audit] skip; "
        "repeat it for more.",
    ),
]


def chosen_checks(
    settings: Settings, only: Sequence[str] | None, skip: Sequence[str] | None
) -> Catalogue:
    """The configured checks that ``--check`` (``only``) and ``--skip`` leave; raises
    :class:`~toolkit.errors.ConfigError` for a pattern matching no check, or none left
    (naming what left none: the options, or ``[audit] skip`` of the config file)."""
    from toolkit.audit import Catalogue
    from toolkit.errors import ConfigError

    catalogue = Catalogue.from_options(settings.audit_options(), only=only or (), skip=skip or ())
    if not catalogue.specs:
        config_skip = f"{settings.source or 'the settings'}: [audit] skip"
        options = " and ".join(o for o, given in (("--check", only), ("--skip", skip)) if given)
        if not options:
            raise ConfigError(f"{config_skip} leaves no check to run; remove a pattern from it")
        beside = f", beside those of {config_skip}," if settings.skip_checks else ""
        raise ConfigError(f"{options}{beside} leave no check to run")
    return catalogue


def output_format(
    format: str | None,
    out: Path | None,
    *,
    formats: Sequence[str],
    suffixes: Mapping[str, str],
    default: str,
    hint: str = "",
) -> str:
    """The format to write: ``--format`` (or a suffix's name, ``md``), else the one
    ``--out``'s suffix names (any case, ``suffixes`` maps them, the longest one the name
    ends in wins; ``-``, standard output, names none), else ``default``.
    Refused: an unknown ``--format``, an ``--out`` naming another format than ``--format``,
    and without ``--format`` an ``--out`` naming none; the file would hold something its
    name does not say."""
    if format is not None and format not in formats:  # a suffix's name too: md, txt
        format = suffixes.get("." + format.lower().lstrip("."), format)
    if format is not None and format not in formats:
        raise fail(f"--format must be one of {', '.join(formats)}, not {format!r}", ExitCode.CONFIG)
    if out is not None and str(out) == "-":  # standard output: no name to pick a format
        out = None
    # the longest suffix the name ends in: x.ocsf.json names ocsf, x.json json
    ends = [suffix for suffix in suffixes if out is not None and out.name.lower().endswith(suffix)]
    named = suffixes[max(ends, key=len)] if ends else None
    if format is not None and named is not None and named != format:
        raise fail(
            f"--out {out} names a {named} file but --format is {format}: drop one of them or "
            "make them agree",
            ExitCode.CONFIG,
        )
    if format is None and out is not None and named is None:
        raise fail(
            f"--out {out}: name it {suffixes_text(suffixes)} (the suffix picks the format), or "
            "pass --format" + (f"; {hint}" if hint else ""),
            ExitCode.CONFIG,
        )
    return format or named or default
