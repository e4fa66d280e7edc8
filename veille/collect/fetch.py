"""HTTP for collect: httpx with timeouts, conditional GET, bounded and re-checked redirects, byte caps
per response and per night (streamed, decompressed by us with a cap), robots.txt, http/https only, and
private addresses refused after DNS resolution unless the source allows them.

The address check resolves the host, then httpx connects (and resolves) again: a DNS answer that
changes in between (rebinding) is not caught. The caps and the scheme rule still hold.
"""

from __future__ import annotations

import ipaddress
import socket
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from veille.collect.sources import CollectLimits

__all__ = ["FetchError", "Fetched", "Fetcher", "HttpCache", "Resolver", "resolve_host"]

Resolver = Callable[[str, int], list[str]]
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ROBOTS_MAX_BYTES = 512_000


class FetchError(Exception):
    """A fetch that failed; ``reason`` is a stable word (dns, refused, status, timeout, too_large…)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Fetched:
    """A response body (decompressed, within the caps), or ``not_modified`` after a conditional GET."""

    url: str  # after redirects
    status: int
    content_type: str
    body: bytes = b""
    not_modified: bool = False


@dataclass
class HttpCache:
    """Validators kept between nights for conditional GET: URL -> {"etag": …, "last_modified": …}."""

    entries: dict[str, dict[str, str]] = field(default_factory=dict)

    def headers(self, url: str) -> dict[str, str]:
        entry = self.entries.get(url, {})
        out = {}
        if etag := entry.get("etag"):
            out["If-None-Match"] = etag
        if modified := entry.get("last_modified"):
            out["If-Modified-Since"] = modified
        return out

    def remember(self, url: str, response: httpx.Response) -> None:
        entry = {
            k: v
            for k, v in (
                ("etag", response.headers.get("etag")),
                ("last_modified", response.headers.get("last-modified")),
            )
            if v
        }
        if entry:
            self.entries[url] = entry


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (the check must pass for all of them)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError("dns", f"cannot resolve {host!r}: {exc}") from exc
    return sorted({str(info[4][0]) for info in infos})


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


class _Inflater:
    """Decompresses gzip/deflate ourselves, never producing more than ``cap`` bytes (gzip bombs)."""

    def __init__(self, encoding: str) -> None:
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self._z = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, auto-detected
        else:
            raise FetchError("encoding", f"unsupported content encoding {encoding!r}")

    def feed(self, chunk: bytes, room: int) -> bytes:
        if self._z is None:
            return chunk
        try:
            # At most room + 1 bytes out: one byte over the room is enough to know the cap is passed.
            return self._z.decompress(chunk, room + 1)
        except zlib.error as exc:
            raise FetchError("encoding", f"corrupt compressed body: {exc}") from exc

    def finish(self) -> bytes:
        return self._z.flush() if self._z is not None else b""


class Fetcher:
    """One night's HTTP client: shared caps, robots.txt per origin, conditional GET validators."""

    def __init__(
        self,
        limits: CollectLimits,
        cache: HttpCache | None = None,
        resolver: Resolver = resolve_host,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.limits = limits
        self.cache = cache if cache is not None else HttpCache()
        self.night_bytes = 0
        self._resolver = resolver
        self._robots: dict[str, RobotFileParser] = {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(limits.timeout_s),
            follow_redirects=False,  # each hop is checked here
            headers={"User-Agent": limits.user_agent, "Accept-Encoding": "gzip, deflate"},
            transport=transport,
            trust_env=False,  # no proxy from the environment: the address check must see the target
        )

    def close(self) -> None:
        self._client.close()

    def get(self, url: str, *, allow_private: bool, accept: Callable[[str], bool]) -> Fetched:
        """GET ``url`` (conditional when validators are known), following at most ``max_redirects``
        redirects, each hop checked (scheme, address, robots.txt); ``accept(content_type)`` says
        whether the body is wanted. Raises :class:`FetchError`."""
        current = url
        for _hop in range(self.limits.max_redirects + 1):
            self._check_target(current, allow_private)
            if not self._robots_allow(current, allow_private):
                raise FetchError("robots", f"robots.txt disallows {current}")
            headers = self.cache.headers(current) if current == url else {}
            with _open(self._client, current, headers) as response:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                return self._read(url, current, response, accept)
        raise FetchError("redirects", f"more than {self.limits.max_redirects} redirects from {url}")

    def _check_target(self, url: str, allow_private: bool) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError("scheme", f"refused URL {url!r}: only http:// and https:// are fetched")
        if allow_private:
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        for address in self._resolver(parts.hostname, port):
            if not _is_public(address):
                raise FetchError(
                    "private",
                    f"{parts.hostname} resolves to {address}, a private/loopback/link-local address "
                    "(set allow_private = true on the source to allow it)",
                )

    def _read(self, url: str, final: str, response: httpx.Response, accept: Callable[[str], bool]) -> Fetched:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status_code == 304:
            return Fetched(final, 304, content_type, not_modified=True)
        if response.status_code >= 400 or response.status_code < 200 or response.status_code in _REDIRECTS:
            raise FetchError("status", f"HTTP {response.status_code} for {final}")
        if not accept(content_type):
            raise FetchError(
                "content_type", f"unexpected content type {content_type or 'none'!r} for {final}"
            )
        body = self._capped_body(final, response)
        self.cache.remember(url, response)
        return Fetched(final, response.status_code, content_type, body)

    def _capped_body(self, url: str, response: httpx.Response, cap: int | None = None) -> bytes:
        cap = min(cap or self.limits.max_response_bytes, self.limits.max_response_bytes)
        night_room = self.limits.max_night_bytes - self.night_bytes
        inflater = _Inflater(response.headers.get("content-encoding", "").strip().lower())
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_raw(65_536):
                data = inflater.feed(chunk, min(cap, night_room) - size)
                size += len(data)
                if size > night_room:
                    raise FetchError(
                        "night_cap", f"the night's byte cap ({self.limits.max_night_bytes}) is spent"
                    )
                if size > cap:
                    raise FetchError("too_large", f"body of {url} is over {cap} bytes (stopped reading)")
                parts.append(data)
            tail = inflater.finish()
            size += len(tail)
            if size > cap:
                raise FetchError("too_large", f"body of {url} is over {cap} bytes (stopped reading)")
            parts.append(tail)
        finally:
            self.night_bytes += size
        return b"".join(parts)

    def _robots_allow(self, url: str, allow_private: bool) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            self._robots[origin] = self._load_robots(origin)
        return self._robots[origin].can_fetch(self.limits.user_agent, url)

    def _load_robots(self, origin: str) -> RobotFileParser:
        """RFC 9309: a 4xx robots.txt allows everything; a 5xx (or one we cannot read) disallows everything."""
        parser = RobotFileParser(origin + "/robots.txt")
        try:
            with _open(self._client, origin + "/robots.txt", {}) as response:
                if 400 <= response.status_code < 500:
                    parser.parse([])
                elif response.status_code >= 300:  # 5xx, or a redirect we do not follow for robots
                    parser.parse(["User-agent: *", "Disallow: /"])
                else:
                    body = self._capped_body(origin + "/robots.txt", response, _ROBOTS_MAX_BYTES)
                    parser.parse(body.decode("utf-8", "replace").splitlines())
        except FetchError as exc:
            if exc.reason in ("refused", "dns", "timeout", "http"):
                raise  # the site itself is unreachable: say so rather than "robots.txt disallows"
            parser.parse(["User-agent: *", "Disallow: /"])
        return parser


@contextmanager
def _open(client: httpx.Client, url: str, headers: dict[str, str]) -> Iterator[httpx.Response]:
    """``client.stream("GET", …)`` with httpx errors (also while reading) as :class:`FetchError`."""
    try:
        with client.stream("GET", url, headers=headers) as response:
            yield response
    except httpx.HTTPError as exc:
        raise _as_fetch_error(exc, url) from exc


def _as_fetch_error(exc: httpx.HTTPError, url: str) -> FetchError:
    if isinstance(exc, httpx.TimeoutException):
        return FetchError("timeout", f"timed out fetching {url}")
    if isinstance(exc, httpx.ConnectError):
        text = str(exc)
        reason = (
            "dns" if any(w in text for w in ("Name or service", "nodename", "name resolution")) else "refused"
        )
        return FetchError(reason, f"cannot connect to {url}: {text or type(exc).__name__}")
    return FetchError("http", f"{type(exc).__name__} fetching {url}: {exc}")
