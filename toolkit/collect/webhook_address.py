"""What a webhook's host points at, judged at collection by :mod:`ipaddress`, with no lookup.

WEB003 alarms on a webhook that makes the platform call a loopback, private or otherwise
non-public address, or a name only a private resolver answers. The host is read in every
spelling that reaches the same address without a DNS query:

* as IDNA (UTS-46) maps it before any lookup: NFKC, so full-width digits and letters
  (U+FF10...) are ASCII ones, and the ideographic full stops (U+3002, U+FF61) are dots;
* IPv4 as resolvers accept it (``inet_aton``: 1 to 4 parts, decimal, octal ``0...`` or hex
  ``0x...``, with any number of leading zeros): ``0x7f000001``, ``2130706433``,
  ``0177.0.0.1``, ``0x00000007f.0.0.1`` and ``127.1`` are 127.0.0.1;
* IPv6, and the IPv4 address it carries: mapped (``::ffff:7f00:1``, also written out as
  ``0:0:0:0:0:ffff:7f00:1``), compatible (``::127.0.0.1``), NAT64 (``64:ff9b::/96``), 6to4;
* names public DNS answers with a fixed or embedded address: ``lvh.me`` and
  ``localtest.me`` (127.0.0.1), ``a.b.c.d.nip.io``, ``app-a-b-c-d.sslip.io`` and the hex form
  ``7f000001.nip.io``.

>>> host_address("0:0:0:0:0:ffff:7f00:1")
HostAddress(address='127.0.0.1', kind='loopback (127/8)')
>>> host_address("hooks.default.svc").kind
'private name (.svc)'
>>> host_address("hooks.example.com").kind
'public'
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["PUBLIC", "HostAddress", "host_address"]

PUBLIC = "public"

# First match wins: the narrower range comes before the one that holds it.
_RANGES = tuple(
    (ipaddress.ip_network(network), kind)
    for network, kind in (
        ("0.0.0.0/32", "unspecified (0.0.0.0, which reaches the host itself)"),
        ("0.0.0.0/8", "non-routable (0/8)"),
        ("127.0.0.0/8", "loopback (127/8)"),
        ("10.0.0.0/8", "private (10/8)"),
        ("172.16.0.0/12", "private (172.16/12)"),
        ("192.168.0.0/16", "private (192.168/16)"),
        ("100.64.0.0/10", "shared (100.64/10)"),
        ("169.254.0.0/16", "link-local (169.254/16)"),
        ("198.18.0.0/15", "benchmarking (198.18/15)"),
        ("224.0.0.0/4", "multicast (224/4)"),
        ("255.255.255.255/32", "broadcast (255.255.255.255)"),
        ("240.0.0.0/4", "reserved (240/4)"),
        ("::1/128", "loopback (::1)"),
        ("::/128", "unspecified (::, which reaches the host itself)"),
        ("fc00::/7", "private (fc00::/7)"),
        ("fe80::/10", "link-local (fe80::/10)"),
        ("fec0::/10", "site-local (fec0::/10)"),
        ("ff00::/8", "multicast (ff00::/8)"),
    )
)
# UTS-46 reads these as label separators; NFKC leaves U+3002 and makes U+FF61 (half-width) it
_FULL_STOPS = {0x3002: "."}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPATIBLE = ipaddress.ip_network("::/96")
# Hex and octal parts may be padded with zeros at will (the range is checked on the value);
# a decimal part has no leading zero (that makes it octal), so 10 digits hold any 32 bits.
_PART = r"(?:0x[0-9a-f]+|0[0-7]*|[1-9][0-9]{0,9})"
_INET_ATON = re.compile(rf"{_PART}(?:\.{_PART}){{0,3}}")
_FIXED = re.compile(r"(^|\.)(lvh|localtest)\.me$")
_EMBEDDED = re.compile(
    r"(?:^|[.-])((?:[0-9]{1,3}[.-]){3}[0-9]{1,3}|[0-9a-f]{8})\.(?:nip|sslip)\.io$"
)
# Names no public DNS answers, so only a private network's resolver can: Kubernetes service
# names, .internal (reserved for private use by ICANN, 2024), .local (mDNS, RFC 6762),
# home.arpa (RFC 8375), the suffixes ICANN will never delegate as private networks use them
# (.corp, .home), and .lan and .localdomain. Longest first.
_PRIVATE_SUFFIXES = (
    "svc.cluster.local", "cluster.local", "home.arpa", "localdomain", "internal", "local",
    "svc", "corp", "home", "lan",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HostAddress:
    """The IP address a host is or names (None for a name), and what kind of target it is:
    :data:`PUBLIC`, or the range or name rule that makes it private (``private (10/8)``,
    ``private name (.svc)``)."""

    address: str | None
    kind: str


def host_address(host: str) -> HostAddress:
    """Classify a URL's host (as ``urlsplit`` gives it: lower case, no brackets), read as IDNA
    maps it (full-width 127.0.0.1 is 127.0.0.1)."""
    name = unicodedata.normalize("NFKC", host).translate(_FULL_STOPS)
    name = name.strip("[]").rstrip(".").lower()
    ip = _ip(name)
    if ip is not None:
        kind = next((kind for network, kind in _RANGES if ip in network), PUBLIC)
        return HostAddress(str(ip), kind)
    if name == "localhost" or name.endswith(".localhost"):
        return HostAddress(None, "loopback (localhost)")
    if "." not in name:
        return HostAddress(None, "private name (a single label)")
    suffix = next((s for s in _PRIVATE_SUFFIXES if name.endswith(f".{s}")), None)
    return HostAddress(None, PUBLIC if suffix is None else f"private name (.{suffix})")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``name`` reaches without a lookup; an IPv6 address that carries an IPv4
    address is read as that IPv4 address."""
    if _FIXED.search(name):
        return ipaddress.IPv4Address("127.0.0.1")
    embedded = _EMBEDDED.search(name)
    if embedded:
        text = embedded.group(1)
        if len(text) == 8 and "." not in text and "-" not in text:
            return ipaddress.IPv4Address(int(text, 16))
        name = text.replace("-", ".")
    if _INET_ATON.fullmatch(name):
        return _inet_aton(name)
    try:
        ip = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour or ip


def _inet_aton(name: str) -> ipaddress.IPv4Address | None:
    """``inet_aton``'s reading: the last part fills the bytes the others leave."""
    parts = [int(p, 16) if p.startswith("0x") else int(p, 8) if p.startswith("0") else int(p)
             for p in name.split(".")]  # fmt: skip
    *head, last = parts
    if any(p > 255 for p in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    value = sum(p << (8 * (3 - i)) for i, p in enumerate(head)) + last
    return ipaddress.IPv4Address(value)
