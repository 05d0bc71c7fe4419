"""/users/me parsed leniently: an unexpected shape becomes a stated problem, never a crash."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rich.console import Console

from toolkit.identity import IdentityOutcome, describe_identity, parse_identity

KEY = {
    "id": "k1",
    "name": "ci <deployer>",
    "role": "editor",
    "access": "limited",
    "resources": [{"type": "project", "id": "p1"}],
    "created_at": "2026-01-01T00:00:00Z",
    "expires_at": "2026-04-01T00:00:00Z",
    "last_used_at": None,
}


def test_api_key_identity() -> None:
    ident = parse_identity({"id": "u1", "email": "a@b.c", "name": "Ann", "api_key": KEY})
    assert ident.is_api_key
    assert (ident.role, ident.access, ident.resources) == (
        "editor",
        "limited",
        (("project", "p1"),),
    )
    assert ident.expires_at == datetime(2026, 4, 1, tzinfo=UTC)
    assert ident.last_used_at is None
    assert ident.problems == ()


def test_access_token_identity() -> None:
    ident = parse_identity({"id": "u1", "email": "a@b.c", "name": "Ann", "api_key": None})
    assert not ident.is_api_key
    assert ident.problems == ()


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ([], "not an object"),
        ({"id": "u"}, "no api_key member"),
        ({"api_key": "yes"}, "api_key should be an object"),
        ({"api_key": {**KEY, "role": "owner"}}, "'owner' is not one of"),
        ({"api_key": {**KEY, "access": "some"}}, "neither 'all' nor 'limited'"),
        ({"api_key": {**KEY, "resources": "p1"}}, "resources should be a list"),
        ({"api_key": {**KEY, "resources": [{"id": "p1"}]}}, "without type and id"),
        ({"api_key": {**KEY, "expires_at": "soon"}}, "not an ISO 8601 time"),
        ({"api_key": {**KEY, "name": 3}}, "name should be a string"),
    ],
)
def test_unexpected_shapes_become_problems(payload: object, problem: str) -> None:
    ident = parse_identity(payload)
    assert any(problem in p for p in ident.problems), ident.problems


def test_description_renders_platform_text_literally() -> None:
    ident = parse_identity(
        {"id": "u1", "email": "a@b.c", "name": "[bold]Ann[/bold]", "api_key": KEY}
    )
    outcome = IdentityOutcome(base_url="http://x", credential="default", identity=ident)
    console = Console(width=200, record=True)
    console.print(describe_identity(outcome, now=datetime(2026, 3, 1, tzinfo=UTC)))
    text = console.export_text()
    assert "[bold]Ann[/bold]" in text  # markup from the platform is shown, not interpreted
    assert "ci <deployer>" in text
    assert "limited to project p1" in text
    assert "in 31 days" in text
