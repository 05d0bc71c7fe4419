"""Word lists and seeded value makers the generator draws from: names, images, secrets.

Kept apart from the generator so the shapes of the world (counts, placements) and its
flavour (names, images, URLs) can change independently.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

__all__ = [
    "APP_NAMES",
    "DATABASES",
    "HTML_NAME",
    "HTML_PROJECT_NAME",
    "TEAM_NAMES",
    "TEMPLATES",
    "WEBHOOK_EVENTS",
    "new_id",
]

TEAM_NAMES = (
    "Acme Platform",
    "Payments",
    "Growth",
    "Data Science",
    "Internal Tools",
    "Mobile",
    "Search",
    "Identity",
    "Logistics",
    "Marketing Web",
)
PROJECT_WORDS = (
    "storefront",
    "checkout",
    "ledger",
    "crm",
    "insights",
    "booking",
    "catalog",
    "inbox",
    "portal",
    "wiki",
    "reports",
    "scheduler",
)
APP_NAMES = (
    "web",
    "api",
    "worker",
    "scheduler",
    "frontend",
    "backend",
    "auth",
    "billing",
    "search",
    "notifications",
    "gateway",
    "cron",
    "ingest",
    "analytics",
    "admin",
    "docs",
)
IMAGES = (
    "nginx:1.27",
    "ghcr.io/acme/api:2.4.1",
    "node:20-alpine",
    "python:3.12-slim",
    "caddy:2",
    "grafana/grafana:11.1.0",
    "ghcr.io/acme/worker:latest",
)
# (database_type, version, image, protected variable names)
DATABASES = (
    ("postgres", "16", "postgres:16", ("POSTGRES_PASSWORD", "DATABASE_URL")),
    ("mysql", "8.0", "mysql:8.0", ("MYSQL_ROOT_PASSWORD", "DATABASE_URL")),
    ("redis", "7", "redis:7", ("REDIS_PASSWORD", "REDIS_URL")),
    ("mongodb", "7", "mongo:7", ("MONGO_INITDB_ROOT_PASSWORD", "MONGO_URL")),
)
# (name, image, database_type, current version, keywords)
TEMPLATES = (
    ("PostgreSQL", "postgres:16", "postgres", 4, ("database", "sql")),
    ("Redis", "redis:7", "redis", 3, ("cache", "queue")),
    ("n8n", "n8nio/n8n:1.60.0", "", 6, ("automation", "workflow")),
    ("Umami", "ghcr.io/umami-software/umami:postgresql-latest", "", 5, ("analytics",)),
    ("Ghost", "ghost:5", "", 4, ("blog", "cms")),
    ("Plausible", "ghcr.io/plausible/community-edition:v2", "", 3, ("analytics",)),
    ("MinIO", "minio/minio:latest", "", 2, ("storage", "s3")),
    ("Uptime Kuma", "louislam/uptime-kuma:1", "", 5, ("monitoring",)),
)
WEBHOOK_EVENTS = (
    "project.created",
    "project.updated",
    "project.deleted",
    "service.created",
    "service.updated",
    "service.deleted",
    "deployment.queued",
    "deployment.building",
    "deployment.succeeded",
    "deployment.failed",
    "deployment.cancelled",
)
COMMIT_MESSAGES = (
    "Fix flaky checkout test",
    "Bump dependencies",
    "Add retry to payment webhook",
    "Refactor settings loader",
    "Improve cache hit rate",
    "Update README",
    "Handle empty carts",
    "Tune worker concurrency",
)
AUTHORS = ("Ada Lovelace", "Grace Hopper", "Linus T.", "Margaret H.", "Dennis R.", "Barbara L.")
CRASH_REASONS = (
    "Back-off restarting failed container",
    "Liveness probe failed: HTTP probe failed with statuscode: 503",
    "Error: Cannot find module '/app/server.js'",
    "panic: runtime error: invalid memory address or nil pointer dereference",
)
HTML_NAME = "<img src=x onerror=alert(1)> \"quoted\" & 'single'"
HTML_PROJECT_NAME = "legacy <b onmouseover=alert(1)>ops</b> \"quoted\" & 'single'"


def new_id(rng: random.Random) -> str:
    """A UUIDv4-shaped id drawn from `rng`, so ids repeat with the seed."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def new_canary(rng: random.Random, canaries: set[str]) -> str:
    """`CANARY` plus 16 unique hex digits, recorded in `canaries` for leak tests."""
    while True:
        token = f"CANARY{rng.getrandbits(64):016x}"
        if token not in canaries:
            canaries.add(token)
            return token


def secret_value(name: str, canary: str, host: str) -> str:
    """A realistic literal value for variable `name` that embeds `canary`."""
    if name.endswith("DATABASE_URL"):
        return f"postgres://app:{canary}@{host}:5432/app"
    if name.endswith("REDIS_URL"):
        return f"redis://default:{canary}@{host}:6379/0"
    if name.endswith("MONGO_URL"):
        return f"mongodb://root:{canary}@{host}:27017/admin"
    if name == "SENTRY_DSN":
        return f"https://{canary}@o4501.ingest.sentry.example/42"
    if name == "SLACK_WEBHOOK_URL":
        return f"https://hooks.slack.example/services/T0/B0/{canary}"
    if "STRIPE" in name or "PAYMENT" in name:
        return f"sk_live_{canary}"
    if name in {"LOG_LEVEL", "FEATURE_FLAGS", "PUBLIC_URL"}:
        return f"{name.lower()};build={canary}"
    return canary
