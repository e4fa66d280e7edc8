"""A total deadline for every socket operation of a fetch, not a timeout per read.

httpx's timeouts bound each connect, read or write on its own: a server sending one byte every
nine seconds never trips a ten-second read timeout and holds the night for as long as it likes
(one did for 661 s). Here every network operation under httpx (connect, TLS handshake, each read,
each write, headers and body alike) gets ``min(its own timeout, time left before the deadline)``,
and none starts once the deadline is passed: a fetch ends by its deadline whatever the server does.

The deadline is a context variable set by :func:`deadline` around a fetch, so one client serves
every fetch of the night. httpcore's network backend is its documented extension point
(``httpcore.ConnectionPool(network_backend=…)``); httpx builds its pool without one, so
:class:`DeadlineTransport` swaps in a pool built with it.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

import httpcore
import httpx

__all__ = ["DeadlineTransport", "deadline", "seconds_left"]

_DEADLINE: ContextVar[float | None] = ContextVar("veille_collect_deadline", default=None)


@contextmanager
def deadline(at: float) -> Iterator[None]:
    """Every network operation inside ends by ``at`` (``time.monotonic()`` clock); an earlier
    deadline already in force stays in force."""
    outer = _DEADLINE.get()
    token = _DEADLINE.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds before the deadline in force (negative once passed), None without one."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    left = seconds_left()
    if left is None:
        return timeout
    if left <= 0:
        raise error("the fetch's deadline is passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout)
        )
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, bounded, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by collect")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (its error mapping, HTTP/1.1, TLS verification) on a connection pool
    whose sockets honour :func:`deadline`. No proxy: collect never uses one (the address check
    must see the target)."""

    def __init__(self) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            network_backend=_Backend(),
        )


@cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying context per process: loading the CA bundle costs half a second each time."""
    return httpx.create_ssl_context(trust_env=False)
