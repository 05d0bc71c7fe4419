"""Verified key scope: what an audited key really sees, against what `/users/me` claims.

`/users/me` gives a key's role and the resources it is limited to; the platform promises
that everything else answers 404 (spec part 5, rule 6). With
`CrawlOptions(verify_scope=True)` the crawl takes each audited key whose claim is
readable and asks it `GET /services/list` for a few environments inside its claimed reach
and a few outside, then records for each probed environment and each of its services
whether it was expected visible and whether it was (`credential_probes` rows). Check
KEY009 reports every difference. The sample is seeded by the key's name, so while the
inventory stays the same, each snapshot probes the same resources and a change shows.

A limited key still sees the environment of a listed service (to navigate to it), with
only that service in the list; that is expected, not a difference.

A key whose access is `all` reaches everything its creator can access (spec 2.11), which
the crawl knows only when the creator is the collecting credential's user: the inventory
is then that user's. A key of another user (or of a user not known) may rightly be refused
anything the collector sees, and see nothing more there, so its probes are recorded with
`expected_visible` null (status `unknown`): not judged.

>>> claim = Claim("ci", "limited", frozenset({("service", "s1")}))
>>> claim.reaches(("t1", "p1", "e1", "s1")), claim.reaches(("t1", "p1", "e1", "s2"))
(True, False)
>>> Claim("dash", "all", frozenset(), user_id="u2").judged_by("u1")
False
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.api import NotFound, RequestError
from toolkit.collect.conform import Conformer, Owner

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from toolkit.api import AsyncPlatformClient
    from toolkit.collect.conform import Row, Rows

__all__ = ["DEFAULT_SAMPLE", "Claim", "claims_from_rows", "probe_scopes"]

ENDPOINT = "services.list"
DEFAULT_SAMPLE = 3
"""Environments probed inside and (as many) outside each key's claimed reach."""
_LEVELS = ("team", "project", "environment", "service")
_ROLES = ("viewer", "editor", "admin")


@dataclass(frozen=True, slots=True)
class Claim:
    """A key's claimed reach: `all`, or the (level, id) resources it is limited to;
    `user_id` is its creator's."""

    name: str
    access: str
    resources: frozenset[tuple[str, str]]
    user_id: str | None = None

    def judged_by(self, collector_user: str | None) -> bool:
        """Whether a crawl by `collector_user` knows what the claim reaches: a limited one
        names its resources; `all` is its creator's reach, known only as the collector's."""
        return self.access != "all" or (self.user_id is not None and self.user_id == collector_user)

    def reaches(self, chain: Sequence[str | None]) -> bool:
        """In scope: `chain` is (team, project, environment[, service]) ids."""
        if self.access == "all":
            return True
        return any(
            (level, ident) in self.resources for level, ident in zip(_LEVELS, chain, strict=False)
        )

    def navigates(self, environment: Sequence[str | None], services: Iterable[str]) -> bool:
        """The environment answers its service list: in scope, or holds a listed service."""
        return self.reaches(environment) or any(("service", s) in self.resources for s in services)


def claims_from_rows(rows: Mapping[str, Sequence[Row]]) -> dict[str, Claim]:
    """Readable claims from `credentials` and `credential_resources` rows; others are left out.

    A claim is readable when the role and access are known and a limited key lists at
    least one resource: anything else KEY008 reports, and nothing is guessed here.
    """
    listed: defaultdict[str, set[tuple[str, str]]] = defaultdict(set)
    for item in rows.get("credential_resources", ()):
        if item.get("resource_type") in _LEVELS and item.get("resource_id"):
            listed[item["credential_name"]].add((item["resource_type"], item["resource_id"]))
    claims = {}
    for cred in rows.get("credentials", ()):
        name, access = cred.get("name"), cred.get("access")
        if not name or cred.get("role") not in _ROLES or access not in ("all", "limited"):
            continue
        if access == "limited" and not listed[name]:
            continue
        claims[name] = Claim(name, access, frozenset(listed[name]), cred.get("user_id"))
    return claims


@dataclass(frozen=True, slots=True)
class _Environment:
    team_id: str
    project_id: str
    id: str
    services: tuple[str, ...]  # ids of its services, as the collector saw them

    @property
    def chain(self) -> tuple[str, str, str]:
        return (self.team_id, self.project_id, self.id)

    @property
    def owner(self) -> Owner:
        return Owner(self.team_id, self.project_id, self.id)


def _inventory(rows: Mapping[str, Sequence[Row]]) -> list[_Environment]:
    services: defaultdict[str, list[str]] = defaultdict(list)
    for service in rows.get("services", ()):
        services[service["environment_id"]].append(service["id"])
    found = [
        _Environment(
            env["team_id"], env["project_id"], env["id"], tuple(sorted(services[env["id"]]))
        )
        for env in rows.get("environments", ())
        if env.get("team_id") and env.get("project_id") and env.get("id")
    ]
    return sorted(found, key=lambda env: env.id)


def _sample(claim: Claim, inventory: list[_Environment], size: int) -> list[_Environment]:
    """Up to `size` environments the key should see and `size` it should not."""
    rng = random.Random(claim.name)  # a stable sample across snapshots, not a secret
    inside = [e for e in inventory if claim.navigates(e.chain, e.services)]
    outside = [e for e in inventory if e not in inside]
    return [
        *rng.sample(inside, min(size, len(inside))),
        *rng.sample(outside, min(size, len(outside))),
    ]


async def _probe_credential(
    claim: Claim,
    client: AsyncPlatformClient,
    inventory: list[_Environment],
    size: int,
    collector_user: str | None,
) -> list[Row]:
    """`credential_probes` rows of one key: its sampled environments and their services."""
    conformer = Conformer(ENDPOINT, Owner())
    judged = claim.judged_by(collector_user)
    rows: list[dict[str, Any]] = []
    for env in _sample(claim, inventory, size):
        base = {"credential_name": claim.name, "endpoint": ENDPOINT, **env.owner.columns()}
        expected_env = claim.navigates(env.chain, env.services) if judged else None
        try:
            answer = await client.list_services(env.team_id, env.project_id, env.id)
        except NotFound:
            answer = None
        except RequestError as error:
            rows.append(
                {**base, "resource_type": "environment", "resource_id": env.id}
                | {"expected_visible": expected_env, "status": "error"}
                | {"http_status": error.status, "error_type": error.type}
            )
            continue
        rows.append(_row(base, "environment", env.id, expected_env, answer is not None))
        seen = {
            s["id"] for s in answer or () if isinstance(s, dict) and isinstance(s.get("id"), str)
        }
        known = set(env.services)
        for service_id in sorted(known | seen):
            expected = (
                claim.reaches((*env.chain, service_id)) if judged and service_id in known else None
            )
            rows.append(
                _row(
                    base | {"service_id": service_id},
                    "service",
                    service_id,
                    expected,
                    service_id in seen,
                )
            )
    return conformer.rows("credential_probes", rows)


def _row(base: Row, kind: str, ident: str, expected: bool | None, observed: bool) -> Row:
    status = "unknown" if expected is None else "match" if expected == observed else "mismatch"
    return base | {
        "resource_type": kind,
        "resource_id": ident,
        "expected_visible": expected,
        "observed_visible": observed,
        "status": status,
    }


async def probe_scopes(
    rows: Mapping[str, Sequence[Row]],
    audited_rows: Iterable[Mapping[str, Sequence[Row]]],
    clients: Mapping[str, AsyncPlatformClient],
    *,
    size: int = DEFAULT_SAMPLE,
) -> Rows:
    """Probe every audited key with a readable claim; `rows` is the crawl's inventory, its
    `credentials` the collecting credential's row (whose `user_id` tells whose it is).

    >>> probed = await probe_scopes(crawl_rows, audited_rows, clients)   # doctest: +SKIP
    >>> {r["status"] for r in probed["credential_probes"]}                # doctest: +SKIP
    {'match'}
    """
    claims: dict[str, Claim] = {}
    for found in audited_rows:
        claims.update(claims_from_rows(found))
    inventory = _inventory(rows)
    users = {cred.get("user_id") for cred in rows.get("credentials", ())}
    collector_user = users.pop() if len(users) == 1 else None
    probes = [
        _probe_credential(claim, clients[name], inventory, size, collector_user)
        for name, claim in sorted(claims.items())
        if name in clients
    ]
    results = await asyncio.gather(*probes)
    return {"credential_probes": [row for result in results for row in result]}
