"""Loopback web server and sources.toml helpers for the collect tests (nothing leaves 127.0.0.1)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

__all__ = ["FIXTURES", "PAGE_HTML", "Trickler", "rss", "trickler", "web", "write_sources"]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "collect"

PAGE_HTML = """<html><head><title>Kestrel 2.0</title>
<meta name="description" content="Kestrel 2.0 publie ses chiffres de débit.">
<meta property="article:published_time" content="2026-07-20"></head>
<body><nav>Accueil | Produits | Contact</nav><article><h1>Kestrel 2.0 est disponible</h1>
<p>Kestrel 2.0 apporte un débit de 2 650 tokens/s par GPU sur la charge de référence de l'éditeur,
mesuré sur douze GPU avec des requêtes de 2 000 tokens en entrée.</p>
<p>La version prend en charge la quantification FP8 et le découpage des requêtes longues, ce qui
réduit la latence au 99e centile de 30 % selon les notes de version.</p></article>
<footer>© Kestrel Labs</footer></body></html>"""


def rss(items: list[dict[str, str]], title: str = "Veille") -> str:
    """An RSS 2.0 feed; each item has title, link, and optionally description and pubDate."""
    body = "".join(
        "<item>"
        + f"<title>{it['title']}</title><link>{it['link']}</link>"
        + (f"<description>{it['description']}</description>" if "description" in it else "")
        + (f"<pubDate>{it['pubDate']}</pubDate>" if "pubDate" in it else "")
        + "</item>"
        for it in items
    )
    return f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{title}</title>{body}</channel></rss>'


@pytest.fixture
def web() -> Iterator[HTTPServer]:
    """A threaded loopback server on 127.0.0.1 whose robots.txt disallows /private/."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    server.expect_request("/robots.txt").respond_with_data("User-agent: *\nDisallow: /private/\n")
    try:
        yield server
    finally:
        server.clear()
        if server.is_running():
            server.stop()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_sources(corpus: Path, sources: list[dict[str, Any]], limits: dict[str, Any] | None = None) -> Path:
    """``corpus/sources.toml`` with ``[limits]`` and one ``[[source]]`` per dict (allow_private on by
    default: the tests' server is on loopback)."""
    lines = []
    if limits:
        lines += ["[limits]", *(f"{k} = {_toml_value(v)}" for k, v in limits.items()), ""]
    for source in sources:
        lines.append("[[source]]")
        for key, value in {"allow_private": True, **source}.items():
            lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    path = corpus / "sources.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@dataclass
class Trickler:
    """A loopback HTTP server that never finishes: ``/body`` sends its headers then one byte of a
    100 000-byte body every 0.1 s; ``/headers`` sends its status line then one header byte every
    0.1 s. ``/robots.txt`` is a 404. ``sent`` counts the trickled bytes per path."""

    port: int = 0
    sent: dict[str, int] = field(default_factory=dict)
    requested: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            path = request.split(b" ", 2)[1].decode()
            if path == "/robots.txt":
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            self.requested.set()
            if path == "/headers":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n")
            self.sent[path] = 0
            while not self.stop.wait(0.1):
                try:
                    conn.sendall(b"a")
                except OSError:  # the client gave up: what the test wants
                    return
                self.sent[path] += 1


@pytest.fixture
def trickler() -> Iterator[Trickler]:
    server = Trickler()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        server.port = listener.getsockname()[1]
        thread = threading.Thread(target=_serve_until_stopped, args=(server, listener), daemon=True)
        thread.start()
        try:
            yield server
        finally:
            server.stop.set()
            thread.join(5)


def _serve_until_stopped(server: Trickler, listener: socket.socket) -> None:
    while not server.stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        threading.Thread(target=server.answer, args=(conn,), daemon=True).start()
