"""WEB003 on rows of stores older than schema 3 (no ``url_address_kind``) judges each host in
SQL (``webhook_addresses``): it must read every host as the collector's classifier does, with
the same kind and the same address, so an old store and a new one report alike."""

from __future__ import annotations

import json

import pytest
from audit_fixtures import fixture_connection

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.check_run import run_check
from toolkit.collect.webhook_address import PUBLIC, host_address

CORPUS = (
    # IPv6 loopback and unspecified, however spelled
    "::1", "0::1", "0:0::1", "::0001", "0:0:0:0:0:0:0:1", "0000:0000:0000:0000:0000:0000:0000:0001",
    "::", "0::0", "0:0:0:0:0:0:0:0", "::0.0.0.1", "::0.0.0.0",
    # IPv4-mapped, also written out, in upper case or with a dotted tail
    "::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:7f00:1", "::FFFF:7F00:1",
    "0000:0000:0000:0000:0000:ffff:7f00:0001", "::ffff:a01:203", "::ffff:8.8.8.8",
    "::ffff:192.168.0.1", "::ffff:255.255.255.255",
    # IPv4-compatible, NAT64 and 6to4
    "::127.0.0.1", "::7f00:1", "::10.0.0.1", "::0.0.0.2", "64:ff9b::7f00:1", "64:ff9b::10.0.0.1",
    "64:ff9b::c0a8:1", "0064:ff9b:0:0:0:0:7f00:1", "64:ff9b::808:808", "64:ff9b:1::7f00:1",
    "2002:7f00:1::", "2002:0a00:0001::", "2002:c0a8:1::1", "2002:808:808::1",
    # Teredo (2001::/32): the classifier does not read the addresses it carries
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    # IPv6 ranges, zone ids, upper case; fc::1 is 00fc::1, no ULA
    "fe80::1%eth0", "fe80::1%25eth0", "FE80::1", "fe80:0:0:0:0:0:0:1", "febf::1", "fec0::1",
    "ff02::1", "fc00::1", "fd12:3456::1", "fc::1", "fe00::1", "f::1",
    "2001:4860:4860::8888", "2606:4700::1111", "2001:db8:0:0:1:0:0:1", "1:0:0:2:0:0:0:3",
    "::1:2:3:4:5:6:7", "1:2:3:4:5:6:7::",
    # not IPv6 addresses ipaddress reads
    "1::2::3", "12345::1", ":::1", "::1::", ":1::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7::8", "::ffff:999.1.1.1", "::ffff:01.2.3.4", "::ffff:127.1", "::g",
    "1.2.3.4::",
    # IPv4 in every spelling resolvers accept, and the names that stand for an address
    "127.0.0.1", "127.0.0.1%eth0", "0x7f000001", "2130706433", "0177.0.0.1", "127.1", "10.1",
    "08.1.2.3", "0.0.0.0",  # noqa: S104 (a host to judge, nothing binds)
    "0.1.2.3", "100.64.0.1", "169.254.169.254", "172.31.0.1",
    "172.32.0.1", "192.168.1.1", "198.19.0.7", "224.0.0.251", "240.0.0.1", "255.255.255.255",
    "203.0.113.9", "0x08080808", "10.0.0.1.nip.io", "app-192-168-1-5.sslip.io",
    "7f000001.nip.io", "app-c0a80001.nip.io", "10.0.0.010.nip.io", "300.1.2.3.nip.io",
    "8.8.8.8.nip.io", "api.lvh.me", "localtest.me",
    # hex and octal parts padded with zeros (no limit: the range is judged on the value)
    "0x00000007f.0.0.1", "00000000000177.0.0.1", "0x" + "0" * 40 + "7f000001",
    "0" * 40 + "12.0.0.1", "0" * 60 + "1", "0x" + "0" * 50, "0x00ffffffff", "037777777777",
    "040000000000", "0x000100000000", "0x00000100.0.0.1", "0x" + "f" * 40, "0" * 30 + "7" * 12,
    "0377.0x000ffffff", "0x1.0x000ffffff",
    # full-width forms and ideographic full stops, as IDNA maps them (the fallback translates
    # the full-width digits, letters and ".-:%[]"; NFKC's rarer mappings, ① for 1, it cannot)
    "１２７.０.０.１", "１２７。０。０。１", "127｡0｡0｡1", "１０．１", "０ｘ７Ｆ．１",
    "ｌｏｃａｌｈｏｓｔ", "ｈｏｏｋｓ．ｄｅｆａｕｌｔ．ｓｖｃ", "app-７ｆ０００００１.nip.io",
    "：：ｆｆｆｆ：７ｆ００：１", "ｈｏｏｋｓ．ｅｘａｍｐｌｅ．ｃｏｍ",
    # names
    "localhost", "localhost.", "api.localhost", "jenkins", "ci.corp.internal", "printer.local",
    "nas.home.arpa", "hooks.default.svc", "hooks.default.svc.cluster.local", "a.cluster.local",
    "x.localdomain", "hooks.example.com", "fcc.example.org", "internal.example.com",
)  # fmt: skip

WEB003 = next(spec for spec in discover_checks([BUILTIN_CHECKS]) if spec.id == "WEB003")


@pytest.fixture(scope="module")
def fallback() -> dict[str, tuple[str, str | None]]:
    """Each host's kind and address as WEB003 judges it with no collected kind."""
    rows = [
        {"id": f"w{i}", "team_id": "t1", "type": "team", "url_scheme": "https", "url_host": host}
        for i, host in enumerate(CORPUS)
    ]
    con = fixture_connection(
        {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": {"webhooks": rows}}]}
    )
    judged: dict[str, tuple[str, str | None]] = {}
    for row in run_check(con, WEB003).to_pylist():
        evidence = json.loads(row["evidence"])
        judged[row["resource_name"]] = (evidence["kind"], evidence["address"])
    return judged


@pytest.mark.parametrize("host", CORPUS)
def test_the_fallback_reads_a_host_as_the_collector_does(
    fallback: dict[str, tuple[str, str | None]], host: str
) -> None:
    collected = host_address(host)
    assert fallback[host] == (collected.kind, collected.address)


@pytest.mark.parametrize(
    ("host", "kind", "address"),
    [
        ("0::1", "loopback (::1)", "::1"),
        ("::0001", "loopback (::1)", "::1"),
        ("0000:0000:0000:0000:0000:ffff:7f00:0001", "loopback (127/8)", "127.0.0.1"),
        ("64:ff9b::10.0.0.1", "private (10/8)", "10.0.0.1"),
        ("2002:0a00:0001::", "private (10/8)", "10.0.0.1"),
        ("FE80::1", "link-local (fe80::/10)", "fe80::1"),
        ("1:0:0:2:0:0:0:3", PUBLIC, "1:0:0:2::3"),
        ("fc::1", PUBLIC, "fc::1"),
        ("::ffff:999.1.1.1", PUBLIC, None),
        ("0x00000007f.0.0.1", "loopback (127/8)", "127.0.0.1"),
        ("00000000000177.0.0.1", "loopback (127/8)", "127.0.0.1"),
        ("0x000100000000", "private name (a single label)", None),
        ("１２７.０.０.１", "loopback (127/8)", "127.0.0.1"),
        ("１２７。０。０。１", "loopback (127/8)", "127.0.0.1"),
    ],
)
def test_spot_checks(
    fallback: dict[str, tuple[str, str | None]], host: str, kind: str, address: str | None
) -> None:
    """Hand-written, so the fallback and the classifier cannot be wrong alike unnoticed."""
    assert fallback[host] == (kind, address)


def test_aggregating_the_address_computes_each_stage_once() -> None:
    # Each stage of webhook_addresses reads the one before many times. Inlined into a query
    # that aggregates the address, the stages multiplied one another: grouping 105,930
    # webhooks by address ran for minutes. The plan must keep the stages computed once, as
    # materialized CTEs (a check on the plan: a timed test would fail only on large stores).
    hosts = ["0x7f000001", "127.1", "::1", "hooks.example.com"]
    rows = [{"id": f"w{i}", "team_id": "t1", "url_host": host} for i, host in enumerate(hosts)]
    con = fixture_connection(
        {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": {"webhooks": rows}}]}
    )
    query = "select address, count(*) from webhook_addresses group by address"
    plan = json.loads(con.execute(f"explain (format json) {query}").fetchall()[0][1])

    def names(node: dict[str, object]) -> list[str]:
        extra = node.get("extra_info") or {}
        own = [str(extra["CTE Name"])] if isinstance(extra, dict) and "CTE Name" in extra else []
        children = node.get("children") or []
        assert isinstance(children, list)
        return own + [name for child in children for name in names(child)]

    assert {"groups", "addresses"} <= {name for node in plan for name in names(node)}
    assert sorted(con.execute(query).fetchall(), key=str) == [
        ("127.0.0.1", 2), ("::1", 1), (None, 1)
    ]  # fmt: skip
