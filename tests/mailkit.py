"""A loopback SMTP server (aiosmtpd) that keeps every message it accepts."""

from __future__ import annotations

import email
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller

__all__ = ["Mailbox", "free_port", "smtp_server"]


def free_port() -> int:
    """A loopback port nobody listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Mailbox:
    port: int
    messages: list[tuple[list[str], Message]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd hook
        self.messages.append((list(envelope.rcpt_tos), email.message_from_bytes(envelope.content)))
        return "250 OK"

    def url(self, sender: str = "veille@example.org") -> str:
        """The Apprise URL of this server (plain SMTP on loopback)."""
        return f"mailto://127.0.0.1:{self.port}?from={sender}"


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    box = Mailbox(free_port())
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
