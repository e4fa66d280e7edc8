import socket

import pytest

from tests.conftest import NetworkBlockedError


def test_non_loopback_connection_is_refused() -> None:
    with pytest.raises(NetworkBlockedError), socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.connect(("192.0.2.1", 443))  # TEST-NET-1: never reached, the guard refuses first


def test_dns_lookup_of_public_host_is_refused() -> None:
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("generativelanguage.googleapis.com", 443)


def test_loopback_is_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.connect(server.getsockname())
