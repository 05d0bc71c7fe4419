"""Keyed fingerprints and URL redaction: how secrets are described without being stored.

A variable value or a token never reaches the store. What does is its HMAC-SHA256
fingerprint under a local key that lives outside the store, so that rotation and reuse
can be audited (same fingerprint, same value) while the store alone reveals nothing.

The key comes from ``$PLATFORM_AUDIT_HMAC_KEY`` or from a key file (``Settings.hmac_key_file``)
created on first use with mode 0600; a key file that group or others can read is refused::

    fingerprints = load_fingerprinter(settings.hmac_key_file, store_root=settings.store_url)
    fingerprints.of("s3cr3t")          # 64 hex digits, stable for this key

Webhook URLs keep scheme, host, port and path; userinfo is dropped and query values are
masked::

    >>> redact_url("https://bot:pw@hooks.example.org:8443/in?token=abc&channel=ops").url
    'https://hooks.example.org:8443/in?token=***&channel=***'
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
from urllib.parse import parse_qsl, urlsplit

from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ENV_HMAC_KEY",
    "MASK",
    "Fingerprinter",
    "RedactedUrl",
    "load_fingerprinter",
    "redact_url",
]

ENV_HMAC_KEY = "PLATFORM_AUDIT_HMAC_KEY"
MASK = "***"
_MIN_KEY_CHARS = 16
_KEY_BYTES = 32
_QUERY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-\[\]]{0,31}")
# Query or field names that usually carry a credential.
SECRET_NAME = re.compile(
    r"(secret|passw|pwd|token|credential|private|api[_-]?key|access[_-]?key|auth|sig|signature)",
    re.IGNORECASE,
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


@dataclass(frozen=True, slots=True)
class RedactedUrl:
    """A URL safe to store, with the facts audits need about what was removed."""

    url: str | None
    scheme: str | None
    host: str | None
    port: int | None
    has_credentials: bool


def redact_url(url: str) -> RedactedUrl:
    """Drop userinfo and fragment, mask every query value; keep scheme, host, port, path.

    ``has_credentials`` is true when the URL carried userinfo or a query parameter whose
    name suggests a credential (``token``, ``key``, ``secret``, ``sig``...).

    >>> redact_url("https://deploy:pw@hooks.example.net/notify").has_credentials
    True
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return RedactedUrl(None, None, None, None, has_credentials=False)
    if not parts.scheme or not parts.hostname:
        # not an absolute URL: nothing of it is known to be safe to keep
        return RedactedUrl(None, parts.scheme or None, None, None, has_credentials=False)
    query = parse_qsl(parts.query, keep_blank_values=True)
    secret_query = any(SECRET_NAME.search(name) for name, _ in query)
    host = parts.hostname
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    masked = "&".join(f"{_query_name(name, value)}={MASK}" for name, value in query)
    text = f"{parts.scheme}://{netloc}{parts.path}"
    if masked:
        text += f"?{masked}"
    has_userinfo = "@" in parts.netloc
    return RedactedUrl(text, parts.scheme or None, host, port, has_userinfo or secret_query)


def _query_name(name: str, value: str) -> str:
    """A query name is kept when it looks like a name; a bare value (``?s3cr3t``) is masked."""
    return name if value and _QUERY_NAME.fullmatch(name) else MASK
