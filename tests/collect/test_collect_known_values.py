"""Free text that repeats a variable value the crawl read is masked, whichever was collected
first; the values themselves are held in memory only."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from collect_world import crawl_world

from toolkit.collect import CrawlOptions
from toolkit.collect.known_values import KnownValues
from toolkit.collect.row_buffer import data_schema
from toolkit.config.collect_section import collect_from_file
from toolkit.errors import ConfigError
from toolkit.sim.world import Deployment, Variable

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.sim import Simulator, SimulatorServer

# Innocent names, values no scrubber form recognises: only the values read can mask them.
TEAM_VALUE = "Zq8vT2mW-upstream-7741"
SERVICE_VALUE = "k7P2xR9sLq4N"
SHORT_VALUE = "ab12cd"  # under the threshold: ordinary text may hold it
WORD_VALUE = "eu-central.internal"  # a plain dotted word: a host name, not a secret


@pytest.mark.parametrize(
    ("value", "worth"),
    [
        ("k7P2xR9sLq4N", True),
        ("Correct Horse Battery", True),
        ("ab12cd", False),
        ("12345678901", False),
        ("production", False),
        ("db.internal.example", False),
        ("${{team.DATABASE_PASSWORD}}", False),
        ("postgres://app:${{DB_PASSWORD}}@db/app", False),
    ],
)
def test_which_values_are_worth_masking(value: str, worth: bool) -> None:
    assert KnownValues().worth_masking(value) is worth


def test_masking_is_exact_longest_first_and_never_shows_a_value() -> None:
    known = KnownValues()
    for value in ("k7P2xR9sLq4N", "k7P2xR9sLq4N-extended", 'quo"te-Value9'):
        known.add(value)
    assert known.mask("a k7P2xR9sLq4N-extended b k7P2xR9sLq4N c") == "a *** b *** c"
    assert known.mask('{"v":"quo\\"te-Value9"}') == '{"v":"***"}'  # the JSON-escaped form too
    assert known.mask("k7P2xR9sLq4 is one short") == "k7P2xR9sLq4 is one short"
    assert "k7P2" not in repr(known)
    known.clear()
    assert not known and known.mask("k7P2xR9sLq4N") == "k7P2xR9sLq4N"


@pytest.mark.parametrize("min_length", [4, 5, 8, 9, 12])
def test_a_value_is_found_at_any_offset_whatever_the_threshold(min_length: int) -> None:
    """Text is looked up only at every few positions: a value must be found wherever it sits."""
    known = KnownValues(min_length)
    values = [("Q" + "x7k" * 9)[: min_length + n - 1] + "Z" for n in range(4)]
    for value in values:
        known.add(value)
    for value in values:
        for offset in range(min_length + 2):
            text = "-" * offset + value + "-" * 3
            assert known.mask(text) == "-" * offset + "***" + "-" * 3, (value, offset)


@pytest.mark.parametrize("min_length", [4, 8, 12])
def test_values_sharing_a_prefix_spread_over_the_index_and_are_all_found(min_length: int) -> None:
    """A platform's values share prefixes (``CANARY…``, ``postgres://app:``, ``sk_live_``):
    indexed by their first pieces, each add and each lookup walked every value with that
    prefix, quadratic in the crawl's size. Each value is indexed where its pieces are rarest,
    and is still found wherever it sits in a text."""
    known = KnownValues(min_length)
    values = [f"postgres://app:sk_live_{n * 7919:08x}{n:04x}@db/app" for n in range(2000)]
    for value in values:
        known.add(value)
    buckets = [held for held in known._index.values() if not isinstance(held, str)]
    assert max(map(len, buckets), default=1) <= len(values) // 10  # not one bucket of all
    for value in values[::97]:
        for offset in range(min_length + 2):
            text = "-" * offset + value + " and " + values[0][:-3]
            assert known.mask(text) == "-" * offset + "*** and " + values[0][:-3], offset


def test_the_threshold_is_configurable_and_bounded(tmp_path: Path) -> None:
    assert KnownValues(min_length=6).worth_masking(SHORT_VALUE)
    with pytest.raises(ValueError, match="4 or more"):
        KnownValues(min_length=2)
    options = collect_from_file({"value_mask_min_length": 12}, tmp_path / "p.toml")
    assert options == CrawlOptions(value_mask_min_length=12)
    with pytest.raises(ConfigError, match="value_mask_min_length must be 4 or more"):
        collect_from_file({"value_mask_min_length": 1}, tmp_path / "p.toml")


def _rows() -> dict[str, list[dict[str, object]]]:
    return {
        "deployments": [
            {"id": "d1", "service_id": "s1", "error": f"bad {SERVICE_VALUE}",
             "crashing_reasons": [f"exit {SERVICE_VALUE}", None, "oom"], "name": SERVICE_VALUE},
            {"id": "d2", "service_id": "s1", "error": None, "crashing_reasons": None},
        ],
        "collection_errors": [{"endpoint": "x", "message": f"echo: {SERVICE_VALUE}"}],
    }  # fmt: skip


def test_dict_rows_and_arrow_tables_are_masked_alike() -> None:
    known = KnownValues()
    known.add(SERVICE_VALUE)
    as_dicts = _rows()
    known.mask_tables(as_dicts)
    assert as_dicts["deployments"][0]["error"] == "bad ***"
    assert as_dicts["deployments"][0]["crashing_reasons"] == ["exit ***", None, "oom"]
    assert as_dicts["deployments"][0]["name"] == SERVICE_VALUE  # not a free-text column
    assert as_dicts["collection_errors"][0]["message"] == "echo: ***"
    rows = _rows()
    deployments = [{k: v for k, v in r.items() if k != "name"} for r in rows["deployments"]]
    schema = data_schema("deployments")
    full = [{f.name: r.get(f.name) for f in schema} for r in deployments]
    as_arrow: dict[str, object] = {"deployments": pa.Table.from_pylist(full, schema=schema)}
    known.mask_tables(as_arrow)  # type: ignore[arg-type]
    table = as_arrow["deployments"]
    assert isinstance(table, pa.Table) and table.schema == schema
    assert table["error"].to_pylist() == ["bad ***", None]
    assert table["crashing_reasons"].to_pylist() == [["exit ***", None, "oom"], None]


def test_free_text_repeating_a_variable_value_is_masked_in_either_order(
    fresh: tuple[Simulator, SimulatorServer],
) -> None:
    """With one call at a time the crawl asks `templates.list` before any variable, and a
    service's deployment history after its team's variables: the template description is
    collected before the value that reveals its secret, the deployment error after."""
    sim, server = fresh
    world = sim.world
    service = next(iter(world.services.values()))
    world.set_variable("team", service.team_id, Variable("UPSTREAM", TEAM_VALUE, [world.now]))
    for name, value in (("BUILD", SERVICE_VALUE), ("SHORT", SHORT_VALUE), ("HOST", WORD_VALUE)):
        world.set_variable("service", service.id, Variable(name, value, [world.now]))
    template = next(iter(world.templates.values()))
    template.description = f"sample with {SERVICE_VALUE} and {SHORT_VALUE} on {WORD_VALUE}"
    service.run_command = f"./server --seed {SERVICE_VALUE}"
    service.new_deployments.append(
        Deployment("d-new", service.id, world.now - timedelta(minutes=5), "FAILED", "ab" * 20,
                   "deploy", "dev", error=f"upstream refused {TEAM_VALUE}")
    )  # fmt: skip
    crawled = crawl_world(server, sim.keys["admin"], concurrency=1)
    rows = crawled.rows
    dumped = json.dumps(rows, default=str) + repr(crawled.output.result)
    assert TEAM_VALUE not in dumped and SERVICE_VALUE not in dumped
    [described] = [t for t in rows["templates"] if t["id"] == template.id]
    assert described["description"] == f"sample with *** and {SHORT_VALUE} on {WORD_VALUE}"
    [failed] = [d for d in rows["deployments"] if d["id"] == "d-new"]
    assert failed["error"] == "upstream refused ***"
    [listed] = [s for s in rows["services"] if s["id"] == service.id]
    assert listed["run_command"] == "./server --seed ***"
    built = [v for v in rows["variables"] if v["name"] == "BUILD"]
    assert built and built[0]["fingerprint"]  # the value was read, and only fingerprinted
