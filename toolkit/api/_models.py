"""Small typed values where the structure of an answer matters to callers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.api._responses import Reply


@dataclass(frozen=True, slots=True)
class VariableList:
    """Variables of one level; `values_redacted` is true for viewer keys (values are null)."""

    values_redacted: bool
    variables: list[dict[str, Any]]

    @classmethod
    def parse(cls, reply: Reply) -> VariableList:
        data = reply.object()
        redacted = data.get("values_redacted", False)
        if not isinstance(redacted, bool):
            raise reply.malformed("`values_redacted` should be a boolean")
        return cls(redacted, reply.object_list(data.get("variables"), "variables"))


@dataclass(frozen=True, slots=True)
class DeploymentPage:
    """One page of a service's deployment history; follow `next_cursor` while `has_next`."""

    deployments: list[dict[str, Any]]
    current_deployment: dict[str, Any] | None
    has_next: bool
    next_cursor: str | None
    previous_cursor: str | None

    @classmethod
    def parse(cls, reply: Reply) -> DeploymentPage:
        data = reply.object()
        current = data.get("current_deployment")
        if current is not None and not isinstance(current, dict):
            raise reply.malformed("`current_deployment` should be an object or null")
        metadata = data.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise reply.malformed("`metadata` should be an object")
        has_next = bool(metadata.get("has_next", False))
        next_cursor = _cursor(metadata.get("next"))
        if has_next and next_cursor is None:
            raise reply.malformed("`metadata.has_next` is true but `metadata.next` is missing")
        return cls(
            deployments=reply.object_list(data.get("deployments"), "deployments"),
            current_deployment=current,
            has_next=has_next,
            next_cursor=next_cursor,
            previous_cursor=_cursor(metadata.get("previous")),
        )


def _cursor(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
