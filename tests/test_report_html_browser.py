"""report.html in headless Chromium (Debian's, installed by .ci/run): it renders, runs no script,
and its links are the citations and the code-written http(s) source URLs."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from veille.delivery.html import ReportHeader, render_report_html
from veille.roles.writer import SourceRef

pytestmark = pytest.mark.slow

# /work/.library/env/machines/python.md: without the background-networking flags Chromium tries
# Google's hosts at start; a fresh profile each time.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = "<script>document.title='pwned';document.body.setAttribute('data-pwned','1')</script>"
MARKDOWN = f"""# Veille {HOSTILE}

## Synthèse

Kestrel obtient 1 420 tokens/s par GPU [1]. {HOSTILE} Orvet suit [2].

## Nouveautés depuis le 2 décembre 2026

- Nouveau : « <img src=x onerror=alert(1)> » (doc-41) [2]

## Points clés

### st-1 — Débit

- Kestrel 3.4.2 : 1 420 tokens/s [1].

## Sources

- [1] ignored
"""
SOURCES = [
    SourceRef(number=1, id="doc-01", title="Banc <b>Kestrel</b>", date="2026-11-02", source_type="blog",
              url="https://example.org/bench?a=1&b=2"),
    SourceRef(number=2, id="doc-41", title="Note", date="2026-12-01", source_type="note",
              url="javascript:alert(1)"),
]  # fmt: skip


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.scripts = 0
        self.body_attrs: list[tuple[str, str | None]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag == "script"
        if tag == "body":
            self.body_attrs = attrs
        self._in_title = tag == "title"
        self.hrefs += [v or "" for k, v in attrs if k == "href"]

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            self._in_title = False


def _chromium() -> str:
    found = shutil.which("chromium")
    assert found, "Debian's chromium is missing: .ci/run installs it (apt-get install -y chromium)"
    return found


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [_chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_report_html_renders_without_script_and_with_the_expected_links(tmp_path: Path) -> None:
    header = ReportHeader("20261203T020000Z-abcdef", "3 décembre 2026", False, ("1 volet(s) sur 3 en échec : st-2",),
                          "0.0123 $ (6 appel(s) au modèle)", "7 document(s) lu(s), 2 source(s) citée(s)")  # fmt: skip
    page = tmp_path / "report.html"
    page.write_text(render_report_html(MARKDOWN, SOURCES, header), encoding="utf-8")

    shot = tmp_path / "report.png"
    done = _browser(tmp_path, f"--screenshot={shot}", "--window-size=1000,1600", page.as_uri())
    assert shot.is_file(), done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000

    dom = _browser(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    links = _Links()
    links.feed(dom.stdout)
    assert links.body_attrs == [] and links.title.startswith("Veille <script>")  # text, never run
    assert links.scripts == 0
    # Citations: [1] in the synthesis and key points, [2] in the synthesis and the news; one source URL.
    assert sorted(links.hrefs) == sorted(
        ["#src-2", "#src-1", "#src-2", "#src-1", "https://example.org/bench?a=1&b=2"]
    )
    assert dom.stdout.index("Nouveautés depuis") < dom.stdout.index("Synthèse</h2>")
