"""Collectors: platform answers turned into snapshot rows, and the crawl that runs them all.

One module per resource kind maps JSON into rows (`map_*`, pure functions a notebook can
call on `PlatformClient` results); the crawl plans and runs every call concurrently, makes
each GET once, and records what failed as `collection_errors` rows.

>>> from toolkit.collect import crawl, Owner, map_services      # doctest: +SKIP
>>> rows, result = crawl(config, fingerprints=fingerprints)     # doctest: +SKIP
>>> map_services(client.list_services(t, p, e), team_id=t, project_id=p,
...              environment_id=e)["services"][0]["name"]       # doctest: +SKIP
"""

from __future__ import annotations

from toolkit.collect.buckets import map_buckets
from toolkit.collect.calls import Call
from toolkit.collect.conform import Conformer, Owner, Rows
from toolkit.collect.crawl import crawl, crawl_async
from toolkit.collect.crawl_result import CrawlOutput, CrawlResult
from toolkit.collect.credentials import map_credential, map_failed_credential
from toolkit.collect.deployments import map_deployment_page
from toolkit.collect.hierarchy import map_environments, map_projects, map_teams
from toolkit.collect.plan import CrawlOptions, Job, Planner
from toolkit.collect.progress import CrawlProgress
from toolkit.collect.replicas import map_replica_health, map_replica_list
from toolkit.collect.service_groups import map_service_groups
from toolkit.collect.services import map_services
from toolkit.collect.templates import map_templates
from toolkit.collect.variables import Reference, map_variables, parse_references
from toolkit.collect.volumes import map_volumes
from toolkit.collect.webhooks import map_webhooks
from toolkit.errors import CollectionAborted

__all__ = [
    "Call",
    "CollectionAborted",
    "Conformer",
    "CrawlOptions",
    "CrawlOutput",
    "CrawlProgress",
    "CrawlResult",
    "Job",
    "Owner",
    "Planner",
    "Reference",
    "Rows",
    "crawl",
    "crawl_async",
    "map_buckets",
    "map_credential",
    "map_deployment_page",
    "map_environments",
    "map_failed_credential",
    "map_projects",
    "map_replica_health",
    "map_replica_list",
    "map_service_groups",
    "map_services",
    "map_teams",
    "map_templates",
    "map_variables",
    "map_volumes",
    "map_webhooks",
    "parse_references",
]
