"""Built-in checks that say ``-- history: snapshot`` or ``previous`` judge exactly as over
the whole history.

Six daily snapshots of the demo's simulated platform (its clock moves restarts, crashes,
rotations and deployments between them, and the demo's operator squeezes a memory limit
into OOM kills and a crash loop) are audited twice: with the checks as they ship, where the
engine reads the judged rows of those checks in a window of a few snapshots, and with every
check forced to read the whole history. Rows, details, findings and resolve times must be
the same, and the engine's own guard must not refuse any built-in check. A latest-only
audit of the store (its connection opens only the window's files) must also judge like one
of a connection to the whole store.
"""

from __future__ import annotations

import dataclasses
import io
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from toolkit.audit import Catalogue, CheckDefinitionError, run_audit
from toolkit.pipeline.demo import snapshot_days
from toolkit.pipeline.demo_steps import demo_settings, forget_tokens
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from toolkit.audit import AuditResult

DAYS = 6


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    out = tmp_path_factory.mktemp("history-window")
    sim = Simulator(seed=11, services=30)
    with SimulatorServer(sim) as server:
        settings = demo_settings(sim, server.base_url, out)
        try:
            taken, _ = snapshot_days(Console(file=io.StringIO()), sim, settings, days=DAYS)
        finally:
            forget_tokens(settings)
    assert taken == DAYS
    yield Store.open(settings.store_url)


def _everything(result: AuditResult) -> tuple[object, ...]:
    rows = sorted(map(str, result.rows.to_pylist()))
    details = sorted(map(str, result.details.to_pylist()))
    findings = result.findings.sort_values(["check_id", "resource_id"]).to_dict("records")
    return rows, details, str(findings), str(result.mttr().to_dict("records"))


def test_built_in_checks_declare_short_histories() -> None:
    histories = {s.history for s in Catalogue.load().specs}
    assert histories == {"snapshot", "previous", "all"}


@pytest.mark.parametrize("compare_to", [None, 1], ids=["previous", "second"])
def test_a_window_judges_like_the_whole_history(store: Store, compare_to: int | None) -> None:
    shipped = Catalogue.load()
    whole = Catalogue(
        tuple(dataclasses.replace(s, history="all") for s in shipped.specs), shipped.overrides
    )
    ids = [s.snapshot_id for s in store.snapshots()]
    assert len(ids) == DAYS
    compare = None if compare_to is None else ids[compare_to]
    got = run_audit(store, checks=shipped, compare_to=compare)
    expected = run_audit(store, checks=whole, compare_to=compare)
    assert _everything(got) == _everything(expected)
    assert got.details.num_rows > 0 and len(got.findings) > 0


def test_a_check_reading_further_back_than_its_history_line_is_refused(
    store: Store, tmp_path: Path
) -> None:
    # In alarm from a service's fourth snapshot on: over the whole history the judged (sixth)
    # snapshot is in alarm, in the window of its three snapshots it is not.
    (tmp_path / "TST009.sql").write_text(
        "-- id: TST009\n-- title: Seen four times\n-- severity: low\n-- area: replicas\n"
        "-- risk: none\n-- remediation: none\n-- history: snapshot\n"
        "select s.snapshot_id, 'service' as resource_type, s.id as resource_id,\n"
        "    s.name as resource_name, s.team_id, s.project_id, s.environment_id,\n"
        "    s.id as service_id, if(count(*) over (partition by s.id order by n.seq) >= 4,\n"
        "    'alarm', 'ok') as status, 'seen' as reason, '{}'::json as evidence\n"
        "from services s join snapshots n using (snapshot_id)\n",
        encoding="utf-8",
    )
    catalogue = Catalogue.load([tmp_path], builtin=False)
    with pytest.raises(CheckDefinitionError, match=r"TST009\.sql: says '-- history: snapshot'"):
        run_audit(store, checks=catalogue)
    # read whole, as the message says, it judges
    whole = Catalogue(tuple(dataclasses.replace(s, history="all") for s in catalogue.specs), {})
    assert len(run_audit(store, checks=whole).findings) > 0


@pytest.mark.parametrize("compare_to", [None, 1], ids=["previous", "second"])
def test_a_latest_only_audit_of_the_store_judges_like_one_of_a_connection(
    store: Store, compare_to: int | None
) -> None:
    # The store's own latest-only connection opens only the window's files and its scope
    # limits only `snapshots`; a connection to the whole store is limited by the scope.
    ids = [s.snapshot_id for s in store.snapshots()]
    compare = None if compare_to is None else ids[compare_to]
    got = run_audit(store, latest_only=True, compare_to=compare)
    expected = run_audit(store.duckdb(), latest_only=True, compare_to=compare)
    assert _everything(got) == _everything(expected)
    assert got.details.num_rows > 0 and len(got.findings) > 0


@pytest.mark.parametrize("compare_to", [None, 1], ids=["previous", "second"])
def test_latest_only_gives_the_states_of_the_whole_history(
    store: Store, compare_to: int | None
) -> None:
    # Checks that say `snapshot` or `previous` judge the compared snapshot from the one
    # before it too: REP003 needs its lag there, or each of its open findings looks new and
    # each resolved one is missed. Only "regressed" needs what came before the window.
    shipped = Catalogue.load()
    short = Catalogue(tuple(s for s in shipped.specs if s.history != "all"), shipped.overrides)
    ids = [s.snapshot_id for s in store.snapshots()]
    compare = None if compare_to is None else ids[compare_to]

    def states(result: AuditResult) -> dict[tuple[str, str], str]:
        f = result.findings
        rows = zip(f.check_id, f.resource_id, f.state, strict=True)
        return {(c, r): "new" if s == "regressed" else s for c, r, s in rows}

    full = states(run_audit(store, checks=short, compare_to=compare))
    fast = states(run_audit(store, checks=short, latest_only=True, compare_to=compare))
    assert fast == full
    lagged = {state for (check, _), state in full.items() if check == "REP003"}
    assert "open" in lagged, lagged  # a state a missing lag got wrong
