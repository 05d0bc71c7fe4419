"""The same store on an S3-compatible service: moto's server on loopback, end to end.

deltalake commits on S3 with conditional writes (``If-None-Match``); moto honours them
(a second put of an existing key with ``If-None-Match: *`` gets 412), so the store runs
with ``aws_conditional_put=etag`` and never with ``AWS_S3_ALLOW_UNSAFE_RENAME``.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import RetentionPolicy, Store

if TYPE_CHECKING:
    from collections.abc import Iterator

moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed")
boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")

BUCKET = "audit-store"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@pytest.fixture(scope="module")
def s3() -> Iterator[tuple[str, Any]]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
    client.create_bucket(Bucket=BUCKET)
    try:
        yield endpoint, client
    finally:
        server.stop()


def _open(endpoint: str, prefix: str) -> Store:
    options = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        **CREDENTIALS,
    }
    return Store.open(f"s3://{BUCKET}/{prefix}", storage_options=options)


def test_moto_refuses_overwrites_under_if_none_match(s3: tuple[str, Any]) -> None:
    _, client = s3
    client.put_object(Bucket=BUCKET, Key="probe", Body=b"1")
    with pytest.raises(client.exceptions.ClientError, match="PreconditionFailed"):
        client.put_object(Bucket=BUCKET, Key="probe", Body=b"2", IfNoneMatch="*")


def test_s3_store_end_to_end(s3: tuple[str, Any], write_snapshot: WriteSnapshot) -> None:
    endpoint, client = s3
    store = _open(endpoint, "team/store")
    assert repr(store) == "Store('s3://audit-store/team/store')"  # no credentials shown
    infos = [write_snapshot(store, at=T0 + timedelta(minutes=10 * i), version=i) for i in range(3)]
    keys = [
        o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="team/store/")["Contents"]
    ]
    assert any(k.startswith("team/store/services/_delta_log/") for k in keys)

    rows = fetch(store, "select distinct snapshot_id, replicas from services_latest")
    assert rows == [{"snapshot_id": infos[2].snapshot_id, "replicas": 3}]
    assert store.verify().ok
    # On S3 the views read Arrow datasets (DuckDB would need an extension download).
    con = store.duckdb(snapshot_ids=[infos[1].snapshot_id])
    readers = dict(con.execute("select table_name, reader from _table_readers").fetchall())
    assert readers["services"] == "dataset"
    only = con.execute("select distinct snapshot_id from services").fetchall()
    assert only == [(infos[1].snapshot_id,)]

    writer = store.begin(snapshot_at=T0 + timedelta(days=1))  # abandoned mid-way
    for name, table_rows in list(sample_rows(8).items())[:4]:
        writer.write(name, table_rows)
    assert store.verify().orphan_snapshot_ids == (writer.snapshot_id,)
    assert store.gc(min_age=timedelta(0)).removed_snapshot_ids == (writer.snapshot_id,)

    compacted = store.compact()
    assert compacted.files_after["deployments"] < compacted.files_before["deployments"]
    assert store.vacuum(retention_hours=0).removed["deployments"] >= 3

    pruned = store.apply_retention(RetentionPolicy(), now=T0 + timedelta(hours=1))
    assert len(pruned.pruned) == 2
    report = store.verify()
    assert report.ok and report.pruned == 2 and not report.orphans, report.summary()
    assert fetch(store, "select count(*) as n from deployments") == [{"n": 3}]
    latest = store.snapshots()[-1].snapshot_id
    filtered = fetch(
        store,
        "select count(*) as n from deployments where snapshot_id = ? and id >= ?",
        [latest, "dep"],
    )
    assert filtered == [{"n": 3}]
    assert fetch(store, "select count(*) as n from services_latest where name = 'api-1'") == [
        {"n": 1}
    ]


def test_a_data_file_gone_from_an_s3_store_is_a_store_error(
    s3: tuple[str, Any], write_snapshot: WriteSnapshot
) -> None:
    """On S3 the views read Arrow datasets, and DuckDB reports their read failure only by
    its message: this pins the text `store_read_failure` relies on, so an upgrade that
    changes it fails here rather than turning a missing file into a check's error."""
    from toolkit.audit import run_audit
    from toolkit.errors import StoreUnavailable

    endpoint, client = s3
    store = _open(endpoint, "gone/store")
    for i in range(2):
        write_snapshot(store, at=T0 + timedelta(minutes=i), version=i)
    opened = store.duckdb()  # its datasets list every file
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix="gone/store/services/")["Contents"]
    gone = sorted(o["Key"] for o in listed if o["Key"].endswith(".parquet"))[0]
    client.delete_object(Bucket=BUCKET, Key=gone)
    with pytest.raises(StoreUnavailable) as caught:
        run_audit(opened)
    message = str(caught.value)
    # one line naming the file, without the S3 client's terminal colours or XML lines
    assert "\n" not in message and "\x1b[" not in message, message
    # the reader named is the audit, or the first check that met the missing file
    assert re.match(r"(the audit|[A-Z]{3}[0-9]{3}) could not read the store \(", message), message
    assert gone.rsplit("/", 1)[1] in message and "store verify` checks every snapshot" in message
