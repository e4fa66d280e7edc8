"""HTTP for collect: httpx with a timeout per operation and a total deadline per fetch
(veille/collect/deadline.py), conditional GET, bounded and re-checked redirects, byte caps per
response and per night (streamed, decompressed by us with a cap), robots.txt, http/https only, and
addresses that are not globally routable refused after DNS resolution (veille/collect/address.py)
unless the source allows them for its own host.

The address check resolves the host, then httpx connects (and resolves) again: a DNS answer that
changes in between (rebinding) is not caught. The caps and the scheme rule still hold.
"""

from __future__ import annotations

import socket
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from veille.collect.address import is_public_address
from veille.collect.deadline import DeadlineTransport, deadline, seconds_left
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
    content_type: str  # the media type, lowercase, without parameters
    content_type_header: str = ""  # the header as sent (its charset parameter decides the decoding)
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
            transport=transport if transport is not None else DeadlineTransport(),
            trust_env=False,  # no proxy from the environment: the address check must see the target
        )

    def close(self) -> None:
        self._client.close()

    def get(self, url: str, *, private_host: str | None, accept: Callable[[str], bool]) -> Fetched:
        """GET ``url`` (conditional when validators are known), following at most ``max_redirects``
        redirects, each hop checked (scheme, address, robots.txt), all within ``fetch_deadline_s``
        (and any source or night deadline in force); ``accept(content_type)`` says whether the body
        is wanted. ``private_host``: the one host name allowed to resolve to a non-global address
        (a source's own host with ``allow_private``), never a redirect or a link elsewhere.
        Raises :class:`FetchError`."""
        left = seconds_left()
        if left is not None and left <= 0:
            raise FetchError("deadline", f"no time left for {url} (the source's or the night's deadline)")
        with deadline(time.monotonic() + self.limits.fetch_deadline_s):
            try:
                return self._get(url, private_host, accept)
            except FetchError as exc:
                # A read cut by the deadline times out at the deadline (give or take the clock's grain).
                if exc.reason == "timeout" and (seconds_left() or 0.0) < 0.05:
                    raise FetchError(
                        "deadline",
                        f"{url} not received within the deadline (fetch_deadline_s = "
                        f"{self.limits.fetch_deadline_s:g}, or the source's or the night's)",
                    ) from exc
                raise

    def _get(self, url: str, private_host: str | None, accept: Callable[[str], bool]) -> Fetched:
        current = url
        for _hop in range(self.limits.max_redirects + 1):
            self._check_target(current, private_host)
            if not self._robots_allow(current):
                raise FetchError("robots", f"robots.txt disallows {current}")
            headers = self.cache.headers(current) if current == url else {}
            with _open(self._client, current, headers) as response:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                return self._read(url, current, response, accept)
        raise FetchError("redirects", f"more than {self.limits.max_redirects} redirects from {url}")

    def _check_target(self, url: str, private_host: str | None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError("scheme", f"refused URL {url!r}: only http:// and https:// are fetched")
        if private_host is not None and parts.hostname == private_host.lower():
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        for address in self._resolver(parts.hostname, port):
            if not _public(address):
                allowed = (
                    "allow_private = true on the source allows its own host only"
                    if private_host is not None
                    else "set allow_private = true on the source to allow its own host"
                )
                raise FetchError(
                    "private",
                    f"{parts.hostname} resolves to {address}, an address that is not globally routable "
                    f"(private, loopback, link-local, shared, reserved or an IPv4 one inside IPv6; {allowed})",
                )

    def _read(self, url: str, final: str, response: httpx.Response, accept: Callable[[str], bool]) -> Fetched:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        header = response.headers.get("content-type", "")
        if response.status_code == 304:
            return Fetched(final, 304, content_type, header, not_modified=True)
        if response.status_code >= 400 or response.status_code < 200 or response.status_code in _REDIRECTS:
            raise FetchError("status", f"HTTP {response.status_code} for {final}")
        if not accept(content_type):
            raise FetchError(
                "content_type", f"unexpected content type {content_type or 'none'!r} for {final}"
            )
        body = self._capped_body(final, response)
        self.cache.remember(url, response)
        return Fetched(final, response.status_code, content_type, header, body)

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

    def _robots_allow(self, url: str) -> bool:
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


def _public(address: str) -> bool:
    try:
        return is_public_address(address)
    except ValueError:  # not an IP literal: never connect to what we cannot judge
        return False


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
