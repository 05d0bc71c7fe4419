"""Secrets that their value gives away, whatever the variable holding them is called.

A JSON Web Token, a PEM private key or a token in a provider's documented format (a live
payment key, a cloud access key id, a chat or source-host token) is a credential even in a
variable named ``CONFIG`` or ``NOTES``. :func:`secret_kind` names the kind of the first one
it finds in a text, or returns ``None``; collection stores that name, never the value. The
formats are those secret scanners (gitleaks, detect-secrets) recognise, kept compact; each
kind is one row of :data:`KINDS`, in the order they are tried.

Look-alikes are no secret: public keys and certificates, publishable keys (``pk_live_``), a
JWT whose claims say it is the public ``anon`` role, hashes, UUIDs, commit SHAs, and
placeholders such as ``AKIAXXXXXXXXXXXXXXXX``.

>>> secret_kind("token=ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF2hJ4")
'github_token'
>>> secret_kind("pk_live_51HxYzAbCdEfGhIjKlMnOpQr") is None
True
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["KINDS", "NO_KIND", "SecretKind", "secret_kind"]

NO_KIND = "none"
"""What ``variables.value_kind`` holds for a value read and recognised as no kind (null there
means the value was not read)."""

_MIN_DISTINCT = 6
"""A token's variable part with fewer distinct characters is a placeholder (``xxxx``, ``0000``)."""
_MIN_KEY_BODY = 64
"""Base64 characters a PEM private key's body needs: a header alone is an example, not a key."""


@dataclass(frozen=True, slots=True)
class SecretKind:
    """One kind: its name (stored in ``variables.value_kind``), what it is, and its pattern.

    The pattern's group ``body`` is the part that varies (one that looks like a placeholder
    is none: :func:`_placeholder`); ``accept`` judges a match further
    (a JWT's header must decode to JSON naming its algorithm).
    """

    name: str
    doc: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] | None = None


def _b64url_json(segment: str) -> object:
    padded = segment + "=" * (-len(segment) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError too
        return None


def _jwt(match: re.Match[str]) -> bool:
    """A header naming its algorithm, and claims that are not the public ``anon`` role (a
    hosted database's anonymous key is a JWT meant for browsers)."""
    header, claims = _b64url_json(match["header"]), _b64url_json(match["claims"])
    if not isinstance(header, dict) or "alg" not in header:
        return False
    return not (isinstance(claims, dict) and claims.get("role") == "anon")


def _private_key(match: re.Match[str]) -> bool:
    body = match["body"].replace("\\n", "")  # a key in one line, its newlines escaped
    return len(re.findall(r"[A-Za-z0-9+/]", body)) >= _MIN_KEY_BODY


def _placeholder(body: str) -> bool:
    """Too few distinct characters (``AKIAXXXXXXXXXXXXXXXX``, ``sk_live_0000000000``), or
    words rather than random text: no two of upper case, lower case and digits
    (``glpat-your-access-token-here``). A random token of 16 or more characters has both."""
    classes = (str.isupper, str.islower, str.isdigit)
    mixed = sum(any(test(c) for c in body) for test in classes) >= 2
    return len(set(body)) < _MIN_DISTINCT or not mixed


def _kind(
    name: str, doc: str, pattern: str, accept: Callable[[re.Match[str]], bool] | None = None
) -> SecretKind:
    return SecretKind(name, doc, re.compile(pattern), accept)


KINDS: tuple[SecretKind, ...] = (
    _kind(
        "private_key",
        "a PEM private key (PKCS#1, PKCS#8, EC, OpenSSH, PGP); not a public key or certificate",
        r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?P<body>.*?)-----END ",
        _private_key,
    ),
    _kind(
        "jwt",
        "a JSON Web Token: three base64url segments, the first a JSON header with `alg`",
        r"(?<![A-Za-z0-9_-])(?P<header>eyJ[A-Za-z0-9_-]{10,})\.(?P<claims>eyJ[A-Za-z0-9_-]{4,})"
        r"\.(?P<body>[A-Za-z0-9_-]{16,})(?![A-Za-z0-9_-])",
        _jwt,
    ),
    _kind(
        "payment_live_key",
        "a live secret or restricted payment key (`sk_live_`, `rk_live_`); `pk_live_` is public",
        r"(?<![A-Za-z0-9])[sr]k_live_(?P<body>[A-Za-z0-9]{10,247})(?![A-Za-z0-9])",
    ),
    _kind(
        "cloud_access_key",
        "a cloud access key id (`AKIA` long-term, `ASIA` temporary, + 16 upper-case letters "
        "or digits): its secret is usually beside it",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA)(?P<body>[A-Z0-9]{16})(?![A-Za-z0-9])",
    ),
    _kind(
        "chat_token",
        "a chat workspace token: bot, user, app or configuration (`xoxb-`, `xoxp-`, `xapp-`, ...)",
        r"(?<![A-Za-z0-9])(?:xox[abeoprs]|xapp)-(?P<body>[0-9]+-[A-Za-z0-9-]{10,})",
    ),
    _kind(
        "github_token",
        "a source-host token: personal, OAuth, user-to-server, server-to-server or refresh "
        "(`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) or fine-grained (`github_pat_`)",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_|github_pat_)(?P<body>[A-Za-z0-9_]{36,255})"
        r"(?![A-Za-z0-9_])",
    ),
    _kind(
        "gitlab_token",
        "a source-host personal, project or group access token (`glpat-`)",
        r"(?<![A-Za-z0-9_-])glpat-(?P<body>[A-Za-z0-9_-]{20,})",
    ),
)


def secret_kind(text: str) -> str | None:
    """The name of the first kind of :data:`KINDS` that ``text`` holds, else ``None``.

    >>> secret_kind("-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n") is None
    True
    >>> secret_kind("AKIA" + "Q3EGRVKL7ZN2MH5T")
    'cloud_access_key'
    """
    for kind in KINDS:
        for match in kind.pattern.finditer(text):
            if _placeholder(match["body"]):
                continue
            if kind.accept is None or kind.accept(match):
                return kind.name
    return None
