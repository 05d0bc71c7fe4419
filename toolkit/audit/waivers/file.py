"""A waivers file, read: findings a team accepted for a while, each with a reason, an owner
and an expiry (each entry checked: :mod:`toolkit.audit.waivers.entries`; what the audit does
with them: :mod:`toolkit.audit.waivers`).

A TOML file (or YAML, same shape) holds a list of waivers::

    [[waivers]]
    check = "RES002"
    service = "batch-*"              # glob on a name: team, project, environment, service
    reason = "The job runner caps memory itself."
    owner = "alice@example.com"
    expires = 2099-06-30

    [[waivers]]
    check = "VAR001"
    resources = ["7f0c...", "91ab..."]   # or exact resource ids
    reason = "..."
    owner = "..."
    expires = 2099-03-31

``expires`` is a date (YYYY-MM-DD): the waiver holds to the end of that day, UTC; a date
and time is refused, not cut to its date. The suffix picks the language: ``.toml``, or ``.yaml``
and ``.yml`` for YAML. A name with neither (a pipe: ``--waivers <(sops -d waivers.yaml)``) is
read as YAML when a line starts ``waivers:``, else as TOML. A YAML file may not give a key
twice in one entry. Besides ``waivers`` the file
may hold only keys starting with ``x-``, ignored, where YAML anchors can live
(``x-common: &common {...}``, then ``<<: *common`` in an entry). ``check`` is one exact id; a
glob (``*``, ``?``, ``[a-z]``, ``\\`` escaping the next character) that can match nothing, such as
an unclosed ``[``, is refused.

A value shown in an error is cut at 80 characters, and a list or table inside itself is shown
as ``[...]``: a YAML alias of itself, or of its own aliases, is refused, not written out.
"""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from toolkit.audit.waivers.entries import SELECTORS, Waiver, parse_waivers
from toolkit.errors import NotUtf8, WaiverError, read_utf8

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["SELECTORS", "Waiver", "load_waivers", "parse_waivers", "waivers_from"]


def load_waivers(path: Path) -> list[Waiver]:
    """Read a ``.toml``, ``.yaml`` or ``.yml`` file; :class:`WaiverError` names a bad entry."""
    text = _read_text(path)
    from_yaml = _is_yaml(path, text)
    try:
        data = _yaml(text, path) if from_yaml else tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(
            f"{path} is not valid TOML ({exc}): fix the line it names{_suffix_hint(path, text)}"
        ) from exc
    except RecursionError:  # both parsers recurse once per level of [[[...]]]
        raise WaiverError(
            f"{path} nests lists or tables too deep to read: a waiver holds text, a date and "
            "a list of ids"
        ) from None
    return parse_waivers(data, str(path), from_yaml=from_yaml)


def _read_text(path: Path) -> str:
    """The file as text (a UTF-8 byte-order mark is dropped, as Windows editors write one).
    Not only a regular file: a pipe (``--waivers <(sops -d waivers.toml)``) is read too."""
    fix = "fix [audit] waivers or --waivers"
    if path.is_dir():
        raise WaiverError(f"waivers file {path} is a folder, not a file: {fix}")
    if not path.exists():
        raise WaiverError(f"waivers file {path} does not exist: {fix}")
    try:
        return read_utf8(path)
    except NotUtf8 as exc:
        raise WaiverError(f"{exc}, or {fix} if it names the wrong file") from None
    except OSError as exc:
        raise WaiverError(
            f"cannot read waivers file {path} ({exc.strerror or exc}): {fix}"
        ) from None


_YAML_SUFFIXES = (".yaml", ".yml")
_LOOKS_YAML = re.compile(r"^\s*-?\s*waivers\s*:", re.MULTILINE)
_LOOKS_TOML = re.compile(r"^\s*\[\[?waivers\]", re.MULTILINE)


def _is_yaml(path: Path, text: str) -> bool:
    """Whether to read ``path`` as YAML: its suffix says, or, with no suffix to go by (a pipe
    has none: /dev/fd/63), its text does: a line starting ``waivers:``."""
    suffix = path.suffix.lower()
    if suffix in _YAML_SUFFIXES or suffix == ".toml":
        return suffix in _YAML_SUFFIXES
    return suffix == "" and bool(_LOOKS_YAML.search(text)) and not _LOOKS_TOML.search(text)


def _suffix_hint(path: Path, text: str) -> str:
    """Why a file failed to parse when it was never meant to be in that language: the
    suffix decides, .yaml or .yml for YAML and .toml for TOML (see :func:`_is_yaml`)."""
    suffix = path.suffix.lower()
    if suffix in _YAML_SUFFIXES:
        if _LOOKS_TOML.search(text):
            return f"; it looks like TOML, which is read from a .toml file: rename {path}"
        return ""
    if suffix == "":
        return (
            "; with no suffix (a pipe), a file is read as YAML when a line starts "
            "'waivers:', else as TOML ([[waivers]] entries)"
        )
    if suffix != ".toml":
        return "; the suffix picks the parser: name the file .toml, or .yaml (or .yml) for YAML"
    if _LOOKS_YAML.search(text):
        return f"; it looks like YAML, which is read only from a .yaml or .yml file: rename {path}"
    return ""


def _yaml(text: str, path: Path) -> Any:
    """The document; an empty one (nothing but comments) holds no waivers, as in TOML."""
    import yaml

    try:
        data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise WaiverError(
            f"{path} is not valid YAML ({exc}): fix the line it names{_suffix_hint(path, text)}"
        ) from exc
    return {} if data is None else data


@functools.cache
def _strict_loader() -> type:
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the
    last silently, so a waiver would hide another resource than the one first written) and
    a date that does not exist (PyYAML raises a bare ``ValueError``)."""
    import yaml
    from yaml.constructor import ConstructorError

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[object] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str | int | float | bool):
                    continue  # the base class refuses an unhashable key itself
                if key in seen:
                    raise ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"found {key!r} twice; keep one (a key may appear once per entry)",
                        key_node.start_mark,
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_timestamp(self, node: Any) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except ValueError as exc:
                raise ConstructorError(
                    None, None, f"{node.value!r} is not a real date ({exc})", node.start_mark
                ) from None

    StrictLoader.add_constructor(
        "tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp
    )
    return StrictLoader


def waivers_from(source: Path | Sequence[Waiver] | None, default: Path | None) -> list[Waiver]:
    """Waivers given directly, read from a path, or from the configured file (else none)."""
    if source is None:
        return load_waivers(default) if default is not None else []
    if isinstance(source, PurePath):
        return load_waivers(Path(source))
    return list(source)
