"""A small history for the review tests, every figure known by hand.

Period 2026-01-05 to 2026-01-10 (6 days, so [01-05 00:00, 01-11 00:00)); the previous period
is 2025-12-30 to 2026-01-04. Seven snapshots (S4 partial: services.list failed, so both
checks are blind there and service ``a`` has no row), no snapshot on 01-08:

    S1 01-02 00:00  S2 01-05 00:00  S3 01-06 12:00  S4 01-07 12:00 (partial)
    S5 01-09 06:00  S6 01-10 00:00  S7 01-12 00:00 (after the period)

RVW001 (high: memory limit <= 0). Per service and snapshot (A alarm, o ok, - no row):

    a   A A A - o o o   one episode 01-02 00:00 .. fixed 01-09 06:00 (S4 unobserved: carried)
    b   o o A A A o A   01-06 12:00 .. fixed 01-10 00:00; again at S7, after the period
    c   o o o o o A A   01-10 00:00 .., open at the end
    d   A o A A A A A   01-02 .. fixed 01-05 00:00 (in the period); again 01-06 12:00 ..

RVW002 (critical: no replica): ``e`` has 0 replicas from S2 on (01-05 00:00 ..).
Service ``a`` carries a hostile name (``HOSTILE``), which every format must escape.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.audit import Catalogue
from toolkit.review import Period, ReviewSettings
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Mapping

CHECKS = Path(__file__).with_name("checks")
NOW = datetime(2026, 2, 1, tzinfo=UTC)
"""When the tests' reviews are made: after every snapshot."""
PERIOD = Period.parse("2026-01-05", "2026-01-10")
SHORT = ReviewSettings(time_to_fix_days={"critical": 2, "high": 5, "medium": 90, "low": 180})
"""Times to fix short enough for the six days to breach them."""
HOSTILE = '<script>alert("a")</script> | *a*'
TIMES = [
    datetime(2026, 1, 2, tzinfo=UTC),
    datetime(2026, 1, 5, tzinfo=UTC),
    datetime(2026, 1, 6, 12, tzinfo=UTC),
    datetime(2026, 1, 7, 12, tzinfo=UTC),
    datetime(2026, 1, 9, 6, tzinfo=UTC),
    datetime(2026, 1, 10, tzinfo=UTC),
    datetime(2026, 1, 12, tzinfo=UTC),
]
PARTIAL = 3  # S4's index
_MEMORY = {  # service -> memory limit per snapshot (None: no row)
    "a": [-1, -1, -1, None, 512, 512, 512],
    "b": [512, 512, -1, -1, -1, 512, -1],
    "c": [512, 512, 512, 512, 512, -1, -1],
    "d": [-1, 512, -1, -1, -1, -1, -1],
    "e": [512] * 7,
}
_REPLICAS = {"e": [1, 0, 0, 0, 0, 0, 0]}
# key "ci": admin S1-S3, then editor; never expires S1-S5; probed in S5 (beyond its claimed
# scope) and S6 (as claimed). Key "ro": a viewer that expires, never probed.
_ADMIN_UNTIL = 3
_NEVER_UNTIL = 5
_PROBES = {4: True, 5: False}  # snapshot index -> reached beyond its claimed scope


def review_catalogue() -> Catalogue:
    return Catalogue.load([CHECKS], builtin=False)


def _services(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"svc-{name}",
            "name": HOSTILE if name == "a" else name,
            "team_id": "t-1",
            "project_id": "p-1",
            "environment_id": "e-prod",
            "memory_limits_megabytes": limits[n],
            "replicas": _REPLICAS.get(name, [1] * 7)[n],
        }
        for name, limits in _MEMORY.items()
        if limits[n] is not None
    ]


def _credentials(n: int) -> list[dict[str, Any]]:
    expires = None if n < _NEVER_UNTIL else datetime(2026, 6, 1, tzinfo=UTC)
    role = "admin" if n < _ADMIN_UNTIL else "editor"
    return [
        {"name": "ci", "is_api_key": True, "key_id": "k-ci", "key_name": "ci deployer",
         "role": role, "access": "all", "expires_at": expires},
        {"name": "ro", "is_api_key": True, "key_id": "k-ro", "key_name": "read only",
         "role": "viewer", "access": "all", "expires_at": datetime(2026, 6, 1, tzinfo=UTC)},
    ]  # fmt: skip


def snapshot_tables(n: int) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {
        "teams": [{"id": "t-1", "name": "payments"}],
        "projects": [{"id": "p-1", "team_id": "t-1", "name": "shop"}],
        "environments": [{"id": "e-prod", "project_id": "p-1", "name": "production"}],
        "services": _services(n),
        "credentials": _credentials(n),
    }
    if n in _PROBES:
        tables["credential_probes"] = [
            {"credential_name": "ci", "resource_type": "service", "resource_id": "svc-b",
             "expected_visible": not _PROBES[n], "observed_visible": True,
             "status": "mismatch" if _PROBES[n] else "match"}
        ]  # fmt: skip
    if n == PARTIAL:
        tables["collection_errors"] = [
            {"endpoint": "services.list", "method": "GET", "team_id": "t-1", "project_id": "p-1",
             "environment_id": "e-prod", "status": 503, "error_type": "unavailable",
             "not_visible": False}
        ]  # fmt: skip
    return tables


def write_history(root: Path) -> Store:
    """The seven snapshots committed to a store on disk, in order."""
    store = Store.open(root)
    for n, at in enumerate(TIMES):
        writer = store.begin(snapshot_at=at)
        for name, rows in snapshot_tables(n).items():
            writer.write(name, rows)
        writer.commit(status="partial" if n == PARTIAL else "complete")
    return store


WAIVERS = """
[[waivers]]
check = "RVW001"
resources = ["svc-c"]
reason = "migration <b>planned</b>"
owner = "alice"
expires = 2026-01-08

[[waivers]]
check = "RVW001"
resources = ["svc-d"]
reason = "accepted until the rewrite"
owner = "bob"
expires = 2026-03-01

[[waivers]]
check = "RVW002"
resources = ["svc-e"]
reason = "old exception"
owner = "carol"
expires = 2025-12-31

[[waivers]]
check = "RVW002"
resources = ["svc-e"]
reason = "decommissioning"
owner = "dave"
expires = 2026-02-15
"""


def config_text(extra: Mapping[str, str] | None = None) -> str:
    """A config running only the review checks, with short times to fix."""
    lines = [
        "[audit]",
        f'checks = ["{CHECKS}"]',
        "builtin_checks = false",
        "[review]",
        "time_to_fix_days = { critical = 2, high = 5 }",
    ]
    return "\n".join(lines + [f"{k} = {v}" for k, v in (extra or {}).items()]) + "\n"
