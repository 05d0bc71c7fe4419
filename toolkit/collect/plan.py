"""The planner: which calls each discovered resource needs, and how to map their answers.

The crawl discovers the hierarchy as it goes (teams, then projects, environments,
services); for each resource it finds, the planner returns `Job`s: a `Call`, the owner ids
of its rows, and how to turn the answer into rows and further jobs. The same functions
plan a whole crawl from known hierarchy rows (`Planner.plan`), which gives `min_calls`.

Aggregated levels are used where they save calls for the same data: replicas and volumes
once per environment (configurable), variables once at each owner's own level, webhooks
per team (`type=team`) and per project (`type=project`), buckets per team, templates once.

>>> planner = Planner(fingerprints=Fingerprinter(b"k" * 16))          # doctest: +SKIP
>>> len(planner.plan(rows))                                           # doctest: +SKIP
412
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolkit.collect import deployments as deployments_
from toolkit.collect.buckets import map_buckets
from toolkit.collect.calls import Call
from toolkit.collect.conform import Owner
from toolkit.collect.hierarchy import map_environments, map_projects, map_teams
from toolkit.collect.known_values import DEFAULT_MIN_LENGTH, MIN_LENGTH_FLOOR
from toolkit.collect.replicas import map_replica_health, map_replica_list
from toolkit.collect.service_groups import map_service_groups
from toolkit.collect.services import map_services
from toolkit.collect.templates import map_templates
from toolkit.collect.variables import map_variables
from toolkit.collect.volumes import map_volumes
from toolkit.collect.webhooks import map_webhooks

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolkit.collect.conform import Row, Rows
    from toolkit.collect.known_values import KnownValues
    from toolkit.snapshot.redaction import Fingerprinter

__all__ = ["CrawlOptions", "Job", "Planner"]

Level = Literal["team", "project", "environment", "service"]
Outcome = tuple["Rows", list["Job"]]


@dataclass(frozen=True, kw_only=True)
class CrawlOptions:
    """What the crawl collects and at which level it asks.

    `deployment_depth` is how many deployments of each service's history to read (0: only
    the three records the service list carries). `replica_level` and `volume_level` pick
    the level of `/replicas/list` and `/volumes/list`. `verify_scope` makes each audited
    key list the services of a few environments inside and outside its claimed reach
    (`toolkit.collect.scope_probe`, the `credential_probes` table). Free text that repeats a
    variable value the crawl read is masked where the value has `value_mask_min_length`
    characters or more (`toolkit.collect.known_values`).
    """

    deployment_depth: int = 20
    replica_level: Level = "environment"
    volume_level: Literal["team", "project", "environment"] = "environment"
    verify_scope: bool = False
    value_mask_min_length: int = DEFAULT_MIN_LENGTH

    def __post_init__(self) -> None:
        if self.deployment_depth < 0:
            raise ValueError("deployment_depth must be 0 or more")
        if self.replica_level not in ("team", "project", "environment", "service"):
            raise ValueError(f"replica_level {self.replica_level!r} is not a level")
        if self.volume_level not in ("team", "project", "environment"):
            raise ValueError(f"volume_level {self.volume_level!r}: team, project or environment")
        if self.value_mask_min_length < MIN_LENGTH_FLOOR:
            raise ValueError(f"value_mask_min_length must be {MIN_LENGTH_FLOOR} or more")


@dataclass(frozen=True, slots=True)
class Job:
    """A call, the owner of its rows, and `handle(payload) -> (rows, further jobs)`.

    `priority` 0 discovers the hierarchy and runs first; 1 is everything else.
    """

    call: Call
    owner: Owner
    handle: Callable[[Any], Outcome] = field(compare=False)
    priority: int = 1


def _rows_only(mapper: Callable[[Any], Rows]) -> Callable[[Any], Outcome]:
    return lambda payload: (mapper(payload), [])


class Planner:
    """Plans jobs per discovered resource; holds the options and the fingerprint key."""

    def __init__(
        self,
        *,
        fingerprints: Fingerprinter,
        options: CrawlOptions | None = None,
        known: KnownValues | None = None,
    ):
        self.options = options or CrawlOptions()
        self.fingerprints = fingerprints
        self.known = known  # the values read, for the crawl to mask in free text

    def plan(self, rows: Rows) -> list[Call]:
        """Every call a crawl needs for the hierarchy in `rows` (first deployment page only)."""
        jobs = self.roots()
        for team in rows.get("teams", []):
            jobs += self.team(team["id"])
        for project in rows.get("projects", []):
            jobs += self.project(project["team_id"], project["id"])
        for env in rows.get("environments", []):
            jobs += self.environment(Owner(env["team_id"], env["project_id"], env["id"]))
        for service in rows.get("services", []):
            jobs += self.service(service)
        return list(dict.fromkeys(job.call for job in jobs))

    def roots(self) -> list[Job]:
        teams = Job(Call.of("teams.list"), Owner(), self._on_teams, priority=0)
        templates = Job(Call.of("templates.list"), Owner(), _rows_only(map_templates))
        return [teams, templates]

    def team(self, team_id: str) -> list[Job]:
        owner = Owner(team_id=team_id)
        on_projects = lambda p: self._on_projects(p, team_id)  # noqa: E731 - a one-line closure
        jobs = [
            Job(Call.of("projects.list", team_id=team_id), owner, on_projects, priority=0),
            self._variables("team", owner),
            self._webhooks("team", owner),
            Job(
                Call.of("buckets.list", team_id=team_id),
                owner,
                _rows_only(lambda p: map_buckets(p, team_id=team_id)),
            ),
        ]
        return jobs + self._aggregated("team", owner)

    def project(self, team_id: str, project_id: str) -> list[Job]:
        owner = Owner(team_id=team_id, project_id=project_id)
        call = Call.of("environments.list", team_id=team_id, project_id=project_id)
        jobs = [
            Job(call, owner, lambda p: self._on_environments(p, owner), priority=0),
            self._variables("project", owner),
            self._webhooks("project", owner),
        ]
        return jobs + self._aggregated("project", owner)

    def environment(self, owner: Owner) -> list[Job]:
        ids = _ids(owner)
        return [
            Job(Call.of("services.list", **ids), owner, lambda p: self._on_services(p, owner), 0),
            Job(
                Call.of("service_groups.list", **ids),
                owner,
                _rows_only(lambda p: map_service_groups(p, owner=owner)),
            ),
            self._variables("environment", owner),
            *self._aggregated("environment", owner),
        ]

    def service(self, row: Row) -> list[Job]:
        """Jobs of one `services` row: its variables, replica health, deployment history."""
        owner = Owner(row["team_id"], row["project_id"], row["environment_id"], row["id"])
        protected = frozenset(row.get("protected_variables") or ())
        health = Job(
            Call.of("replicas.health", **_ids(owner)),
            owner,
            _rows_only(lambda p: map_replica_health(p, owner=owner)),
        )
        jobs = [self._variables("service", owner, protected), health]
        if self.options.deployment_depth > 0:
            jobs.append(self._deployments(owner, rank=0, cursor=None))
        return jobs + self._aggregated("service", owner)

    # --- the jobs behind the public ones --------------------------------------------------

    def _aggregated(self, level: str, owner: Owner) -> list[Job]:
        """Replicas and volumes, asked once at the configured level."""
        jobs = []
        if self.options.replica_level == level:
            call = Call.of("replicas.list", type=level, **_ids(owner))
            mapper = _rows_only(lambda p: map_replica_list(p, owner=owner))
            jobs.append(Job(call, owner, mapper))
        if self.options.volume_level == level:
            call = Call.of("volumes.list", type=level, **_ids(owner))
            jobs.append(Job(call, owner, _rows_only(lambda p: map_volumes(p, owner=owner))))
        return jobs

    def _variables(self, level: str, owner: Owner, protected: frozenset[str] = frozenset()) -> Job:
        call = Call.of("variables.list", type=level, **_ids(owner))
        fingerprints, known = self.fingerprints, self.known
        return Job(
            call,
            owner,
            _rows_only(
                lambda p: map_variables(
                    p,
                    level=level,
                    owner=owner,
                    fingerprints=fingerprints,
                    protected=protected,
                    known_values=known,
                )
            ),
        )

    def _webhooks(self, level: str, owner: Owner) -> Job:
        call = Call.of("webhooks.list", type=level, **_ids(owner))
        return Job(call, owner, _rows_only(lambda p: map_webhooks(p, level=level, owner=owner)))

    def _deployments(self, owner: Owner, *, rank: int, cursor: str | None) -> Job:
        per_page = min(self.options.deployment_depth - rank, 100)
        call = Call.of("deployments.list", **_ids(owner), per_page=per_page, cursor=cursor)
        return Job(call, owner, lambda page: self._on_deployments(page, owner, rank))

    def _on_teams(self, payload: Any) -> Outcome:
        rows = map_teams(payload)
        return rows, [job for team in rows["teams"] for job in self.team(team["id"])]

    def _on_projects(self, payload: Any, team_id: str) -> Outcome:
        rows = map_projects(payload, team_id=team_id)
        return rows, [job for p in rows["projects"] for job in self.project(team_id, p["id"])]

    def _on_environments(self, payload: Any, owner: Owner) -> Outcome:
        assert owner.team_id is not None and owner.project_id is not None
        rows = map_environments(payload, team_id=owner.team_id, project_id=owner.project_id)
        children = [
            job
            for env in rows["environments"]
            for job in self.environment(Owner(owner.team_id, owner.project_id, env["id"]))
        ]
        return rows, children

    def _on_services(self, payload: Any, owner: Owner) -> Outcome:
        rows = map_services(payload, **_ids(owner))
        return rows, [job for service in rows["services"] for job in self.service(service)]

    def _on_deployments(self, page: Any, owner: Owner, rank: int) -> Outcome:
        wanted = self.options.deployment_depth - rank
        current = page.current_deployment
        current_id = current.get("id") if isinstance(current, dict) else None
        rows = deployments_.map_deployment_page(
            page.deployments[:wanted], owner=owner, current_id=current_id, first_rank=rank
        )
        read = min(len(page.deployments), wanted)
        more: list[Job] = []
        if page.has_next and read < wanted and read > 0:
            more.append(self._deployments(owner, rank=rank + read, cursor=page.next_cursor))
        return rows, more


def _ids(owner: Owner) -> dict[str, Any]:
    return {k: v for k, v in owner.columns().items() if v is not None}
