"""The evidence under a key point and a ledger entry (issue 36, item 2): in report.html as headless
Chromium builds its DOM (closed ``<details>``, the passage as text, the document's title and date, a
link to its bibliography entry), and in the e-mail, whose HTML body is the same page."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.mailkit import smtp_server
from tests.test_report_html_browser import _browser
from veille.delivery.config import DeliveryConfig
from veille.delivery.html import ReportHeader, render_report_html
from veille.delivery.send import Dossier as Delivered
from veille.delivery.send import deliver
from veille.dossier import AxisSection, Dossier, Evidence, KeyPoint, LedgerEntry
from veille.roles.writer import SourceRef
from veille.steps.finalize import finalize_report

pytestmark = pytest.mark.slow

HOSTILE = "<script>document.body.setAttribute('data-pwned','1')</script>"
PASSAGE = f"| Tamaris 5.1 | 1 180 tokens/s | 340 ms | {HOSTILE}"
SOURCES = [
    SourceRef(
        number=1, id="doc-03", title="Banc d'essai <i>juillet</i>", date="2026-07-08", source_type="banc"
    ),
    SourceRef(number=2, id="doc-02", title="Fiche Tamaris", date="", source_type="fiche"),
]
DOSSIER = Dossier(
    sections=[AxisSection(axis="st-1", points=[
        KeyPoint(text="Tamaris tient 1 180 tokens/s au banc", citations=[1], evidence=[
            Evidence(doc_id="doc-03", title=SOURCES[0].title, date="2026-07-08", passage=PASSAGE, start=10, end=60)
        ]),
        KeyPoint(text="Un point sans passage localisé", citations=[2]),
    ])],
    contradictions=[LedgerEntry(subject="Débit de Tamaris", retained=[1], rejected=[2],
                                reason="1 180 tokens/s retenu contre 2 650 tokens/s.", evidence=[
        Evidence(doc_id="doc-03", title=SOURCES[0].title, date="2026-07-08", passage="Tamaris : 1 180 tokens/s.",
                 start=0, end=25),
        Evidence(doc_id="doc-02", title="Fiche Tamaris", date="", passage="Débit annoncé : 2 650 tokens/s.",
                 start=0, end=31),
    ])],
)  # fmt: skip
HEADER = ReportHeader("20261206T020000Z-abcdef", "6 décembre 2026", True, (), "0 $", "2 document(s) lu(s)")


def _page() -> tuple[str, str]:
    final = finalize_report("Veille", DOSSIER, SOURCES, {"st-1": "st-1 — Débit"})
    return final.markdown, render_report_html(final.markdown, final.sources, HEADER, DOSSIER)


class _Evidence(HTMLParser):
    """Each ``<details>``: open or not, its quoted passages, its source lines and their links."""

    def __init__(self) -> None:
        super().__init__()
        self.details: list[dict[str, list[str] | bool]] = []
        self.body_attrs: list[tuple[str, str | None]] = []
        self._in: str | None = None
        self._inside = False  # within a <details>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.body_attrs = attrs
        if tag == "details":
            self._inside = True
            self.details.append(
                {"open": any(k == "open" for k, _ in attrs), "quotes": [], "sources": [], "links": []}
            )
        elif not self._inside:
            return
        elif tag == "blockquote":
            self._in = "quotes"
        elif tag == "p":
            self._in = "sources"
            self.details[-1]["sources"].append("")  # type: ignore[union-attr]
        elif tag == "a":
            self.details[-1]["links"] += [v or "" for k, v in attrs if k == "href"]  # type: ignore[operator]

    def handle_endtag(self, tag: str) -> None:
        self._inside = self._inside and tag != "details"
        if tag in ("blockquote", "p"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "quotes":
            self.details[-1]["quotes"].append(data)  # type: ignore[union-attr]
        elif self._in == "sources":
            self.details[-1]["sources"][-1] += data  # type: ignore[index]


def test_report_html_shows_the_evidence_on_demand_in_chromium(tmp_path: Path) -> None:
    markdown, page = _page()
    assert "tokens/s retenu" in markdown and "1 180 tokens/s |" not in markdown  # not in report.md's prose
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    dom = _browser(tmp_path, "--dump-dom", path.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = _Evidence()
    parsed.feed(dom.stdout)
    assert parsed.body_attrs == []  # the passage's script is text, never run
    point, entry = parsed.details  # the point without evidence has none
    assert point["open"] is False and entry["open"] is False  # shown on demand
    assert point["quotes"] == [PASSAGE]
    assert [" ".join(s.split()) for s in point["sources"]] == ["[1] Banc d'essai <i>juillet</i> — 2026-07-08"]
    assert point["links"] == ["#src-1"]
    assert entry["quotes"] == ["Tamaris : 1 180 tokens/s.", "Débit annoncé : 2 650 tokens/s."]
    assert [" ".join(s.split()) for s in entry["sources"]][1] == "[2] Fiche Tamaris — date inconnue"
    # The details sit under their own item.
    items = re.findall(r"<li>(.*?)</li>", dom.stdout, flags=re.DOTALL)
    assert [("<details" in i, i.split("<")[0].strip()[:20]) for i in items] == [
        (True, "Tamaris tient 1 180 "), (False, "Un point sans passag"), (True, "Débit de Tamaris — r"),
    ]  # fmt: skip


def test_the_email_carries_the_evidence(tmp_path: Path) -> None:
    markdown, page = _page()
    md, html = tmp_path / "report.md", tmp_path / "report.html"
    md.write_text(markdown, encoding="utf-8")
    html.write_text(page, encoding="utf-8")
    config = DeliveryConfig.model_validate({"email": {"to": ["equipe@example.org"]}})
    with smtp_server() as box:
        assert (
            deliver(
                config,
                Delivered("r", md, html, "Veille", "https://x.example/r"),
                {"VEILLE_SMTP_URL": box.url()},
            )
            == []
        )
    ((_, message),) = box.messages
    body = (
        next(p for p in message.walk() if p.get_content_type() == "text/html")
        .get_payload(decode=True)
        .decode()
    )
    assert body.count('<details class="evidence">') == 2
    assert "&lt;script&gt;document.body" in body and HOSTILE not in body
    assert "Fiche Tamaris — date inconnue" in body
    assert "details" not in md.read_text(encoding="utf-8")  # report.md, attached, keeps it out
