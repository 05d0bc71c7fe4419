"""The content hash: both definitions pinned, v2 spelled out, independent of order and batches."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest
from store_harness import T0, sample_rows

from toolkit.snapshot import (
    TABLES,
    canonical_rows,
    content_hash,
    content_hash_of_digests,
    row_digests,
)
from toolkit.snapshot.validation import to_arrow

SID = "01a1fd28-1ed4-7a72-a3c7-386355369687"


def _tables(version: int = 0) -> dict[str, pa.Table]:
    return {n: to_arrow(TABLES[n], r, SID, T0) for n, r in sample_rows(version).items()}


def _canonical(tables: dict[str, pa.Table]) -> dict[str, list[pa.Array]]:
    return {name: [canonical_rows(data)] for name, data in tables.items()}


def _v2(tables: dict[str, pa.Table]) -> str:
    return content_hash_of_digests(SID, T0, {n: [row_digests(d)] for n, d in tables.items()})


# Written by toolkit 0.1.0 (content hash v1) for sample_rows(0) and sample_rows(1): a stored
# v1 snapshot must keep verifying whatever this module becomes.
V1_PINNED = {
    0: "78b43873f524bec7a5ea86fe6e6b624f91a161ae45162f6fc3abf3b9fb0c309c",
    1: "883eed8894b4351d823793ef5c7f643d7ea819abcf6217d6c885d186fc30c99f",
}
V2_PINNED = {
    0: "266f14377f1e3c94659b1dfe1044e6b663e3f9f8ddb93b47f56320b7c5702bd0",
    1: "7c37018600aaeda5b28544b33b4f8975c94ee918457d18e401f7c1ff152e24fc",
}


@pytest.mark.parametrize("version", [0, 1])
def test_both_definitions_are_pinned(version: int) -> None:
    canonical = _canonical(_tables(version))
    assert content_hash(SID, T0, canonical, version=1) == V1_PINNED[version]
    assert content_hash(SID, T0, canonical, version=2) == V2_PINNED[version]
    assert content_hash(SID, T0, canonical) == V2_PINNED[version]  # the current definition
    assert _v2(_tables(version)) == V2_PINNED[version]


def test_v2_is_what_the_module_docstring_says() -> None:
    tables = _tables()
    expected = hashlib.sha256(b"platform-audit content v2\n")
    micros = (T0 - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    expected.update(f'{{"snapshot_at":{micros},"snapshot_id":"{SID}"}}\n'.encode())
    for name in sorted(tables):
        rows = canonical_rows(tables[name]).to_pylist()
        for row in rows:  # the canonical text is JSON with sorted keys and no nulls
            assert json.dumps(json.loads(row), sort_keys=True, separators=(",", ":")) == row
        digests = sorted(hashlib.sha256(row.encode()).digest() for row in rows)
        table_digest = hashlib.sha256(b"".join(digests)).hexdigest()
        expected.update(f"{name} {len(rows)} {table_digest}\n".encode())
    assert _v2(tables) == expected.hexdigest()


def test_v2_ignores_row_order_and_batches() -> None:
    tables = _tables()
    services = tables["services"]
    reversed_rows = services.take(pa.array(range(services.num_rows - 1, -1, -1)))
    batches = [row_digests(reversed_rows.slice(i, 1)) for i in range(services.num_rows)]
    digests = {n: [row_digests(d)] for n, d in tables.items()} | {"services": batches}
    assert content_hash_of_digests(SID, T0, digests) == _v2(tables)


@pytest.mark.parametrize(
    "change",
    ["changed value", "dropped row", "duplicated row", "row moved to another table", "other id"],
)
def test_v2_sees_every_change(change: str) -> None:
    tables = _tables()
    services = tables["services"]
    sid = SID
    if change == "changed value":
        rows = services.to_pylist()
        rows[1]["replicas"] = 7
        tables["services"] = pa.Table.from_pylist(rows, schema=services.schema)
    elif change == "dropped row":
        tables["services"] = services.slice(1)
    elif change == "duplicated row":
        tables["services"] = pa.concat_tables([services, services.slice(0, 1)])
    elif change == "row moved to another table":
        tables["deployments"] = tables["deployments"].slice(1)
        tables["deployments_archive"] = tables["deployments"].slice(0, 1)
    else:
        sid = SID.replace("7a72", "7a73")
    found = content_hash_of_digests(sid, T0, {n: [row_digests(d)] for n, d in tables.items()})
    assert found != V2_PINNED[0]


def test_canonical_rows_of_slices_are_the_rows_of_the_whole() -> None:
    data = pa.table(
        {
            "tags": pa.array(
                [["a", 'q"uote'], None, [], ["b", None], ["c"]], pa.list_(pa.string())
            ),
            "labels": pa.array(
                [[("k", 1)], [], None, [("x", None), ("y", 2)], [("z", 3)]],
                pa.map_(pa.string(), pa.int64()),
            ),
            "limits": pa.array(
                [{"cpu": 1, "mem": None}, None, {"cpu": 3, "mem": 4}, {"cpu": None, "mem": 5}, {}],
                pa.struct([("cpu", pa.int64()), ("mem", pa.int64())]),
            ),
            "ratio": pa.array([0.1, None, 2.5, 1e-7, 3.0], pa.float64()),
        }
    )
    whole = canonical_rows(data).to_pylist()
    assert whole[0] == '{"labels":[["k",1]],"limits":{"cpu":1},"ratio":0.1,"tags":["a","q\\"uote"]}'
    assert whole[4] == '{"labels":[["z",3]],"limits":{},"ratio":3.0,"tags":["c"]}'  # all null
    batch = data.to_batches()[0]
    for start in range(5):
        for length in range(1, 6 - start):
            assert canonical_rows(batch.slice(start, length)).to_pylist() == whole[start:][:length]
            assert canonical_rows(data.slice(start, length)).to_pylist() == whole[start:][:length]


def test_an_unknown_definition_is_refused() -> None:
    with pytest.raises(ValueError, match="content hash version 3"):
        content_hash(SID, T0, {}, version=3)
