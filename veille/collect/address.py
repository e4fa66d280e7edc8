"""Which addresses collect may connect to: globally routable ones only, IPv4 hidden in IPv6 included.

IPv4: ``ipaddress``'s ``is_global`` (it knows the IANA special-purpose registry: private ranges,
100.64.0.0/10 shared address space, documentation and benchmarking ranges…), and on top of it,
because the Python versions we run on differ in what they call global: multicast, the whole of
192.0.0.0/24 (IETF protocol assignments; two of its addresses are marked globally reachable, but
nothing a watch reads lives there) and 192.88.99.0/24 (the deprecated 6to4 relay anycast).

IPv6: an address that carries an IPv4 address by a translation — mapped ``::ffff:a.b.c.d``,
IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16`` — is judged by that IPv4
address (6to4 embedding 169.254.169.254 reaches a cloud's metadata service as surely as the address
itself). Any other address must be global unicast (2000::/3), ``is_global``, and outside 2001::/23
(Teredo 2001::/32 included: its server and client addresses are IPv4), 2001:db8::/32 and 3fff::/20
(documentation). The local-use NAT64 prefix 64:ff9b:1::/48 is therefore refused.
"""

from __future__ import annotations

import ipaddress

__all__ = ["embedded_ipv4", "is_public_address"]

_IPV4_REFUSED = (ipaddress.ip_network("192.0.0.0/24"), ipaddress.ip_network("192.88.99.0/24"))
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_IPV6_REFUSED = tuple(ipaddress.ip_network(n) for n in ("2001::/23", "2001:db8::/32", "3fff::/20"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to by translation (mapped, IPv4-compatible, NAT64,
    6to4), None for any other address."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):  # :: and ::1 are not IPv4
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    return None


def _ipv4_public(ip: ipaddress.IPv4Address) -> bool:
    return ip.is_global and not ip.is_multicast and not any(ip in net for net in _IPV4_REFUSED)


def is_public_address(address: str) -> bool:
    """True when ``address`` (an IP literal, IPv6 zone allowed) is globally routable and leads to no
    IPv4 address that is not. Raises ``ValueError`` for text that is not an IP address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_public(ip)
    if (v4 := embedded_ipv4(ip)) is not None:
        return _ipv4_public(v4)
    return ip in _GLOBAL_UNICAST and ip.is_global and not any(ip in net for net in _IPV6_REFUSED)
