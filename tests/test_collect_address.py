"""The address check: every address that is not globally routable is refused, IPv4 hidden in IPv6
included, and allow_private opens the source's own host only (never a redirect elsewhere)."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from tests.collectkit import rss, web, write_sources
from veille.collect import collect_corpus
from veille.collect.address import is_public_address

__all__ = ["web"]

TODAY = dt.date(2026, 7, 25)

# The reference, written from the IANA special-purpose address registries (not from ipaddress): the
# IPv4 blocks that are not globally reachable, plus multicast, 240/4 and the whole of 192.0.0.0/24
# and the 6to4 relay anycast 192.88.99.0/24.
_IPV4_NOT_GLOBAL = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
]
# IPv6 outside 2000::/3 is never global unicast; inside it, these are not globally reachable.
_IPV6_NOT_GLOBAL = [ipaddress.IPv6Network(n) for n in ("2001::/23", "2001:db8::/32", "3fff::/20")]


def _reference_v4(v4: int) -> bool:
    ip = ipaddress.IPv4Address(v4)
    return not any(ip in net for net in _IPV4_NOT_GLOBAL)


def _reference(text: str) -> bool:
    ip = ipaddress.ip_address(text)
    if isinstance(ip, ipaddress.IPv4Address):
        return _reference_v4(int(ip))
    value = int(ip)
    if value >> 32 == 0xFFFF:  # ::ffff:a.b.c.d
        return _reference_v4(value & 0xFFFF_FFFF)
    if value >> 32 == 0x64_FF9B << 64:  # 64:ff9b::a.b.c.d
        return _reference_v4(value & 0xFFFF_FFFF)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (deprecated IPv4-compatible)
        return _reference_v4(value & 0xFFFF_FFFF)
    if value >> 112 == 0x2002:  # 6to4: the IPv4 address is bits 16-48
        return _reference_v4((value >> 80) & 0xFFFF_FFFF)
    if value >> 125 != 0b001:  # not 2000::/3
        return False
    return not any(ip in net for net in _IPV6_NOT_GLOBAL)


# IPv4 values: anywhere, and inside each refused block (where mistakes hide).
_V4 = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from(_IPV4_NOT_GLOBAL).flatmap(
        lambda net: st.integers(int(net.network_address), int(net.broadcast_address))
    ),
    st.sampled_from([0x08080808, 0x5DB8D822, 0xC00000C0, 0xC0000009, 0xC000000A, 0xA9FEA9FE]),
)


def _embed(kind: str, v4: int, noise: int) -> str:
    if kind == "v4":
        return str(ipaddress.IPv4Address(v4))
    value = {
        "mapped": (0xFFFF << 32) | v4,
        "compatible": v4,
        "nat64": (0x64_FF9B << 96) | v4,
        "nat64-local": (0x64_FF9B_0001 << 80) | (noise & (2**48 - 1)) << 32 | v4,
        "6to4": (0x2002 << 112) | (v4 << 80) | (noise & (2**80 - 1)),
        "teredo": (0x2001_0000 << 96) | (v4 << 64) | (noise & (2**64 - 1)),
        "any": (noise << 32 | v4) & (2**128 - 1),
    }[kind]
    return str(ipaddress.IPv6Address(value))


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(["v4", "mapped", "compatible", "nat64", "nat64-local", "6to4", "teredo", "any"]),
    v4=_V4,
    noise=st.integers(0, 2**96 - 1),
)
def test_the_check_agrees_with_the_registries(kind: str, v4: int, noise: int) -> None:
    address = _embed(kind, v4, noise)
    assert is_public_address(address) == _reference(address), address


REFUSED = {
    "loopback": "127.0.0.1",
    "private-10": "10.1.2.3",
    "private-172": "172.16.0.1",
    "private-192": "192.168.1.1",
    "link-local (cloud metadata)": "169.254.169.254",
    "shared 100.64/10": "100.64.0.1",
    "ietf 192.0.0/24": "192.0.0.192",
    "ietf 192.0.0.9": "192.0.0.9",
    "documentation": "192.0.2.1",
    "benchmarking": "198.18.0.1",
    "multicast": "224.0.0.251",
    "reserved 240/4": "240.0.0.1",
    "broadcast": "255.255.255.255",
    "unspecified": "0.0.0.0",
    "ipv6 loopback": "::1",
    "ipv6 unspecified": "::",
    "ipv6 unique-local": "fd00::1",
    "ipv6 link-local": "fe80::1",
    "ipv6 multicast": "ff02::1",
    "ipv6 documentation": "2001:db8::1",
    "mapped loopback": "::ffff:127.0.0.1",
    "compatible loopback": "::127.0.0.1",
    "6to4 metadata": "2002:a9fe:a9fe::1",
    "6to4 loopback": "2002:7f00:1::1",
    "teredo": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "nat64 loopback": "64:ff9b::7f00:1",
    "nat64 private": "64:ff9b::a00:1",
    "nat64 local-use": "64:ff9b:1::808:808",
}


@pytest.mark.parametrize("address", list(REFUSED.values()), ids=list(REFUSED))
def test_each_refused_class_never_reaches_the_network(tmp_path: Path, address: str) -> None:
    requested: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requested.append(str(request.url))
        return httpx.Response(200, text=rss([]), headers={"content-type": "application/rss+xml"})

    write_sources(
        tmp_path,
        [
            {
                "name": "s",
                "kind": "feed",
                "url": "http://watched.example/feed",
                "source_type": "forum",
                "allow_private": False,
            }
        ],
    )
    report = collect_corpus(
        tmp_path,
        today=TODAY,
        resolver=lambda _h, _p: ["93.184.216.34", address],
        transport=httpx.MockTransport(handler),
    )
    assert requested == [] and report.failed_sources == 1
    assert (
        f"resolves to {address}" in report.alerts[0].message
        and "not globally routable" in report.alerts[0].message
    )


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2606:4700::1111"]
)
def test_public_addresses_pass(address: str) -> None:
    assert is_public_address(address)


def test_allow_private_opens_the_sources_own_host_only(web: HTTPServer, tmp_path: Path) -> None:
    """The source is on 127.0.0.1 with allow_private; a redirect to another name for the same
    loopback address, and an item link to it, are refused."""
    other = web.url_for("/elsewhere").replace("127.0.0.1", "localhost")
    web.expect_request("/hop").respond_with_data("", status=302, headers={"Location": other})
    web.expect_request("/feed.xml").respond_with_data(
        rss([{"title": "Un", "link": other, "description": "Texte un."}]), content_type="application/rss+xml"
    )
    web.expect_request("/elsewhere").respond_with_data("<p>never</p>", content_type="text/html")
    write_sources(
        tmp_path,
        [
            {"name": "hop", "kind": "page", "url": web.url_for("/hop"), "source_type": "forum"},
            {
                "name": "feed",
                "kind": "feed",
                "url": web.url_for("/feed.xml"),
                "source_type": "forum",
                "follow_links": True,
            },
        ],
    )
    report = collect_corpus(tmp_path, today=TODAY)
    by_source = {a.subject: a.message for a in report.alerts}
    assert "localhost resolves to" in by_source["hop"] and "its own host only" in by_source["hop"]
    assert "localhost resolves to" in by_source["feed"]  # the item page: feed text kept, page refused
    assert [r.path for r, _ in web.log if r.path == "/elsewhere"] == []
    assert report.counts["added"] == 1  # the feed's item, with the feed's text
