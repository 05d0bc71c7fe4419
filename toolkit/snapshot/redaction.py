"""Keyed fingerprints and URL redaction: how secrets are described without being stored.

A variable value or a token never reaches the store. What does is its HMAC-SHA256
fingerprint under a local key that lives outside the store, so that rotation and reuse
can be audited (same fingerprint, same value) while the store alone reveals nothing.

The key comes from ``$PLATFORM_AUDIT_HMAC_KEY`` or from a key file (``Settings.hmac_key_file``)
created on first use with mode 0600; a key file that group or others can read is refused::

    fingerprints = load_fingerprinter(settings.hmac_key_file, store_root=settings.store_url)
    fingerprints.of("s3cr3t")          # 64 hex digits, stable for this key

Webhook URLs keep scheme, host, port and the path's plain words; userinfo is dropped,
query values and path parameters (``;name=value``) are masked, and so is every path segment
that looks like a token (Slack, Discord, Teams and most chat services put the secret in the
path)::

    >>> redact_url("https://bot:pw@hooks.example.org:8443/in?token=abc&channel=ops").url
    'https://hooks.example.org:8443/in?token=***&channel=***'
    >>> redact_url("https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + "x1" * 12).url
    'https://hooks.slack.com/services/T0123ABCD/B0456EFGH/***'

Free text from the platform (a deployment's error, crash reasons) is scrubbed of URL
userinfo and credential values, since crash messages quote connection strings: see
:mod:`toolkit.snapshot.text_scrub`, whose ``scrub_text`` and ``writes_credential`` this
module re-exports, as it does the names of :mod:`toolkit.snapshot.secret_names`::

    >>> scrub_text("connect postgres://app:s3cr3t@db:5432/app failed")
    'connect postgres://***@db:5432/app failed'
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

from toolkit.errors import ConfigError
from toolkit.snapshot.secret_names import CREDENTIAL_WORDS, SECRET_NAME, credential_name
from toolkit.snapshot.text_scrub import (
    MASK,
    PLAIN_WORD,
    REFERENCE_MARK,
    scrub_text,
    writes_credential,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CREDENTIAL_WORDS",
    "ENV_HMAC_KEY",
    "MASK",
    "REFERENCE_MARK",
    "SECRET_NAME",
    "Fingerprinter",
    "RedactedUrl",
    "credential_name",
    "is_token",
    "load_fingerprinter",
    "redact_url",
    "scrub_text",
    "writes_credential",
]

ENV_HMAC_KEY = "PLATFORM_AUDIT_HMAC_KEY"
_MIN_KEY_CHARS = 16
_KEY_BYTES = 32
_KEY_ID_LABEL = "platform-audit: the id of this fingerprint key"
_QUERY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-\[\]]{0,31}")
# A path segment is a token when it is 16 characters or longer, made of the characters tokens
# use, and not a plain lower-case word (`deployment-notifications`); shorter segments
# (`v1`, `T0123ABCD`, a 12-character id) are kept.
_TOKEN_SEGMENT = re.compile(r"[A-Za-z0-9._~:@=+%-]{16,}")
# The start of a URL as urlsplit reads it (after the control characters and spaces it
# strips): a scheme only where "//" follows (in "t0k3n:x@host" the "scheme" is a secret), and
# the authority, up to the first "/", "?" or "#", where an "@" means userinfo.
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_URL_START = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):)?//(?P<authority>[^/?#]*)")


class Fingerprinter:
    """HMAC-SHA256 under a local key; the key never shows in a repr.

    >>> Fingerprinter(b"0123456789abcdef").of("hello")[:12]
    '713ba20d2e5f'
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if len(key) < _MIN_KEY_CHARS:
            raise ConfigError(
                f"the HMAC key is too short ({len(key)} bytes): use at least {_MIN_KEY_CHARS}, "
                f"e.g. export {ENV_HMAC_KEY}="
                "$(python -c 'import secrets; print(secrets.token_hex())')"
            )
        self._key = key

    def of(self, value: str) -> str:
        """The hex HMAC-SHA256 of ``value`` under this key."""
        return hmac.new(self._key, value.encode("utf-8"), hashlib.sha256).hexdigest()

    @property
    def key_id(self) -> str:
        """Names the key without revealing it (the fingerprint of a fixed label, 16 hex
        digits): fingerprints compare only between snapshots whose key ids are equal, and a
        snapshot records its own (``snapshots.extra``, ``SnapshotInfo.fingerprint_key``).

        >>> Fingerprinter(b"0123456789abcdef").key_id == Fingerprinter(b"fedcba9876543210").key_id
        False
        """
        return self.of(_KEY_ID_LABEL)[:16]

    def __repr__(self) -> str:
        return "Fingerprinter(key=********)"


def load_fingerprinter(
    key_file: Path,
    *,
    environ: Mapping[str, str] | None = None,
    store_root: str | Path | None = None,
) -> Fingerprinter:
    """The fingerprinter from ``$PLATFORM_AUDIT_HMAC_KEY``, else from ``key_file``.

    The key file is created on first use (mode 0600, its folder 0700). It is refused when
    group or others may read it, and when it lies inside the store (``store_root``), since
    a key kept next to the fingerprints would let anyone holding the store test guesses.
    """
    env = os.environ if environ is None else environ
    from_env = env.get(ENV_HMAC_KEY, "").strip()
    if from_env:
        return Fingerprinter(from_env.encode("utf-8"))
    path = key_file.expanduser()
    _refuse_inside_store(path, store_root)
    if not path.exists():
        _create_key_file(path)
    return Fingerprinter(_read_key_file(path))


def _refuse_inside_store(path: Path, store_root: str | Path | None) -> None:
    if store_root is None or "://" in str(store_root):
        return
    root = Path(store_root).expanduser().resolve()
    if path.resolve().is_relative_to(root):
        raise ConfigError(
            f"the HMAC key file {path} lies inside the store {root}: move it out "
            f"([store] hmac_key_file) or set {ENV_HMAC_KEY}"
        )


def _create_key_file(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        descriptor = os.open(path, flags, 0o600)
    except FileExistsError:
        return  # another process created it first; read theirs
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(secrets.token_hex(_KEY_BYTES) + "\n")


def _read_key_file(path: Path) -> bytes:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"the HMAC key file {path} is readable by group or others (mode "
            f"{stat.S_IMODE(mode):04o}): run `chmod 600 {path}` and try again"
        )
    key = path.read_text("ascii").strip()
    if not key:
        raise ConfigError(f"the HMAC key file {path} is empty: delete it to create a new key")
    return key.encode("ascii")


# Webhook services whose path ids are secrets too short for is_token(): host, and the route
# after which every path segment is masked.
_SECRET_PATHS = {"hooks.zapier.com": ("hooks", "catch")}


def _secret_path_start(host: str, segments: list[str]) -> int:
    """The index of the first path segment that is a secret on a known webhook service
    (``segments`` as ``path.split("/")``, so index 0 is empty); past the end otherwise."""
    route = _SECRET_PATHS.get(host.lower().rstrip("."))
    if route and tuple(s.lower() for s in segments[1 : 1 + len(route)]) == route:
        return 1 + len(route)
    return len(segments)


@dataclass(frozen=True, slots=True)
class RedactedUrl:
    """A URL safe to store, with the facts audits need about what was removed."""

    url: str | None
    scheme: str | None
    host: str | None
    port: int | None
    has_credentials: bool | None
    """None when the URL could not be parsed and its text shows no userinfo: unknown."""


def redact_url(url: str, *, mask_path: bool = True) -> RedactedUrl:
    """Drop userinfo and fragment, mask every query value, path parameter value and each path
    segment that looks like a token; keep scheme, host, port and the rest of the path.

    A path segment is a token when it is 16 characters or longer, holds only the characters
    tokens are written with (letters, digits, ``._~:@=+%-``) and is not a plain lower-case
    word such as ``deployment-notifications``: the Slack secret, the Discord token, the Teams
    connector ids and a ``/hooks/<uuid>`` all are; ``/api/v1/notify`` or a Slack ``T0123ABCD``
    team id are not. Where a known webhook service puts a short secret in the path (Zapier's
    ``/hooks/catch/<account>/<hook>/``), every segment after its route is masked.
    ``mask_path=False`` keeps the whole path (a repository URL).

    A path segment's parameters (``;name=value``, RFC 3986, allowed in any segment) are
    masked as query parameters are, ``mask_path`` or not: ``/notify;token=***``.

    ``has_credentials`` is true when the URL carried userinfo, a path token, a bare query
    value or path parameter that looks like a token, or a non-empty query value or path
    parameter whose name has a credential word (``token``, ``key``, ``code``, ``sig``,
    ``password``...: :data:`CREDENTIAL_WORDS`).

    A URL that cannot be parsed (a port out of range, a broken IPv6 literal) or is not
    absolute keeps nothing but the scheme before its ``://`` (``url`` is None), and whether
    it carries a credential is unknown (None) unless its text shows userinfo, an ``@``
    before the host: then it is true.

    >>> redact_url("https://deploy:pw@hooks.example.net/notify").has_credentials
    True
    >>> redact_url("https://fn.example.net/api/hook?code=abc").has_credentials
    True
    >>> redact_url("https://deploy:pw@hooks.example.net:99999/notify")
    RedactedUrl(url=None, scheme='https', host=None, port=None, has_credentials=True)
    >>> print(redact_url("https://hooks.example.net:99999/notify").has_credentials)
    None
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return _unparsed(url)
    if not parts.scheme or not parts.hostname:
        return _unparsed(url)  # not an absolute URL: nothing of it is known to be safe to keep
    query = parse_qsl(parts.query, keep_blank_values=True)
    secret_query = any(_secret_pair(pair) for pair in query)
    host = parts.hostname
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    path, secret_path = _masked_path(host, parts.path, mask_path=mask_path)
    masked = "&".join(f"{_query_name(name, value)}={MASK}" for name, value in query)
    text = f"{parts.scheme}://{netloc}{path}"
    if masked:
        text += f"?{masked}"
    has_userinfo = "@" in parts.netloc
    secret = has_userinfo or secret_query or secret_path
    return RedactedUrl(text, parts.scheme or None, host, port, secret)


def _masked_path(host: str, path: str, *, mask_path: bool) -> tuple[str, bool]:
    """``path`` with every path parameter value masked, and (with ``mask_path``) every
    segment that looks like a token or follows a known service's secret route; and whether
    a masked segment or parameter looked like a credential."""
    # a segment is its name and its parameters: "notify;token=abc" is "notify", [("token", "abc")]
    split = [segment.split(";") for segment in path.split("/")]
    segments = [name for name, *_ in split]
    params = [[_parameter(text) for text in rest] for _, *rest in split]
    if mask_path:
        secret_from = _secret_path_start(host, segments)
        segments = [
            MASK if (n >= secret_from and segment) or is_token(segment) else segment
            for n, segment in enumerate(segments)
        ]
    masked = "/".join(
        "".join([segment, *(f";{_query_name(name, value)}={MASK}" for name, value in pairs)])
        for segment, pairs in zip(segments, params, strict=True)
    )
    secret_params = any(_secret_pair(pair) for pairs in params for pair in pairs)
    return masked, MASK in segments or secret_params


def _unparsed(url: str) -> RedactedUrl:
    """What is safe to say of a URL ``urlsplit`` cannot read: its scheme, and whether its
    authority shows userinfo (True) or not (None: a secret may be anywhere in it)."""
    start = _URL_START.match(url.lstrip(_C0_OR_SPACE))
    scheme = start["scheme"].lower() if start and start["scheme"] else None
    has_userinfo = start is not None and "@" in start["authority"]
    return RedactedUrl(None, scheme, None, None, has_credentials=True if has_userinfo else None)


def is_token(text: str) -> bool:
    """Whether a path segment (or a bare query value) looks like a generated secret.

    >>> [is_token(s) for s in ("notify", "T0123ABCD", "0f8fad5b-d9cb-469f-a165-70867728950e")]
    [False, False, True]
    """
    return bool(_TOKEN_SEGMENT.fullmatch(text)) and not PLAIN_WORD.fullmatch(text)


def _parameter(text: str) -> tuple[str, str]:
    """A path parameter as parse_qsl gives a query pair: ``token=abc`` is ("token", "abc"),
    a bare ``abc`` is ("abc", "")."""
    name, _, value = text.partition("=")
    return unquote(name), unquote(value)


def _secret_pair(pair: tuple[str, str]) -> bool:
    """Whether a query pair or path parameter holds a credential: a non-empty value under a
    credential name, or a bare value (``?s3cr3t``) that looks like a token."""
    name, value = pair
    return credential_name(name) if value else is_token(name)


def _query_name(name: str, value: str) -> str:
    """A query name is kept when it looks like a name; a bare value (``?s3cr3t``) is masked."""
    return name if value and _QUERY_NAME.fullmatch(name) else MASK
