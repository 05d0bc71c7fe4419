"""Webhook hosts classified at collection: every spelling of a private address, no lookup."""

from __future__ import annotations

import pytest

from toolkit.collect.conform import Owner
from toolkit.collect.webhook_address import PUBLIC, HostAddress, host_address
from toolkit.collect.webhooks import map_webhooks

LOOPBACK = "loopback (127/8)"


@pytest.mark.parametrize(
    ("host", "address", "kind"),
    [
        # IPv6 spellings of an IPv4 address
        ("0:0:0:0:0:ffff:7f00:1", "127.0.0.1", LOOPBACK),
        ("::ffff:127.0.0.1", "127.0.0.1", LOOPBACK),
        ("::127.0.0.1", "127.0.0.1", LOOPBACK),
        ("64:ff9b::7f00:1", "127.0.0.1", LOOPBACK),
        ("64:ff9b::a00:1", "10.0.0.1", "private (10/8)"),
        ("2002:7f00:1::1", "127.0.0.1", LOOPBACK),
        ("64:ff9b::8.8.8.8", "8.8.8.8", PUBLIC),
        # inet_aton spellings and names with an embedded address
        ("0x7f000001", "127.0.0.1", LOOPBACK),
        ("2130706433", "127.0.0.1", LOOPBACK),
        ("0177.0.0.1", "127.0.0.1", LOOPBACK),
        ("10.1", "10.0.0.1", "private (10/8)"),
        ("7f000001.nip.io", "127.0.0.1", LOOPBACK),
        ("app-c0a80001.nip.io", "192.168.0.1", "private (192.168/16)"),
        ("app-192-168-1-5.sslip.io", "192.168.1.5", "private (192.168/16)"),
        ("api.lvh.me", "127.0.0.1", LOOPBACK),
        ("300.1.2.3.nip.io", None, PUBLIC),
        ("08.1.2.3", None, PUBLIC),
        # hex and octal parts padded with zeros, the range judged on the value
        ("0x00000007f.0.0.1", "127.0.0.1", LOOPBACK),
        ("00000000000177.0.0.1", "127.0.0.1", LOOPBACK),
        ("0x" + "0" * 40 + "7f000001", "127.0.0.1", LOOPBACK),
        ("0" * 40 + "12.0.0.1", "10.0.0.1", "private (10/8)"),
        ("0x00000100.0.0.1", None, PUBLIC),
        ("0x000100000000", None, "private name (a single label)"),
        # as IDNA maps the host: full-width forms, ideographic full stops
        ("１２７.０.０.１", "127.0.0.1", LOOPBACK),
        ("１２７。０。０。１", "127.0.0.1", LOOPBACK),
        ("127｡0｡0｡1", "127.0.0.1", LOOPBACK),
        ("０ｘ７Ｆ．１", "127.0.0.1", LOOPBACK),
        ("ｌｏｃａｌｈｏｓｔ", None, "loopback (localhost)"),
        ("①②⑦.0.0.1", "127.0.0.1", LOOPBACK),
        # ranges
        ("198.18.0.1", "198.18.0.1", "benchmarking (198.18/15)"),
        ("198.19.255.1", "198.19.255.1", "benchmarking (198.18/15)"),
        ("198.20.0.1", "198.20.0.1", PUBLIC),
        ("224.0.0.251", "224.0.0.251", "multicast (224/4)"),
        ("239.255.255.250", "239.255.255.250", "multicast (224/4)"),
        ("255.255.255.255", "255.255.255.255", "broadcast (255.255.255.255)"),
        ("240.0.0.1", "240.0.0.1", "reserved (240/4)"),
        ("0.0.0.0", "0.0.0.0", "unspecified (0.0.0.0, which reaches the host itself)"),  # noqa: S104 (a host to judge, nothing binds)
        ("100.64.0.1", "100.64.0.1", "shared (100.64/10)"),
        ("[::1]", "::1", "loopback (::1)"),
        ("fe80::1%eth0", "fe80::1", "link-local (fe80::/10)"),
        ("fd00::1", "fd00::1", "private (fc00::/7)"),
        ("ff02::1", "ff02::1", "multicast (ff00::/8)"),
        ("203.0.113.9", "203.0.113.9", PUBLIC),
        ("2001:4860::8888", "2001:4860::8888", PUBLIC),
        # names only a private resolver answers
        ("hooks.default.svc", None, "private name (.svc)"),
        ("hooks.default.svc.cluster.local", None, "private name (.svc.cluster.local)"),
        ("ci.corp.internal.", None, "private name (.internal)"),
        ("jenkins", None, "private name (a single label)"),
        ("localhost", None, "loopback (localhost)"),
        ("svc.example.com", None, PUBLIC),
        ("hooks.example.com", None, PUBLIC),
    ],
)
def test_hosts_are_classified(host: str, address: str | None, kind: str) -> None:
    assert host_address(host) == HostAddress(address, kind)


def test_the_collector_stores_the_kind() -> None:
    payload = [
        {"id": "a", "type": "team", "url": "http://[0:0:0:0:0:ffff:7f00:1]:9000/x"},
        {"id": "b", "type": "team", "url": "https://hooks.example.com/x"},
        {"id": "c", "type": "team", "url": "not a url"},
        {"id": "d", "type": "team", "url": "https://0x00000007f.0.0.1/hook"},
        {"id": "e", "type": "team", "url": "https://１２７.０.０.１/hook"},
    ]
    rows = {r["id"]: r for r in map_webhooks(payload, level="team", owner=Owner("t"))["webhooks"]}
    assert (rows["d"]["url_address"], rows["d"]["url_address_kind"]) == ("127.0.0.1", LOOPBACK)
    assert (rows["e"]["url_address"], rows["e"]["url_address_kind"]) == ("127.0.0.1", LOOPBACK)
    assert (rows["a"]["url_address"], rows["a"]["url_address_kind"]) == ("127.0.0.1", LOOPBACK)
    assert (rows["b"]["url_address"], rows["b"]["url_address_kind"]) == (None, PUBLIC)
    assert (rows["c"]["url_address"], rows["c"]["url_address_kind"]) == (None, None)
