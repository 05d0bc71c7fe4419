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
userinfo and credential values, since crash messages quote connection strings::

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

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CREDENTIAL_WORDS",
    "ENV_HMAC_KEY",
    "MASK",
    "REFERENCE_MARK",
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
MASK = "***"
REFERENCE_MARK = "\ue000"
"""What stands for a ``${{...}}`` reference in text given to :func:`writes_credential`: a
private-use character, never in a value's own text, that no pattern reads as a letter."""
_MIN_KEY_CHARS = 16
_KEY_BYTES = 32
_KEY_ID_LABEL = "platform-audit: the id of this fingerprint key"
_QUERY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-\[\]]{0,31}")
# Field names (of unknown JSON members) that usually carry a credential: searched, so broad.
SECRET_NAME = re.compile(
    r"(secret|passw|pwd|token|credential|private|api[_-]?key|access[_-]?key|auth|sig|signature)",
    re.IGNORECASE,
)
# URL query names are judged word by word (`access_token`, `apiKey`, `X-Amz-Signature`), so
# `?key=` counts while `?channel=` or `?keyword=` do not; `code` only as the whole name
# (Azure Functions' `?code=`), not in `?country_code=`.
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
CREDENTIAL_WORDS = frozenset(
    {
        "accesskey", "accesstoken", "apikey", "apitoken", "auth", "authorization",
        "authtoken", "clientsecret", "credential", "hmac", "jwt", "key", "pass",
        "passphrase", "passwd", "password", "privatekey", "pwd", "secret", "secretkey",
        "sig", "signature", "token",
    }
)  # fmt: skip
# A path segment is a token when it is 16 characters or longer, made of the characters tokens
# use, and not a plain lower-case word (`deployment-notifications`); shorter segments
# (`v1`, `T0123ABCD`, a 12-character id) are kept.
_TOKEN_SEGMENT = re.compile(r"[A-Za-z0-9._~:@=+%-]{16,}")
_WORD_SEGMENT = re.compile(r"[a-z]+([._-][a-z]+)*")
# The start of a URL as urlsplit reads it (after the control characters and spaces it
# strips): a scheme only where "//" follows (in "t0k3n:x@host" the "scheme" is a secret), and
# the authority, up to the first "/", "?" or "#", where an "@" means userinfo.
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_URL_START = re.compile(r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):)?//(?P<authority>[^/?#]*)")
# In free text: a URL's userinfo (up to its last `@`, so `p@ss` goes whole); an HTTP
# `Bearer`/`Basic` credential; a `name=value`, `name: value` or JSON `"name": "value"` pair
# and a `--name value` flag whose name has a credential word.
_USERINFO = re.compile(r"(?<=://)[^/\s]+@")
_AUTH_SCHEME = re.compile(r"\b(?P<scheme>Bearer|Basic) +(?P<value>[A-Za-z0-9._~+/=-]{8,})")
_PAIR = re.compile(
    r"(?P<lead>[?&;]|(?<![\w-])-D|\b)(?P<name>[A-Za-z][A-Za-z0-9_.-]*)"  # -D: a Java property
    r"(?P<sep>=|[\"']?[ \t]*:[ \t]*[\"']?)(?!//)(?P<value>[^\s&;,'\"]+)"  # not a URL's ://
)
_FLAG = re.compile(
    r"(?P<flag>(?<![\w-])--?(?P<name>[A-Za-z][A-Za-z0-9_.-]*)) +(?P<value>[^\s-]\S*)"
)


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
    # a segment is its name and its parameters: "notify;token=abc" is "notify", [("token", "abc")]
    split = [segment.split(";") for segment in parts.path.split("/")]
    segments = [name for name, *_ in split]
    params = [[_parameter(text) for text in rest] for _, *rest in split]
    if mask_path:
        secret_from = _secret_path_start(host, segments)
        segments = [
            MASK if (n >= secret_from and segment) or is_token(segment) else segment
            for n, segment in enumerate(segments)
        ]
    path = "/".join(
        "".join([segment, *(f";{_query_name(name, value)}={MASK}" for name, value in pairs)])
        for segment, pairs in zip(segments, params, strict=True)
    )
    masked = "&".join(f"{_query_name(name, value)}={MASK}" for name, value in query)
    text = f"{parts.scheme}://{netloc}{path}"
    if masked:
        text += f"?{masked}"
    has_userinfo = "@" in parts.netloc
    secret_path = MASK in segments
    secret_params = any(_secret_pair(pair) for pairs in params for pair in pairs)
    return RedactedUrl(
        text,
        parts.scheme or None,
        host,
        port,
        has_userinfo or secret_query or secret_path or secret_params,
    )


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
    return bool(_TOKEN_SEGMENT.fullmatch(text)) and not _WORD_SEGMENT.fullmatch(text)


def credential_name(name: str) -> bool:
    """Whether a query or keyword name has a credential word, judged word by word.

    >>> [credential_name(n) for n in ("access_token", "apiKey", "code", "channel", "zip_code")]
    [True, True, True, False, False]
    """
    if name.lower() == "code":
        return True
    for word in _NAME_WORD.findall(name):
        word = word.lower()
        if word in CREDENTIAL_WORDS or (word.endswith("s") and word[:-1] in CREDENTIAL_WORDS):
            return True
    return name.lower().replace("-", "").replace("_", "") in CREDENTIAL_WORDS


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


def scrub_text(text: str) -> str:
    """Free text without URL userinfo or credential values: ``scheme://***@host``,
    ``Bearer ***``, ``password=***``, ``password: ***``, ``"token": "***"``, ``?token=***``
    and ``--api-key ***`` (names as :func:`credential_name` judges them; ``code`` only in a
    URL query, so ``exit code=137`` stays; a ``Basic`` or ``Bearer`` followed by a plain
    lower-case word is prose, and stays).

    >>> scrub_text("dial https://h.example/x?code=abc&v=1: Password=hunter2; exit code=137")
    'dial https://h.example/x?code=***&v=1: Password=***; exit code=137'
    >>> scrub_text('401 for Authorization: Bearer eyJhbGciOi.x9; body {"token": "t0k3n"}')
    '401 for Authorization: *** ***; body {"token": "***"}'
    >>> scrub_text("./worker --api-key k3y --queue jobs -v")
    './worker --api-key *** --queue jobs -v'
    """
    text = _AUTH_SCHEME.sub(_scrub_scheme, _USERINFO.sub(f"{MASK}@", text))
    return _FLAG.sub(_scrub_flag, _PAIR.sub(_scrub_pair, text))


def writes_credential(text: str) -> bool:
    """Whether ``text`` writes out a credential where :func:`scrub_text` finds one: a URL's
    password, a ``Bearer`` or ``Basic`` credential, or the value of a pair or flag with a
    credential word in its name. A URL's user name alone is not one (a Sentry DSN's public
    key sits there).

    Each :data:`REFERENCE_MARK` in ``text`` stands for a ``${{...}}`` reference: a credential
    made of references only (``postgres://app:${{DB_PASSWORD}}@db``) is not written out, as
    the platform resolves it from the variable that holds it.

    >>> writes_credential("postgres://app:s3cr3t@db:5432/app")
    True
    >>> ref = REFERENCE_MARK
    >>> [writes_credential(t) for t in (f"postgres://app:{ref}@{ref}:5432/app",
    ...     f"https://{ref}.example/hook?token={ref}", "password=hunter2", "Bearer changeme")]
    [False, False, True, False]
    """

    def written(part: str) -> bool:
        return any(c.isalnum() for c in part)  # REFERENCE_MARK is none

    for match in _USERINFO.finditer(text):
        if written(match[0][:-1].partition(":")[2]):
            return True
    if any(_credential_scheme(m) and written(m["value"]) for m in _AUTH_SCHEME.finditer(text)):
        return True
    text = _USERINFO.sub(f"{MASK}@", text)  # as scrub_text reads pairs: without userinfo
    if any(_credential_pair(m) and written(m["value"]) for m in _PAIR.finditer(text)):
        return True
    return any(_credential_flag(m) and written(m["value"]) for m in _FLAG.finditer(text))


# What scrub_text masks and writes_credential looks for, match by match:
def _credential_scheme(match: re.Match[str]) -> bool:
    return not _WORD_SEGMENT.fullmatch(match["value"])  # "Bearer token" is prose


def _credential_pair(match: re.Match[str]) -> bool:
    name = match["name"]
    return credential_name(name) and (name.lower() != "code" or match["lead"] in ("?", "&"))


def _credential_flag(match: re.Match[str]) -> bool:
    return credential_name(match["name"]) and match["name"].lower() != "code"


def _scrub_scheme(match: re.Match[str]) -> str:
    return f"{match['scheme']} {MASK}" if _credential_scheme(match) else match[0]


def _scrub_pair(match: re.Match[str]) -> str:
    if not _credential_pair(match):
        return match[0]
    return f"{match['lead']}{match['name']}{match['sep']}{MASK}"


def _scrub_flag(match: re.Match[str]) -> str:
    return f"{match['flag']} {MASK}" if _credential_flag(match) else match[0]
