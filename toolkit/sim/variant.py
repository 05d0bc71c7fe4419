"""How the simulator speaks: as the specification says (`spec`), or as the real platform does.

The specification is an anonymised form of a public platform's API
(docs/spec/api-facts.md, "The real platform"). The `real` variant serves the same world the
way that platform's public source does, so that the toolkit's tests meet what a real server
sends:

- product words in identifiers and values (`kubernetes_name`, `github_installation_id`,
  `docker_builder_dockerfile_path`, service type `github` and `docker-image`, builder
  `railpack` and `docker`);
- moved paths: replicas at `/instances/list`, `/instances/health`, `/instances/restart`;
  volumes at `/storage/pvc/list`; webhooks at `/unbindwebhooks/list`; no `/api_keys/list`;
- `404 page not found` as text/plain for an unknown path; error bodies without
  `request_id` and no `X-Request-Id` header;
- its shapes: replica health `{health, expected_instances, instances}`, deployments with
  `instance_events` and `instance_restarts`, `/variables/list` as `{variables: [{type,
  name, value}], variable_references}`, `/users/me` as `{id, email, created_at,
  updated_at}`, and S3 buckets WITH their `secret_key`, in plain text.

    sim = Simulator(seed=7, services=20, variant="real")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.sim.world import World

__all__ = ["VARIANTS", "Variant", "variant_named"]

Reshape = Callable[["World", str, Any], Any]


def _as_specified(world: World, path: str, data: Any) -> Any:
    return data


@dataclass(frozen=True, slots=True)
class Variant:
    """A way of serving the world.

    `paths` maps each served path to the specification's path whose handler answers it
    (None: every specified path as it is); `reshape(world, spec_path, data)` turns the
    specification's answer into the served one.
    """

    name: str
    paths: Mapping[str, str] | None = None
    reshape: Reshape = field(default=_as_specified)
    plain_not_found: bool = False
    request_ids: bool = True

    def spec_path(self, served: str) -> str | None:
        """The specification's path a served path stands for; None for an unknown path."""
        if self.paths is None:
            return served
        return self.paths.get(served)


# The real platform's paths that differ from the specification's (served -> specified).
_MOVED = {
    "/instances/list": "/replicas/list",
    "/instances/health": "/replicas/health",
    "/instances/restart": "/replicas/restart",
    "/storage/pvc/list": "/volumes/list",
    "/unbindwebhooks/list": "/webhooks/list",
}
_ABSENT = frozenset({"/replicas/list", "/replicas/health", "/replicas/restart"})
_ABSENT |= {"/volumes/list", "/webhooks/list", "/api_keys/list"}

# Specification word -> product word, in field names (every record) and enumerated values.
_PRODUCT_KEYS = {
    "runtime_name": "kubernetes_name",
    "gitprovider_installation_id": "github_installation_id",
    "container_builder_build_context": "docker_builder_build_context",
    "container_builder_dockerfile_path": "docker_builder_dockerfile_path",
    "buildpack_builder_build_command": "railpack_builder_build_command",
    "buildpack_builder_install_command": "railpack_builder_install_command",
    "replica_events": "instance_events",
    "replica_restarts": "instance_restarts",
}
_PRODUCT_VALUES = {
    "type": {"gitprovider": "github", "container-image": "docker-image"},
    "builder": {"buildpack": "railpack", "container": "docker"},
}


def _product_words(value: Any) -> Any:
    """`value` with every specification word of `_PRODUCT_KEYS`/`_PRODUCT_VALUES` replaced."""
    if isinstance(value, list):
        return [_product_words(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, member in value.items():
        name: str = _PRODUCT_KEYS.get(key) or key
        values = _PRODUCT_VALUES.get(key)
        if values is not None and isinstance(member, str):
            out[name] = values.get(member, member)
        else:
            out[name] = _product_words(member)
    return out


def _real_shape(world: World, path: str, data: Any) -> Any:
    """The specification's answer for `path`, as the real platform's source shapes it."""
    if path == "/users/me":
        return {
            "id": data["id"],
            "email": data["email"],
            "created_at": data["created_at"],
            "updated_at": data["created_at"],
        }
    if path == "/replicas/health":
        return {
            "health": data["health"],
            "expected_instances": data["expected_replicas"],
            "instances": _product_words(data["replicas"]),
        }
    if path == "/variables/list":
        return {
            "variables": [
                {"type": v["type"], "name": v["name"], "value": v["value"]}
                for v in data["variables"]
            ],
            "variable_references": [],
        }
    if path in ("/storage/s3/list", "/storage/s3/get"):
        return _with_secret_keys(world, data)
    return _product_words(data)


def _with_secret_keys(world: World, data: Any) -> Any:
    """Bucket records with the secret key the real platform returns (the spec never does)."""
    if isinstance(data, list):
        return [_with_secret_keys(world, item) for item in data]
    bucket = world.buckets.get(data.get("id", ""))
    return {**data, "secret_key": bucket.secret_key} if bucket is not None else data


def _real_paths(specified: frozenset[str]) -> dict[str, str]:
    kept = {path: path for path in specified if path not in _ABSENT}
    return {**kept, **_MOVED}


def variant_named(name: str, specified: frozenset[str]) -> Variant:
    """The variant called `name` over the specification's paths `specified`."""
    if name == "spec":
        return Variant("spec")
    if name == "real":
        return Variant(
            "real",
            paths=MappingProxyType(_real_paths(specified)),
            reshape=_real_shape,
            plain_not_found=True,
            request_ids=False,
        )
    raise ValueError(f"unknown simulator variant {name!r}: choose one of {', '.join(VARIANTS)}")


VARIANTS = ("spec", "real")
"""`spec`: as the specification says (the default); `real`: as the platform's source does."""
