"""The simulator's world: lean records and the parent-id indices that keep requests fast.

Records hold only what the simulator cannot recompute; the wire shapes (spec part 2) are
built from them on demand by `serialize`. Every child map is keyed by its parent's id, so a
request touches only the records it names and never scans the whole world, even at 50,000
services. Ids are UUID strings, times are aware UTC datetimes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = [
    "ApiKey",
    "Bucket",
    "Deployment",
    "Environment",
    "Port",
    "Project",
    "Service",
    "ServiceGroup",
    "Team",
    "Template",
    "Variable",
    "Volume",
    "Webhook",
    "World",
    "iso",
]


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 with a `Z`, whole seconds: the one timestamp form the simulator sends."""
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


@dataclass(slots=True)
class Team:
    id: str
    name: str
    description: str
    created_at: datetime


@dataclass(slots=True)
class Project:
    id: str
    team_id: str
    name: str
    description: str
    created_at: datetime


@dataclass(slots=True)
class Environment:
    id: str
    team_id: str
    project_id: str
    name: str
    description: str
    created_at: datetime


@dataclass(slots=True, frozen=True)
class Port:
    port: int
    protocol: str = "TCP"
    node_port: int = 0  # 0: not exposed as a NodePort


@dataclass(slots=True)
class Deployment:
    """One deployment; history is rebuilt from the service's seed, so only new ones are kept."""

    id: str
    service_id: str
    created_at: datetime
    status: str
    commit_sha: str
    commit_message: str
    author: str
    attempts: int = 1
    error: str = ""


@dataclass(slots=True)
class Service:
    """A service's configuration and runtime state, flattened for memory."""

    id: str
    team_id: str
    project_id: str
    environment_id: str
    name: str
    description: str
    kind: str  # gitprovider | container-image | database
    created_at: datetime
    updated_at: datetime
    seed: int
    builder: str
    image: str = ""
    git_repository: str = ""
    git_owner: str = ""
    git_branch: str = ""
    database_type: str = ""
    database_version: str = ""
    run_command: str = ""
    is_public: bool = False
    hosts: tuple[str, ...] = ()
    ports: tuple[Port, ...] = ()
    replicas: int = 1
    cpu: tuple[int, int] = (250, 500)  # requests, limits (millicores); -1 means none
    memory: tuple[int, int] = (256, 512)  # requests, limits (megabytes)
    health_path: str = ""  # empty: no health check
    privileged: bool = False
    capabilities: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    backup_schedule: str = ""
    backup_retention: int = 0
    backup_bucket_id: str | None = None
    template_id: str | None = None
    template_version: int = 0
    template_instance_id: str | None = None
    group_id: str | None = None
    auto_deploy: bool = True
    history_depth: int = 5
    history_until: datetime | None = None  # base history ends here (creation of the record)
    crashing: bool = False
    crash_reasons: tuple[str, ...] = ()
    restart_count: int = 0
    oom_kills: int = 0
    last_oom_at: datetime | None = None
    pods_started_at: datetime | None = None
    new_deployments: list[Deployment] = field(default_factory=list)
    pinned: bool = False  # a planted problem: evolution leaves its defect in place


@dataclass(slots=True)
class Volume:
    id: str
    team_id: str
    project_id: str
    environment_id: str
    service_id: str | None
    name: str
    mount_path: str
    capacity_gb: float
    used_gb: float
    created_at: datetime
    is_database: bool = False
    pending_resize: bool = False
    requested_gb: float = 0.0


@dataclass(slots=True)
class Variable:
    name: str
    value: str
    updates: list[datetime]
    provided: bool = False  # managed by the service (protected)


@dataclass(slots=True)
class Webhook:
    id: str
    type: str  # team | project
    team_id: str
    project_id: str | None
    url: str
    events: tuple[str, ...]
    created_at: datetime


@dataclass(slots=True)
class Bucket:
    id: str
    team_id: str
    name: str
    endpoint: str
    region: str
    bucket: str
    access_key: str
    secret_key: str
    created_at: datetime
    updated_at: datetime


@dataclass(slots=True)
class Template:
    id: str
    name: str
    description: str
    icon: str
    display_rank: int
    keywords: tuple[str, ...]
    version: int
    created_at: datetime
    image: str
    database_type: str = ""
    min_cpu: float = 0.5
    min_ram_gb: float = 0.5


@dataclass(slots=True)
class ServiceGroup:
    id: str
    team_id: str
    project_id: str
    environment_id: str
    name: str
    description: str
    icon: str
    template_id: str | None
    created_at: datetime


@dataclass(slots=True)
class ApiKey:
    """An API key or, with `session=True`, a browser access token; only the hash is kept."""

    id: str
    name: str
    role: str  # viewer | editor | admin
    access: str  # all | limited
    resources: list[tuple[str, str]]  # (level, id)
    token_sha256: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    session: bool = False


@dataclass
class World:
    """Every record plus parent-id indices; mutate only through the methods below."""

    now: datetime
    user_id: str = ""
    user_email: str = "owner@example.com"
    user_name: str = "Platform Owner"
    user_created_at: datetime = field(default_factory=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    teams: dict[str, Team] = field(default_factory=dict)
    projects: dict[str, Project] = field(default_factory=dict)
    environments: dict[str, Environment] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)
    webhooks: dict[str, Webhook] = field(default_factory=dict)
    buckets: dict[str, Bucket] = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)
    groups: dict[str, ServiceGroup] = field(default_factory=dict)
    keys: dict[str, ApiKey] = field(default_factory=dict)  # by token hash
    projects_of: dict[str, dict[str, None]] = field(default_factory=dict)
    environments_of: dict[str, dict[str, None]] = field(default_factory=dict)
    services_of: dict[str, dict[str, None]] = field(default_factory=dict)
    volumes_of: dict[str, dict[str, None]] = field(default_factory=dict)  # by environment
    groups_of: dict[str, dict[str, None]] = field(default_factory=dict)  # by environment
    webhooks_of: dict[str, dict[str, None]] = field(default_factory=dict)  # team or project id
    buckets_of: dict[str, dict[str, None]] = field(default_factory=dict)
    variables: dict[tuple[str, str], dict[str, Variable]] = field(default_factory=dict)
    canaries: set[str] = field(default_factory=set)

    def add_team(self, team: Team) -> None:
        self.teams[team.id] = team
        self.projects_of.setdefault(team.id, {})
        self.buckets_of.setdefault(team.id, {})
        self.webhooks_of.setdefault(team.id, {})

    def add_project(self, project: Project) -> None:
        self.projects[project.id] = project
        self.projects_of[project.team_id][project.id] = None
        self.environments_of.setdefault(project.id, {})
        self.webhooks_of.setdefault(project.id, {})

    def add_environment(self, env: Environment) -> None:
        self.environments[env.id] = env
        self.environments_of[env.project_id][env.id] = None
        self.services_of.setdefault(env.id, {})
        self.volumes_of.setdefault(env.id, {})
        self.groups_of.setdefault(env.id, {})

    def add_service(self, service: Service) -> None:
        self.services[service.id] = service
        self.services_of[service.environment_id][service.id] = None

    def add_volume(self, volume: Volume) -> None:
        self.volumes[volume.id] = volume
        self.volumes_of[volume.environment_id][volume.id] = None

    def add_group(self, group: ServiceGroup) -> None:
        self.groups[group.id] = group
        self.groups_of[group.environment_id][group.id] = None

    def add_webhook(self, hook: Webhook) -> None:
        self.webhooks[hook.id] = hook
        owner = hook.project_id if hook.type == "project" and hook.project_id else hook.team_id
        self.webhooks_of[owner][hook.id] = None

    def add_bucket(self, bucket: Bucket) -> None:
        self.buckets[bucket.id] = bucket
        self.buckets_of[bucket.team_id][bucket.id] = None
        self.canaries.add(bucket.secret_key)

    def variables_at(self, level: str, owner_id: str) -> dict[str, Variable]:
        """The live variable map of one owner (created empty on first use)."""
        return self.variables.setdefault((level, owner_id), {})

    def set_variable(self, level: str, owner_id: str, variable: Variable) -> None:
        self.variables_at(level, owner_id)[variable.name] = variable

    def volumes_on(self, service: Service) -> list[Volume]:
        """Volumes mounted on a service (looked up in its environment only)."""
        found = (self.volumes[v] for v in self.volumes_of.get(service.environment_id, {}))
        return [v for v in found if v.service_id == service.id]

    def remove_service(self, service_id: str) -> None:
        """Delete a service with its variables; its volumes stay, now unattached."""
        service = self.services.pop(service_id)
        self.services_of[service.environment_id].pop(service_id, None)
        self.variables.pop(("service", service_id), None)
        for volume in self.volumes_on(service):
            volume.service_id = None

    def remove_environment(self, env_id: str) -> None:
        """Delete an environment with its services, volumes, groups and variables."""
        env = self.environments.pop(env_id)
        self.environments_of[env.project_id].pop(env_id, None)
        for service_id in list(self.services_of.pop(env_id, {})):
            self.services.pop(service_id, None)
            self.variables.pop(("service", service_id), None)
        for volume_id in self.volumes_of.pop(env_id, {}):
            self.volumes.pop(volume_id, None)
        for group_id in self.groups_of.pop(env_id, {}):
            self.groups.pop(group_id, None)
        self.variables.pop(("environment", env_id), None)

    def owner_chain(self, level: str, owner_id: str) -> tuple[str, ...]:
        """Ids of a resource and its ancestors, nearest first (missing ones skipped)."""
        chain: list[str] = []
        if level == "service" and owner_id in self.services:
            service = self.services[owner_id]
            return (owner_id, service.environment_id, service.project_id, service.team_id)
        if level == "environment" and owner_id in self.environments:
            env = self.environments[owner_id]
            return (owner_id, env.project_id, env.team_id)
        if level == "project" and owner_id in self.projects:
            return (owner_id, self.projects[owner_id].team_id)
        if level == "team" and owner_id in self.teams:
            chain.append(owner_id)
        return tuple(chain)
