"""Loopback web server and sources.toml helpers for the collect tests (nothing leaves 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

__all__ = ["PAGE_HTML", "rss", "web", "write_sources"]

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
