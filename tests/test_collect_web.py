"""Collect against what real servers and feeds do: trickling servers, charsets only in the header,
markup in titles, odd URLs, entries without links, several entries at one URL, empty entries.
Real feeds and pages from feedparser's and trafilatura's sdists (tests/fixtures/collect/SOURCES.md)."""

from __future__ import annotations

import datetime as dt
import html
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from tests.collectkit import FIXTURES, Trickler, rss, trickler, web, write_sources
from veille.collect import CollectReport, collect_corpus
from veille.collect.items import TITLE_MAX_CHARS, Item, normalise_url, plain_title
from veille.collect.write import document_id, render_document
from veille.corpus.document import parse_document

__all__ = ["trickler", "web"]

TODAY = dt.date(2026, 7, 25)


def _docs(corpus: Path) -> list[Path]:
    return sorted((corpus / "docs").glob("*.md"))


def _one_source(corpus: Path, url: str, kind: str = "feed", **extra: object) -> None:
    write_sources(corpus, [{"name": "s", "kind": kind, "url": url, "source_type": "forum", **extra}])


@pytest.mark.parametrize("path", ["/body", "/headers"])
def test_a_trickling_server_ends_at_the_deadline_and_frees_the_lock(
    trickler: Trickler, tmp_path: Path, path: str
) -> None:
    """One byte every 0.1 s (never a read timeout): the fetch stops at its deadline, and a second
    collect started meanwhile gets the lock instead of failing on it."""
    write_sources(
        tmp_path,
        [{"name": "slow", "kind": "page", "url": trickler.url(path), "source_type": "forum"}],
        limits={"timeout_s": 5, "fetch_deadline_s": 1.5},
    )
    first: list[CollectReport] = []
    thread = threading.Thread(target=lambda: first.append(collect_corpus(tmp_path, today=TODAY)))
    thread.start()
    assert trickler.requested.wait(30)
    second = collect_corpus(tmp_path, today=TODAY, lock_wait_s=60)  # waits for the first, then runs
    thread.join(60)
    assert not thread.is_alive() and len(first) == 1
    for report in (first[0], second):
        assert report.failed_sources == 1 and "deadline" in report.alerts[0].message
    assert 0 < trickler.sent[path] < 100_000  # cut off, never read whole


def test_the_source_deadline_bounds_a_feed_and_its_pages(
    trickler: Trickler, web: HTTPServer, tmp_path: Path
) -> None:
    slow = trickler.url("/body")
    items = [{"title": f"Item {i}", "link": f"{slow}?{i}", "description": f"Texte {i}."} for i in range(5)]
    web.expect_request("/feed.xml").respond_with_data(rss(items), content_type="application/rss+xml")
    write_sources(
        tmp_path,
        [
            {
                "name": "s",
                "kind": "feed",
                "url": web.url_for("/feed.xml"),
                "source_type": "forum",
                "follow_links": True,
            }
        ],
        limits={"fetch_deadline_s": 1.0, "source_deadline_s": 1.5},
    )
    report = collect_corpus(tmp_path, today=TODAY)
    # Every item is written with the feed's text; the pages that did not fit ran out of time.
    assert report.counts["added"] == 5
    problem = next(a.message for a in report.alerts if a.subject == "s")
    assert "5 item page(s) not fetched" in problem and "deadline" in problem


JAPANESE = "DrecomRSSに記事投稿が反映されない…"


def _fixture_text(name: str, encoding: str) -> str:
    return (FIXTURES / name).read_bytes().decode(encoding)


@pytest.mark.parametrize(
    ("name", "charset", "title", "passage"),
    [
        ("feedparser-shiftjis.xml", "Shift_JIS", JAPANESE, "MT3.2がRSS1.0をサポートしていない"),
        ("feedparser-koi8r.xml", "KOI8-R", "Как пережить новогоднюю ночь", "правил застольной безопасности"),
    ],
)
def test_a_feed_whose_charset_is_only_in_the_header(
    web: HTTPServer, tmp_path: Path, name: str, charset: str, title: str, passage: str
) -> None:
    web.expect_request("/feed").respond_with_data(
        (FIXTURES / name).read_bytes(), content_type=f"application/xml; charset={charset}"
    )
    _one_source(tmp_path, web.url_for("/feed"))
    report = collect_corpus(tmp_path, today=TODAY)
    (path,) = _docs(tmp_path)
    doc = parse_document(path)
    assert doc.title == title and passage in doc.body and "\ufffd" not in path.read_text(encoding="utf-8")
    assert doc.url is None  # no link in these entries: keyed by their text, written without url
    assert [a.code for a in report.alerts] == ["collect.no_link"] and doc.id in report.written
    again = collect_corpus(tmp_path, today=TODAY + dt.timedelta(days=1))
    assert again.counts["unchanged"] == 1 and _docs(tmp_path) == [path]


@pytest.mark.parametrize("declared", ["header", "meta", "xml-declaration"])
def test_a_shift_jis_page(web: HTTPServer, tmp_path: Path, declared: str) -> None:
    """The Japanese text of feedparser's Shift_JIS feed, as an HTML page in Shift_JIS whose charset
    is said in one place only."""
    summary = (
        _fixture_text("feedparser-shiftjis.xml", "shift_jis").split("<summary>")[1].split("</summary>")[0]
    )
    head = {"meta": '<meta charset="Shift_JIS">', "header": "", "xml-declaration": ""}[declared]
    prologue = '<?xml version="1.0" encoding="Shift_JIS"?>\n' if declared == "xml-declaration" else ""
    page = (
        f"{prologue}<html><head>{head}<title>{JAPANESE}</title></head><body><article>"
        f"<h1>{JAPANESE}</h1><p>{summary}</p><p>{summary}</p></article></body></html>"
    )
    content_type = "text/html; charset=Shift_JIS" if declared == "header" else "text/html"
    web.expect_request("/page").respond_with_data(page.encode("shift_jis"), content_type=content_type)
    _one_source(tmp_path, web.url_for("/page"), kind="page")
    collect_corpus(tmp_path, today=TODAY)
    (path,) = _docs(tmp_path)
    doc = parse_document(path)
    assert doc.title == JAPANESE and "MT3.2がRSS1.0をサポートしていない" in doc.body
    assert "\ufffd" not in path.read_text(encoding="utf-8")


def test_real_feed_and_page_from_trafilatura(web: HTTPServer, tmp_path: Path) -> None:
    web.expect_request("/feed1.atom").respond_with_data(
        (FIXTURES / "trafilatura-feed1.atom").read_bytes(), content_type="application/atom+xml"
    )
    web.expect_request("/moby").respond_with_data(
        (FIXTURES / "trafilatura-http_sample.html").read_bytes(), content_type="text/html"
    )
    write_sources(
        tmp_path,
        [
            {"name": "atom", "kind": "feed", "url": web.url_for("/feed1.atom"), "source_type": "forum"},
            {"name": "moby", "kind": "page", "url": web.url_for("/moby"), "source_type": "forum"},
        ],
    )
    report = collect_corpus(tmp_path, today=TODAY)
    docs = {d.url: d for d in map(parse_document, _docs(tmp_path))}
    assert report.counts["added"] == 3
    robots = docs["http://example.org/2003/12/13/atom03"]
    assert (robots.title, robots.date, robots.body.strip()) == (
        "Atom-Powered Robots Run Amok",
        dt.date(2003, 12, 13),
        "# Atom-Powered Robots Run Amok\n\nSome text.",
    )
    assert docs["http://example.org/1000"].title == "Self-referenced link"  # its only link is rel=self
    moby = docs[web.url_for("/moby")]
    assert (
        moby.title == "Herman Melville - Moby-Dick"
        and "Perth, the begrimed, blistered old blacksmith" in moby.body
    )
    assert "<" not in moby.body


def test_titles_are_plain_capped_text(web: HTTPServer, tmp_path: Path) -> None:
    web.expect_request("/markup").respond_with_data(
        (FIXTURES / "feedparser-title-markup.xml").read_bytes(), content_type="application/atom+xml"
    )
    hostile = "&lt;b&gt;Kestrel&lt;/b&gt; 2.0 &lt;script&gt;x&lt;/script&gt;"
    huge = "Kestrel " * 90_000  # 720 KB
    web.expect_request("/rss").respond_with_data(
        rss(
            [
                {"title": hostile, "link": web.url_for("/a"), "description": "Débit."},
                {"title": huge, "link": web.url_for("/b"), "description": "Débit."},
            ]
        ),
        content_type="application/rss+xml",
    )
    write_sources(
        tmp_path,
        [
            {"name": "markup", "kind": "feed", "url": web.url_for("/markup"), "source_type": "forum"},
            {"name": "rss", "kind": "feed", "url": web.url_for("/rss"), "source_type": "forum"},
        ],
    )
    collect_corpus(tmp_path, today=TODAY)
    titles = sorted(parse_document(p).title for p in _docs(tmp_path))
    assert "Example Atom" in titles and "Kestrel 2.0" in titles  # markup parsed away, script dropped
    (long_title,) = [t for t in titles if t.startswith("Kestrel Kestrel")]
    assert len(long_title) == TITLE_MAX_CHARS and long_title.endswith("…")
    assert all(p.stat().st_size < 10_000 for p in _docs(tmp_path))


def test_links_with_spaces_and_non_ascii_become_valid_urls(web: HTTPServer, tmp_path: Path) -> None:
    items = [
        {"title": "Espace", "link": web.url_for("/notes de version"), "description": "Un."},
        {"title": "Accent", "link": web.url_for("/débit"), "description": "Deux."},
        {"title": "Sans lien", "link": "mailto:x@example.org", "description": "Trois."},
    ]
    web.expect_request("/feed").respond_with_data(rss(items), content_type="application/rss+xml")
    _one_source(tmp_path, web.url_for("/feed"))
    report = collect_corpus(tmp_path, today=TODAY)
    urls = sorted(str(parse_document(p).url) for p in _docs(tmp_path))
    assert report.counts["added"] == 3
    assert urls == sorted([web.url_for("/d%C3%A9bit"), web.url_for("/notes%20de%20version"), "None"])


def test_entries_sharing_a_url_are_one_document_night_after_night(web: HTTPServer, tmp_path: Path) -> None:
    link = web.url_for("/home")
    items = [
        {"title": "Premier", "link": link, "description": "Texte du premier."},
        {"title": "Second", "link": link, "description": "Texte du second."},
    ]
    web.expect_request("/feed").respond_with_data(rss(items), content_type="application/rss+xml")
    _one_source(tmp_path, web.url_for("/feed"))
    first = collect_corpus(tmp_path, today=TODAY)
    (path,) = _docs(tmp_path)
    before = (path.stat().st_mtime_ns, path.read_bytes())
    second = collect_corpus(tmp_path, today=TODAY + dt.timedelta(days=1))
    assert (first.counts["added"], first.counts["duplicate"]) == (1, 1)
    assert (second.counts["unchanged"], second.counts["duplicate"], second.counts["updated"]) == (1, 1, 0)
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before and parse_document(path).title == "Premier"
    assert "collect.same_url" in [a.code for a in second.alerts]


def test_empty_entries_are_written_and_flagged(web: HTTPServer, tmp_path: Path) -> None:
    items = [{"title": f"Titre seul {i}", "link": web.url_for(f"/{i}")} for i in range(3)]
    items.append({"title": "Avec texte", "link": web.url_for("/t"), "description": "Du texte."})
    web.expect_request("/feed").respond_with_data(rss(items), content_type="application/rss+xml")
    _one_source(tmp_path, web.url_for("/feed"))
    report = collect_corpus(tmp_path, today=TODAY)
    (empty,) = [a for a in report.alerts if a.code == "collect.empty_body"]
    assert sorted(empty.subjects) == sorted(document_id(web.url_for(f"/{i}")) for i in range(3))
    assert "follow_links" in empty.message and report.counts["added"] == 4


_TEXT = st.text(st.characters(codec="utf-8"), max_size=400) | st.text(max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=_TEXT, summary=_TEXT, body=_TEXT, url=_TEXT, html=st.booleans())
def test_every_rendered_document_passes_ingest(
    tmp_path: Path, title: str, summary: str, body: str, url: str, html: bool
) -> None:
    """Whatever a feed says (markup, controls, surrogates, NUL, spaces in links), the document
    written is one ingestion accepts, with a plain capped title."""
    link = normalise_url("http://example.org/" + url)
    item = Item(link, plain_title(title, is_html=html, fallback=link or "x"), None, summary, body, "g")
    doc_id = document_id(item.key)
    path = tmp_path / f"{doc_id}.md"
    path.write_text(render_document(doc_id, item, "forum", TODAY, 1_048_576), encoding="utf-8")
    doc = parse_document(path)
    assert doc.id == doc_id and len(doc.title) <= TITLE_MAX_CHARS and doc.url == link


REAL = FIXTURES.parent / "real"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def test_pdf_and_docx_from_sources_go_through_the_corpus_conversion(web: HTTPServer, tmp_path: Path) -> None:
    """pypdf's and python-docx's own sample files (tests/fixtures/real/SOURCES.md) as a page source
    and as a feed item's page; a broken PDF is one alert naming the source."""
    web.expect_request("/outline.pdf").respond_with_data(
        (REAL / "pdflatex-outline.pdf").read_bytes(), content_type="application/pdf"
    )
    web.expect_request("/styles.docx").respond_with_data(
        (REAL / "par-known-styles.docx").read_bytes(), content_type=DOCX
    )
    web.expect_request("/broken.pdf").respond_with_data(b"%PDF-1.7\n%broken", content_type="application/pdf")
    web.expect_request("/feed").respond_with_data(
        rss([{"title": "Styles Word", "link": web.url_for("/styles.docx"), "description": "Court."}]),
        content_type="application/rss+xml",
    )
    write_sources(
        tmp_path,
        [
            {"name": "pdf", "kind": "page", "url": web.url_for("/outline.pdf"), "source_type": "forum"},
            {
                "name": "feed",
                "kind": "feed",
                "url": web.url_for("/feed"),
                "source_type": "forum",
                "follow_links": True,
            },
            {"name": "broken", "kind": "page", "url": web.url_for("/broken.pdf"), "source_type": "forum"},
        ],
    )
    report = collect_corpus(tmp_path, today=TODAY)
    docs = {d.url: d for d in map(parse_document, _docs(tmp_path))}
    pdf = docs[web.url_for("/outline.pdf")]
    assert "Hello, here is some text without a meaning." in pdf.body and pdf.date == dt.date(2022, 4, 6)
    assert pdf.title == "outline.pdf"  # no title in its properties: the file name
    docx = docs[web.url_for("/styles.docx")]
    assert "Body Text" in docx.body and docx.title == "Styles Word" and docx.summary == "Court."
    (broken,) = report.alerts
    assert broken.subject == "broken" and "cannot convert the document" in broken.message
    assert "broken.pdf" in broken.message and report.counts["added"] == 2


FRENCH = (
    "Le débit mesuré sur douze GPU dépasse déjà celui annoncé ; la quantification FP8 réduit la "
    "latence à 120 ms. Très intéressant pour la plateforme interne : coût, sécurité, opérations."
)


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (FRENCH, "cp1252"),
        (
            _fixture_text("feedparser-koi8r.xml", "koi8-r")
            .split("<description>")[1]
            .split("</description>")[0],
            "koi8-r",
        ),
        (
            _fixture_text("feedparser-shiftjis.xml", "shift_jis")
            .split("<summary>")[1]
            .split("</summary>")[0],
            "shift_jis",
        ),
    ],
    ids=["windows-1252", "koi8-r", "shift_jis"],
)
def test_a_page_declaring_no_charset_is_guessed(
    web: HTTPServer, tmp_path: Path, text: str, encoding: str
) -> None:
    """No header charset, no BOM, no <meta>: Latin text is windows-1252 (the browsers' default),
    other scripts charset-normalizer's guess."""
    page = f"<html><head><title>Page</title></head><body><article><p>{text}</p><p>{text}</p></article></body></html>"
    web.expect_request("/page").respond_with_data(page.encode(encoding), content_type="text/html")
    _one_source(tmp_path, web.url_for("/page"), kind="page")
    collect_corpus(tmp_path, today=TODAY)
    (path,) = _docs(tmp_path)
    expected = " ".join(html.unescape(text).split())
    assert expected in " ".join(parse_document(path).body.split())  # every letter right
