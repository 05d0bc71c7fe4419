"""The configuration file: where it is found, read as TOML, and its tables checked against
the keys each section allows (an unknown key is refused with the closest known one, a
value of the wrong kind is named with the kind it must be)."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import ConfigError, NotUtf8, read_utf8

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "ENV_CONFIG",
    "find_file",
    "is_kind",
    "kind_name",
    "not_a_table",
    "read_toml",
    "refuse_unknown",
]

DEFAULT_CONFIG_NAME = "platform-audit.toml"
ENV_CONFIG = "PLATFORM_AUDIT_CONFIG"


def find_file(path: Path | None, env: Mapping[str, str]) -> Path | None:
    if path is not None:
        if path.is_dir():
            raise ConfigError(f"config file {path} is a folder: pass --config a TOML file")
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist: run `platform-audit init`")
        return path
    if env.get(ENV_CONFIG):
        named = Path(env[ENV_CONFIG])
        if not named.is_file():
            what = "a folder, not a file" if named.is_dir() else "which does not exist"
            raise ConfigError(f"${ENV_CONFIG} names {named}, {what}")
        return named
    default = Path(DEFAULT_CONFIG_NAME)
    return default if default.is_file() else None


def read_toml(path: Path) -> dict[str, Any]:
    """The file's tables; a UTF-8 byte-order mark (Windows editors write one) is dropped."""
    try:
        return tomllib.loads(read_utf8(path))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path} ({exc.strerror or exc})") from None
    except NotUtf8 as exc:
        raise ConfigError(f"{exc}, or pass --config the right file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}): fix the line it names") from exc


def not_a_table(section: str, value: object) -> str:
    """What to write instead of ``section = value`` at the top of the file (a section's
    setting written above its header, or a header left out)."""
    if section == "checks":
        hint = (
            "; to run the checks of your own folders, write checks = [...] under [audit]"
            if isinstance(value, list)
            else ""
        )
        return (
            "checks must be a table of [checks.ID] tables, each holding one check's "
            f"thresholds (e.g. [checks.RES005] then max_ratio = 10){hint}"
        )
    if section == "credentials":
        return (
            f"{section} must be a table of [{section}.NAME] tables, each with "
            'token_env = "ENV_VAR_NAME"'
        )
    return (
        f"{section} is set to a value, but it is a section: write [{section}] on a line of "
        "its own, with its settings below it"
    )


def refuse_unknown(table: Mapping[str, Any], known: set[str], where: str) -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = (
                f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"
            )
            raise ConfigError(f"{where}: unknown setting {key!r}{hint}")


def is_kind(value: object, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool):  # TOML's true is no number
        return bool in kinds
    return isinstance(value, kinds)


def kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if list in kinds:
        return "a list"
    if dict in kinds:
        return "a table"
    if str in kinds and bool in kinds:
        return "a string, true or false"
    if bool in kinds:
        return "true or false"
    if float in kinds:
        return "a number"
    return "a whole number" if int in kinds else "a string"
