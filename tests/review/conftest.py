"""The hand-built history (review_world), written once per module, and its review."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from review_world import NOW, PERIOD, SHORT, WAIVERS, review_catalogue, write_history

from toolkit.audit import AuditRequest
from toolkit.review import gather_review

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.review import ReviewData
    from toolkit.snapshot import Store


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, Path]:
    root = tmp_path_factory.mktemp("review")
    waivers = root / "waivers.toml"
    waivers.write_text(WAIVERS, encoding="utf-8")
    return write_history(root / "store"), waivers


@pytest.fixture(scope="module")
def review(world: tuple[Store, Path]) -> ReviewData:
    store, waivers = world
    request = AuditRequest(checks=review_catalogue(), waivers=waivers)
    return gather_review(store, PERIOD, request, settings=SHORT, now=NOW)
