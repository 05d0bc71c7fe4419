"""Secrets recognised by their value (`secret_kind`), and look-alikes that are not secrets.

Every sample is assembled here from a seeded generator, so this file holds no string a
secret scanner would report, and no real credential.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

import pytest

from toolkit.snapshot.secret_kinds import KINDS, secret_kind

_RNG = random.Random(34)
_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, length: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _jwt(claims: dict[str, object], header: dict[str, object] | None = None) -> str:
    head = _b64url(header if header is not None else {"alg": "HS256", "typ": "JWT"})
    return f"{head}.{_b64url(claims)}.{_random(_ALNUM + '-_', 43)}"


def _pem(label: str, newline: str = "\n") -> str:
    body = base64.b64encode(_RNG.randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return newline.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


LIVE = "live_"  # split from its prefix: no literal here looks like a key
SECRETS: dict[str, list[str]] = {
    "private_key": [
        _pem("PRIVATE KEY"),
        _pem("RSA PRIVATE KEY"),
        _pem("EC PRIVATE KEY"),
        _pem("OPENSSH PRIVATE KEY"),
        _pem("ENCRYPTED PRIVATE KEY"),
        _pem("PGP PRIVATE KEY BLOCK"),
        _pem("PRIVATE KEY", newline="\\n"),  # one line, newlines escaped, as in a .env file
    ],
    "jwt": [
        _jwt({"sub": "42", "role": "service_role"}),
        "Bearer " + _jwt({"sub": "ci", "exp": 1900000000}, {"alg": "RS256", "kid": "k1"}),
    ],
    "payment_live_key": [
        "sk_" + LIVE + _random(_ALNUM, 24),
        "rk_" + LIVE + _random(_ALNUM, 99),
        "PAYMENTS=sk_" + LIVE + "CANARY0123456789abcdef",  # the simulator's canary form
    ],
    "cloud_access_key": [
        "AKIA" + _random(string.ascii_uppercase + string.digits, 16),
        "ASIA" + _random(string.ascii_uppercase + string.digits, 16),
        "aws_access_key_id = AKIA" + "Q3EGRVKL7ZN2MH5T" + "\naws_region = eu-west-1",
    ],
    "chat_token": [
        f"xoxb-{_random(string.digits, 12)}-{_random(string.digits, 13)}-{_random(_ALNUM, 24)}",
        f"xoxp-{_random(string.digits, 12)}-{_random(string.digits, 12)}-"
        f"{_random(string.digits, 12)}-{_random(string.hexdigits.lower(), 32)}",
        f"xapp-1-A{_random(string.ascii_uppercase + string.digits, 10)}-"
        f"{_random(string.digits, 13)}-{_random('0123456789abcdef', 64)}",
    ],
    "github_token": [
        prefix + _random(_ALNUM, 36) for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    ]
    + ["github_pat_" + _random(_ALNUM, 22) + "_" + _random(_ALNUM, 59)],
    "gitlab_token": ["glpat-" + _random(_ALNUM + "-_", 20)],
}

NOT_SECRETS: dict[str, str] = {
    "public key": _pem("PUBLIC KEY"),
    "RSA public key": _pem("RSA PUBLIC KEY"),
    "certificate": _pem("CERTIFICATE"),
    "certificate request": _pem("CERTIFICATE REQUEST"),
    "ssh public key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _random(_ALNUM, 43) + " ci@host",
    "private key header, example body": (
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----"
    ),
    "publishable payment key": "pk_" + LIVE + _random(_ALNUM, 24),
    "test-mode payment key": "sk_test_" + _random(_ALNUM, 24),
    "placeholder payment key": "sk_" + LIVE + "0" * 24,
    "placeholder access key": "AKIA" + "X" * 16,
    "placeholder source-host token": "ghp_" + "x" * 36,
    "words for a token": "glpat-your-personal-access-token",
    "words for a chat token": "xoxb-your-bot-token-here",
    "public anonymous JWT": _jwt({"iss": "db", "role": "anon"}),
    "dotted base64 without a JSON header": "eyJ"
    + _random(_ALNUM, 30)
    + ".eyJ"
    + _random(_ALNUM, 30)
    + "."
    + _random(_ALNUM, 43),
    "unsigned JWT": _jwt({"sub": "1"}, {"alg": "none"}).rsplit(".", 1)[0] + ".",
    "sha256 hex": hashlib.sha256(b"release").hexdigest(),
    "md5 hex": hashlib.md5(b"release", usedforsecurity=False).hexdigest(),
    "commit SHA": hashlib.sha1(b"commit", usedforsecurity=False).hexdigest(),
    "UUID": str(uuid.UUID(int=_RNG.getrandbits(128), version=4)),
    "random base64 of innocent length": base64.b64encode(_RNG.randbytes(32)).decode(),
    "access key id inside a longer word": "XAKIA" + "Q3EGRVKL7ZN2MH5T",
    "connection string": "postgres://app@db.internal:5432/app",
    "plain setting": "production",
}


@pytest.mark.parametrize(
    ("kind", "value"),
    [(kind, value) for kind, values in SECRETS.items() for value in values],
    ids=lambda v: v if v in SECRETS else "",
)
def test_a_secret_is_recognised_by_its_value(kind: str, value: str) -> None:
    assert secret_kind(value) == kind
    assert secret_kind(f"note: {value} (rotated)") == kind  # inside other text too


@pytest.mark.parametrize("value", NOT_SECRETS.values(), ids=list(NOT_SECRETS))
def test_a_look_alike_is_no_secret(value: str) -> None:
    assert secret_kind(value) is None


def test_every_kind_has_samples() -> None:
    assert set(SECRETS) == {kind.name for kind in KINDS}


def test_a_public_key_beside_a_private_one_is_the_private_one() -> None:
    assert secret_kind(_pem("PUBLIC KEY") + "\n" + _pem("PRIVATE KEY")) == "private_key"
