"""Credentials: `/users/me` for every configured credential, identified by name and fingerprint.

The collecting credential and every audited one answer `/users/me` (the audited ones make
no other call). A token is never stored: a row carries the configured name and the token's
HMAC fingerprint, then role, access, expiry and last use as parsed by
`toolkit.collect.identity.parse_identity` (lenient: what it cannot read lands in `problems`).

>>> rows = map_credential("ci", client.me(), token=config.token,      # doctest: +SKIP
...                       fingerprints=fingerprints)
>>> rows["credentials"][0]["role"]                                   # doctest: +SKIP
'viewer'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields
from toolkit.collect.identity import parse_identity

if TYPE_CHECKING:
    from toolkit.api import RequestError, Secret
    from toolkit.collect.conform import Rows
    from toolkit.snapshot.redaction import Fingerprinter

__all__ = ["ENDPOINT", "map_credential", "map_failed_credential"]

ENDPOINT = "users.me"
_USER = ("id", "email", "name", "created_at", "api_key")
_KEY = ("id", "name", "role", "access", "resources", "created_at", "expires_at", "last_used_at")


def map_credential(
    name: str, payload: object, *, token: Secret, fingerprints: Fingerprinter
) -> Rows:
    """`/users/me` of credential `name` -> `credentials` and `credential_resources` rows."""
    conformer = Conformer(ENDPOINT, Owner())
    identity = parse_identity(payload)
    me = payload if isinstance(payload, dict) else {}
    key = me.get("api_key") if isinstance(me.get("api_key"), dict) else {}
    unknown = unknown_fields(me, _USER)
    if key:
        unknown["api_key"] = unknown_fields(key, _KEY)
    values = {
        "name": name,
        "token_fingerprint": fingerprints.of(token.reveal()),
        "is_api_key": identity.is_api_key,
        "key_id": identity.key_id,
        "key_name": identity.key_name,
        "role": identity.role,
        "access": identity.access,
        "user_id": identity.user_id,
        "created_at": identity.created_at,
        "expires_at": identity.expires_at,
        "last_used_at": identity.last_used_at,
        "problems": list(identity.problems),
        "extra": extra_json(unknown),
    }
    resources = (
        {"credential_name": name, "key_id": identity.key_id}
        | {"resource_type": kind, "resource_id": ident}
        for kind, ident in identity.resources
    )
    return {
        "credentials": conformer.rows("credentials", [values]),
        "credential_resources": conformer.rows("credential_resources", resources),
        "collection_errors": conformer.drift_rows(),
    }


def map_failed_credential(
    name: str, error: RequestError, *, token: Secret, fingerprints: Fingerprinter
) -> Rows:
    """The row of an audited credential whose `/users/me` failed (revoked, expired...)."""
    problem = f"/users/me failed: {error.type} (status {error.status}): {error.message}"
    values: dict[str, Any] = {
        "name": name,
        "token_fingerprint": fingerprints.of(token.reveal()),
        "problems": [token.scrub(problem)[:300]],
    }
    return {"credentials": Conformer(ENDPOINT, Owner()).rows("credentials", [values])}
