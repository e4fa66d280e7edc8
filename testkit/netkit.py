"""Loopback helpers shared by the fake servers (Gemini, OpenAI-compatible) and their tests."""

from __future__ import annotations

import socket

__all__ = ["closed_port_url"]


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
