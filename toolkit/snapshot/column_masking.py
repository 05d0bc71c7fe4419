"""One masking rule per column kind: what a string becomes before it is stored.

Every column of strings declares a :class:`~toolkit.snapshot.schema.Kind`; collection
(``toolkit.collect.conform.Conformer``) passes each string through its kind's rule, and the
writer does the same for the ``snapshots`` row it builds. The rules reuse the redaction of
:mod:`toolkit.snapshot.redaction`:

- ``url``: :func:`~toolkit.snapshot.redaction.redact_url` keeping the path (no userinfo,
  query values and path parameters masked), the rest scrubbed; text that is not an
  absolute URL loses a ``user:password@`` (or a token before ``@``) at its start;
- ``image``: an image reference loses any ``user[:password]@`` before its registry (a digest
  ``@sha256:...`` stays), then is scrubbed; one written as a URL is masked as a URL;
- ``url_path``: masked as the path of a URL (query values and path parameters);
- ``request_id``: kept when it is a plain identifier of at most 128 characters, else ``***``;
- ``id``, ``enum``, ``name`` and ``file_path``: scrubbed of credentials
  (:func:`~toolkit.snapshot.redaction.scrub_text`), as is a ``url`` that is not an absolute
  URL; a short plain word or a UUID is kept without a look;
- ``text``: scrubbed the same way and bounded in length
  (:func:`~toolkit.snapshot.free_text.stored_text`);
- ``json`` (built member by member by ``extra_json``) and ``toolkit`` (written by the
  toolkit itself): kept.

>>> mask(Kind.IMAGE, "robot:s3cr3t@registry.example/app:1.4")
'registry.example/app:1.4'
>>> mask(Kind.URL, "https://robot:s3cr3t@registry.example/v2?sig=abc")
'https://registry.example/v2?sig=***'
>>> mask(Kind.URL_PATH, "/hooks;token=abc?sig=def")
'/hooks;token=***?sig=***'
>>> mask(Kind.FILE_PATH, "src/**?key=abc"), mask(Kind.REQUEST_ID, "id\\nlog: forged")
('src/**?key=***', '***')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolkit.snapshot.free_text import stored_text
from toolkit.snapshot.redaction import MASK, is_token, redact_url, scrub_text
from toolkit.snapshot.schema import Kind, Table

__all__ = ["RULES", "mask", "mask_row", "masker"]

Rule = Callable[[str], str]

# Strings no scrub_text pattern can change, kept without running them: a short plain word
# (a status, a type, a name; tokens are longer than 15 characters), a UUID, a commit SHA
# (40 or 64 hex digits) or an ISO 8601 time.
_PLAIN = re.compile(
    r"[A-Za-z0-9_.-]{0,15}"
    r"|[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
    r"|[0-9a-f]{40}|[0-9a-f]{64}"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)
# A URL or a path without any of these has no userinfo, query, parameter or fragment.
_URL_EXTRAS = re.compile(r"[@?;#=\s]")
# `user[:password]@` at the start of a reference without a scheme; not an image digest
# (`name@sha256:<hex>`, `name:tag@sha256:<hex>`).
_LOGIN = re.compile(
    r"(?P<user>[^/@:\s]*)(?P<password>:[^/@\s]*)?@"
    r"(?![A-Za-z][A-Za-z0-9+._-]*:[0-9A-Fa-f]{32,}$)"
)
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_ORIGIN = "http://path.invalid"


def _scrub(value: str) -> str:
    return value if _PLAIN.fullmatch(value) else scrub_text(value)


def _text(value: str) -> str:
    """Free text: scrubbed, and cut to `FREE_TEXT_LIMIT` characters with its length noted."""
    return value if _PLAIN.fullmatch(value) else stored_text(value)


def _scrub_before_query(url: str) -> str:
    """A redacted URL (or path) with each path segment scrubbed too. Its query values and
    path parameters are masked already; scrubbed whole, ``;token=***/v1?sig=***`` would
    read as one value and lose the rest."""
    head, mark, query = url.partition("?")
    return "/".join(map(_scrub, head.split("/"))) + mark + query


def _without_login(value: str) -> str:
    """``value`` without a leading ``user:password@``, or a ``token@``; a plain user name
    (``git@github.com:org/repo``) is no credential and stays."""
    login = _LOGIN.match(value)
    if login and (login["password"] or is_token(login["user"])):
        return value[login.end() :]
    return value


def _url(value: str) -> str:
    if not _URL_EXTRAS.search(value):
        return value
    if "://" in value:
        return _scrub_before_query(redact_url(value, mask_path=False).url or MASK)
    return _scrub(_without_login(value))


def _image(value: str) -> str:
    if "://" in value:
        return _url(value)
    if "@" not in value:
        return _scrub(value)
    login = _LOGIN.match(value)
    return _scrub(value[login.end() :] if login else value)


def _url_path(value: str) -> str:
    if not _URL_EXTRAS.search(value):
        return value
    if "://" in value:  # a whole URL where a path belongs: masked as one (or whole)
        return _url(value)
    if value.startswith("//"):  # a network-path reference: an authority follows
        return _url(f"http:{value}").removeprefix("http:")
    rooted = value if value.startswith("/") else f"/{value}"
    redacted = redact_url(f"{_ORIGIN}{rooted}", mask_path=False).url
    if redacted is None:
        return MASK
    path = redacted.removeprefix(_ORIGIN)
    return _scrub_before_query(path if value.startswith("/") else path.removeprefix("/"))


def _request_id(value: str) -> str:
    return value if _REQUEST_ID.fullmatch(value) else MASK


def _kept(value: str) -> str:
    return value


RULES: Mapping[Kind, Rule] = {
    Kind.ID: _scrub,
    Kind.ENUM: _scrub,
    Kind.NAME: _scrub,
    Kind.FILE_PATH: _scrub,
    Kind.TEXT: _text,
    Kind.URL: _url,
    Kind.IMAGE: _image,
    Kind.URL_PATH: _url_path,
    Kind.REQUEST_ID: _request_id,
    Kind.JSON: _kept,
    Kind.TOOLKIT: _kept,
}
"""The rule of each kind; a test holds that every kind has one."""


def masker(kind: Kind | None) -> Rule | None:
    """The rule strings of ``kind`` go through; None when they are kept as they are."""
    rule = RULES[kind] if kind is not None else _kept
    return None if rule is _kept else rule


def mask(kind: Kind, value: str) -> str:
    """``value`` as a column of ``kind`` stores it."""
    return RULES[kind](value)


def mask_row(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with each string of each column of ``table`` masked by its kind (lists item by
    item); other values and undeclared keys as they are."""
    out = dict(row)
    for column in table.columns:
        rule = masker(column.kind)
        value = out.get(column.name)
        if rule is None or value is None:
            continue
        if isinstance(value, str):
            out[column.name] = rule(value)
        elif isinstance(value, list):
            out[column.name] = [rule(v) if isinstance(v, str) else v for v in value]
    return out
