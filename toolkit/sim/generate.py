"""Seeded generation of a whole world at any size, from 5 services to 50,000.

Shape: about ten services per project, six projects per team, one to three environments
per project (production, staging, development or a preview). Everything is drawn from one
`random.Random(seed)` in a fixed order, so the same seed and size give the same world;
deployment history is not built here but lazily per service (see `history`).

    generated = build_world(seed=7, services=40, start=datetime(2026, 1, 1, tzinfo=UTC))
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.sim.planted import Planted, plant
from toolkit.sim.service_factory import add_service_variables, add_volume, backdate, make_service
from toolkit.sim.vocabulary import (
    PROJECT_WORDS,
    TEAM_NAMES,
    TEMPLATES,
    WEBHOOK_EVENTS,
    new_canary,
    new_id,
    secret_value,
)
from toolkit.sim.world import (
    Bucket,
    Environment,
    Project,
    ServiceGroup,
    Team,
    Template,
    Variable,
    Webhook,
    World,
)

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["MIN_SERVICES", "Generated", "build_world"]

MIN_SERVICES = 5
_ENV_SETS = (
    ("production",),
    ("production", "staging"),
    ("production", "staging", "development"),
    ("production", "staging", "preview"),
)
_ENV_WEIGHT = {"production": 3, "staging": 2}


@dataclass
class Generated:
    """A fresh world with the tokens of its keys and the ids of its planted problems."""

    world: World
    planted: Planted


def build_world(seed: int, services: int, start: datetime) -> Generated:
    """Build the world for `seed` with exactly `services` services at time `start`."""
    if services < MIN_SERVICES:
        raise ValueError(f"services={services}: give at least {MIN_SERVICES}")
    rng = random.Random(seed)
    world = World(now=start, user_id=new_id(rng))
    _templates(world, rng)
    project_count = max(2, round(services / 10))
    _hierarchy(world, rng, project_count, team_count=max(1, round(project_count / 6)))
    for team in world.teams.values():
        _team_assets(world, rng, team)
    planted = plant(world, rng)
    _random_services(world, rng, services - len(world.services))
    _service_groups(world, rng)
    return Generated(world, planted)


def _templates(world: World, rng: random.Random) -> None:
    for rank, (name, image, db_type, version, keywords) in enumerate(TEMPLATES, start=1):
        template = Template(
            id=new_id(rng),
            name=name,
            description=f"Deploy {name} with sensible defaults",
            icon=f"https://icons.example.com/{name.lower().replace(' ', '-')}.svg",
            display_rank=rank,
            keywords=keywords,
            version=version,
            created_at=backdate(rng, world.now, 900),
            image=image,
            database_type=db_type,
            min_cpu=rng.choice((0.25, 0.5, 1.0)),
            min_ram_gb=rng.choice((0.25, 0.5, 1.0, 2.0)),
        )
        world.templates[template.id] = template


def _hierarchy(world: World, rng: random.Random, project_count: int, team_count: int) -> None:
    """Teams, projects and environments; project 0 and 1 have fixed shapes for the plants."""
    teams = []
    for index in range(team_count):
        name = TEAM_NAMES[index % len(TEAM_NAMES)]
        name = name if index < len(TEAM_NAMES) else f"{name} {index // len(TEAM_NAMES) + 1}"
        team = Team(new_id(rng), name, f"The {name} team", backdate(rng, world.now, 900))
        world.add_team(team)
        teams.append(team)
    for index in range(project_count):
        team = teams[0] if index < 2 else rng.choice(teams)
        word = PROJECT_WORDS[index % len(PROJECT_WORDS)]
        name = word if index < len(PROJECT_WORDS) else f"{word}-{index // len(PROJECT_WORDS)}"
        created = backdate(rng, world.now, 700)
        project = Project(new_id(rng), team.id, name, f"The {word} product", created)
        world.add_project(project)
        env_names = _ENV_SETS[2] if index == 0 else _ENV_SETS[0] if index == 1 else None
        for env_name in env_names or rng.choices(_ENV_SETS, (2, 4, 3, 1))[0]:
            label = f"preview-{rng.randint(100, 999)}" if env_name == "preview" else env_name
            env = Environment(
                new_id(rng), team.id, project.id, label, f"{label} of {name}", created
            )
            world.add_environment(env)


def _team_assets(world: World, rng: random.Random, team: Team) -> None:
    """Buckets, webhooks and variables of a team and of its projects and environments."""
    for index in range(rng.randint(1, 2)):
        _bucket(world, rng, team, "backups" if index == 0 else f"assets-{index}")
    _variables(world, rng, "team", team.id, ("REGISTRY_TOKEN", "SLACK_WEBHOOK_URL"))
    _webhook(world, rng, team.id, None)
    for project_id in world.projects_of[team.id]:
        _variables(world, rng, "project", project_id, ("SENTRY_DSN",))
        for _ in range(rng.randint(0, 2)):
            _webhook(world, rng, team.id, project_id)
        for env_id in world.environments_of[project_id]:
            names = ("PUBLIC_URL", "SMTP_PASSWORD")[: rng.randint(1, 2)]
            _variables(world, rng, "environment", env_id, names)


def _bucket(world: World, rng: random.Random, team: Team, label: str) -> None:
    created = backdate(rng, world.now, 600)
    slug = f"{team.name.lower().replace(' ', '-')}-{label}-{rng.getrandbits(16):04x}"
    world.add_bucket(
        Bucket(
            id=new_id(rng),
            team_id=team.id,
            name=label,
            endpoint="https://s3.eu-central-1.example-storage.com",
            region="eu-central-1",
            bucket=slug,
            access_key=f"AKSIM{rng.getrandbits(60):015X}",
            secret_key=new_canary(rng, world.canaries),
            created_at=created,
            updated_at=created,
        )
    )


def _variables(
    world: World, rng: random.Random, level: str, owner_id: str, names: tuple[str, ...]
) -> None:
    created = backdate(rng, world.now, 300)
    for name in names:
        value = secret_value(name, new_canary(rng, world.canaries), "db.internal")
        world.set_variable(level, owner_id, Variable(name, value, [created]))


def _webhook(world: World, rng: random.Random, team_id: str, project_id: str | None) -> None:
    path = f"{rng.getrandbits(48):012x}"
    world.add_webhook(
        Webhook(
            id=new_id(rng),
            type="project" if project_id else "team",
            team_id=team_id,
            project_id=project_id,
            url=f"https://hooks.example.com/platform/{path}",
            events=tuple(rng.sample(WEBHOOK_EVENTS, rng.randint(1, 4))),
            created_at=backdate(rng, world.now, 400),
        )
    )


def _random_services(world: World, rng: random.Random, count: int) -> None:
    """Spread `count` services over environments, production-heavy, then wire variables."""
    envs = list(world.environments.values())
    weights = [_ENV_WEIGHT.get(env.name, 1) for env in envs]
    per_env = Counter(rng.choices(range(len(envs)), weights, k=count))
    for index, env in enumerate(envs):
        made = []
        for _ in range(per_env.get(index, 0)):
            service = make_service(world, rng, env, backdate(rng, world.now, 400))
            world.add_service(service)
            made.append(service)
            if service.kind == "database" or rng.random() < 0.25:
                add_volume(world, rng, service)
        databases = [s for s in made if s.kind == "database"]
        for service in made:
            add_service_variables(world, rng, service, databases)


def _service_groups(world: World, rng: random.Random) -> None:
    for env_id, service_ids in world.services_of.items():
        if not service_ids or rng.random() > 0.25:
            continue
        env = world.environments[env_id]
        group = ServiceGroup(
            id=new_id(rng),
            team_id=env.team_id,
            project_id=env.project_id,
            environment_id=env_id,
            name="core",
            description="Services that ship together",
            icon="https://icons.example.com/group.svg",
            template_id=None,
            created_at=env.created_at,
        )
        world.add_group(group)
        for service_id in service_ids:
            if rng.random() < 0.5:
                world.services[service_id].group_id = group.id
