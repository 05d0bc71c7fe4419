"""Who is calling and what they may see or change (spec part 5, docs/contracts.md).

Tokens are looked up by SHA-256 only. A limited key sees a resource when the resource or
one of its ancestors is among the key's resources ("in scope"); ancestors of in-scope
resources are "navigable": they show up in hierarchy lists but their own variables,
webhooks, volumes and buckets stay hidden. Anything else answers 404, as if absent.

    caller = authenticate(world, request.headers.get("authorization"))
    caller.require_change()          # 403 read only for a viewer
    if not caller.sees(world.owner_chain("service", service_id)): raise not_found("service")
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.sim.errors import forbidden, read_only, unauthorized

if TYPE_CHECKING:
    from toolkit.sim.world import ApiKey, World

__all__ = ["Caller", "authenticate"]


@dataclass(frozen=True)
class Caller:
    """The authenticated key (or session) with its scope resolved for this request."""

    key: ApiKey
    scope: frozenset[str]
    navigable: frozenset[str]

    @property
    def limited(self) -> bool:
        return self.key.access == "limited"

    @property
    def sees_values(self) -> bool:
        """Viewers cannot read variable values (spec part 5, roles)."""
        return self.key.role != "viewer"

    def sees(self, chain: tuple[str, ...]) -> bool:
        """In scope: the resource (chain[0]) or one of its ancestors is a key resource."""
        if not chain:
            return False
        return not self.limited or any(item in self.scope for item in chain)

    def navigates(self, chain: tuple[str, ...]) -> bool:
        """In scope, or an ancestor of something in scope (visible in hierarchy lists)."""
        return self.sees(chain) or (bool(chain) and chain[0] in self.navigable)

    def require_change(self) -> None:
        if self.key.role == "viewer":
            raise read_only()

    def require_delete(self) -> None:
        self.require_change()
        if self.key.role != "admin":
            raise forbidden("Deleting needs an admin key; this key's role is editor")


def authenticate(world: World, header: str | None) -> Caller:
    """Resolve the bearer token, judge expiry against the simulated clock, stamp last use."""
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("Send 'Authorization: Bearer <token>' with an API key or access token")
    key = world.keys.get(hashlib.sha256(token.strip().encode()).hexdigest())
    if key is None:
        raise unauthorized("The API key or access token is not valid")
    if key.revoked_at is not None and key.revoked_at <= world.now:
        raise unauthorized("The API key has been revoked")
    if key.expires_at is not None and key.expires_at <= world.now:
        raise unauthorized("The API key has expired")
    key.last_used_at = world.now
    scope = frozenset(resource_id for _, resource_id in key.resources)
    navigable: set[str] = set()
    for level, resource_id in key.resources:
        navigable.update(world.owner_chain(level, resource_id)[1:])
    return Caller(key, scope, frozenset(navigable))
