"""/users/me parsed leniently: an unexpected shape becomes a stated problem, never a crash."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rich.console import Console

from toolkit.cli.identity_view import describe_identity
from toolkit.collect.identity import parse_identity
from toolkit.pipeline.identity_probe import IdentityOutcome

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
        ({"api_key": {**KEY, "created_at": None}}, "api_key.created_at is null"),
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


def test_explicit_nulls_mean_never_expires_and_never_used() -> None:
    ident = parse_identity({"api_key": {**KEY, "expires_at": None, "last_used_at": None}})
    assert (ident.expires_at, ident.last_used_at, ident.problems) == (None, None, ())


@pytest.mark.parametrize("member", ["created_at", "expires_at", "last_used_at"])
def test_an_absent_time_is_a_problem_not_never(member: str) -> None:
    key = {k: v for k, v in KEY.items() if k != member}
    ident = parse_identity({"api_key": key})
    assert getattr(ident, member) is None
    # the key-scope checks (KEY005, KEY006, KEY008) find these problems by this prefix
    assert [p for p in ident.problems if p.startswith(f"api_key.{member} ")], ident.problems
    assert "missing" in ident.problems[0]


@pytest.mark.parametrize("value", ["soon", 3])
def test_an_unreadable_expiry_keeps_the_prefix_the_checks_match(value: object) -> None:
    ident = parse_identity({"api_key": {**KEY, "expires_at": value}})
    assert [p for p in ident.problems if p.startswith("api_key.expires_at ")], ident.problems


def test_description_does_not_call_an_unknown_expiry_never() -> None:
    key = {k: v for k, v in KEY.items() if k not in ("expires_at", "last_used_at")}
    outcome = IdentityOutcome(
        base_url="http://x", credential="default", identity=parse_identity({"api_key": key})
    )
    console = Console(width=200, record=True)
    console.print(describe_identity(outcome, now=datetime(2026, 3, 1, tzinfo=UTC)))
    text = console.export_text()
    assert "never" not in text
    assert text.count("unknown (see the note below)") == 2
