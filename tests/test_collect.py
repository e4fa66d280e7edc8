"""Collect: feeds and pages from a loopback server become corpus documents, idempotently."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.collectkit import PAGE_HTML, rss, web, write_sources
from veille.collect import collect_corpus
from veille.collect.sources import SourcesError, load_sources
from veille.collect.write import document_id
from veille.corpus.document import parse_document

__all__ = ["web"]  # the fixture, imported for pytest

TODAY = dt.date(2026, 7, 25)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    return tmp_path


def _docs(corpus: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted((corpus / "docs").glob("*.md"))}


def _feed(web: HTTPServer, items: list[dict[str, str]], path: str = "/feed.xml") -> str:
    web.expect_request(path).respond_with_data(rss(items), content_type="application/rss+xml")
    return web.url_for(path)


def test_feed_items_become_valid_documents(web: HTTPServer, corpus: Path) -> None:
    link = web.url_for("/a")
    url = _feed(
        web,
        [
            {
                "title": "Kestrel 2.0 sort",
                "link": link,
                "description": "<p>Débit <b>2 650</b> tokens/s. Détails.</p>",
                "pubDate": "Mon, 20 Jul 2026 08:00:00 GMT",
            },
            {"title": "Sans date", "link": web.url_for("/b"), "description": "Texte."},
        ],
    )
    write_sources(corpus, [{"name": "blog", "kind": "feed", "url": url, "source_type": "article-presse"}])
    report = collect_corpus(corpus, today=TODAY)
    assert report.alerts == [] and report.counts["added"] == 2
    doc = parse_document(_docs(corpus)[document_id(link)])
    assert doc.id == document_id(link) and doc.id.startswith("web-") and len(doc.id) == 14
    assert (doc.date, doc.source_type, doc.url) == (dt.date(2026, 7, 20), "article-presse", link)
    assert doc.title == "Kestrel 2.0 sort" and doc.summary == "Débit 2 650 tokens/s."
    assert "2 650 tokens/s" in doc.body
    undated = parse_document(_docs(corpus)[document_id(web.url_for("/b"))])
    assert (undated.date, undated.origins["date"]) == (None, "unknown")  # never the collect day (issue 36)
    assert "collected: '2026-07-25'" in _docs(corpus)[document_id(web.url_for("/b"))].read_text(
        encoding="utf-8"
    )


def test_same_item_twice_is_one_document_and_a_304_is_nothing(web: HTTPServer, corpus: Path) -> None:
    feed = rss([{"title": "Un", "link": web.url_for("/a"), "description": "Texte un."}])
    seen: list[str | None] = []

    def handler(request: Request) -> Response:
        seen.append(request.headers.get("If-None-Match"))
        if request.headers.get("If-None-Match") == '"v1"':
            return Response(status=304)
        return Response(feed, content_type="application/rss+xml", headers={"ETag": '"v1"'})

    web.expect_request("/feed.xml").respond_with_handler(handler)
    write_sources(
        corpus, [{"name": "blog", "kind": "feed", "url": web.url_for("/feed.xml"), "source_type": "forum"}]
    )
    assert collect_corpus(corpus, today=TODAY).counts["added"] == 1
    path = next(iter(_docs(corpus).values()))
    mtime = path.stat().st_mtime_ns
    again = collect_corpus(corpus, today=TODAY + dt.timedelta(days=1))
    assert seen == [None, '"v1"'] and again.counts == {
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "duplicate": 0,
    }
    (corpus / ".collect-state.json").unlink()  # validators lost: the full feed again, still one document
    third = collect_corpus(corpus, today=TODAY + dt.timedelta(days=2))
    assert third.counts["updated"] + third.counts["unchanged"] == 1 and len(_docs(corpus)) == 1
    assert path.stat().st_mtime_ns >= mtime


def test_unchanged_item_is_not_rewritten(web: HTTPServer, corpus: Path) -> None:
    url = _feed(web, [{"title": "Un", "link": web.url_for("/a"), "description": "Texte un."}])
    write_sources(corpus, [{"name": "blog", "kind": "feed", "url": url, "source_type": "forum"}])
    collect_corpus(corpus, today=TODAY)
    path = next(iter(_docs(corpus).values()))
    before = (path.stat().st_mtime_ns, path.read_bytes())
    again = collect_corpus(corpus, today=TODAY + dt.timedelta(days=3))  # no date in the item: kept
    assert again.counts["unchanged"] == 1 and (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_updated_page_is_a_changed_document_with_the_same_id(web: HTTPServer, corpus: Path) -> None:
    pages = [PAGE_HTML, PAGE_HTML.replace("2 650", "2 900")]
    web.expect_request("/page").respond_with_handler(lambda _r: Response(pages[0], content_type="text/html"))
    write_sources(
        corpus,
        [{"name": "notes", "kind": "page", "url": web.url_for("/page"), "source_type": "note-de-version"}],
    )
    first = collect_corpus(corpus, today=TODAY)
    assert first.counts["added"] == 1 and first.alerts == []
    doc = parse_document(_docs(corpus)[document_id(web.url_for("/page"))])
    assert "2 650 tokens/s" in doc.body and "Accueil | Produits" not in doc.body  # boilerplate left out
    assert doc.date == dt.date(2026, 7, 20) and doc.source_type == "note-de-version"
    pages.pop(0)
    second = collect_corpus(corpus, today=TODAY)
    assert second.counts["updated"] == 1 and second.written == [doc.id]
    assert "2 900" in parse_document(_docs(corpus)[doc.id]).body and len(_docs(corpus)) == 1


def test_same_text_at_another_url_is_a_duplicate(web: HTTPServer, corpus: Path) -> None:
    url = _feed(web, [{"title": "Un", "link": web.url_for("/a"), "description": "Même texte."}])
    url2 = _feed(
        web, [{"title": "Un", "link": web.url_for("/a?utm=x"), "description": "Même texte."}], "/f2.xml"
    )
    write_sources(
        corpus,
        [
            {"name": "one", "kind": "feed", "url": url, "source_type": "forum"},
            {"name": "two", "kind": "feed", "url": url2, "source_type": "forum"},
        ],
    )
    report = collect_corpus(corpus, today=TODAY)
    assert report.counts["added"] == 1 and report.counts["duplicate"] == 1 and len(_docs(corpus)) == 1


def test_keywords_and_item_cap(web: HTTPServer, corpus: Path) -> None:
    items = [
        {
            "title": f"Article {i}",
            "link": web.url_for(f"/{i}"),
            "description": "Kestrel" if i % 2 else "Autre",
        }
        for i in range(6)
    ]
    write_sources(
        corpus,
        [
            {
                "name": "blog",
                "kind": "feed",
                "url": _feed(web, items),
                "source_type": "forum",
                "keywords": ["kestrel"],
                "max_items": 4,
            }
        ],
    )
    report = collect_corpus(corpus, today=TODAY)
    assert report.counts["added"] == 2  # items 1 and 3 among the first four


def test_follow_links_extracts_the_item_page(web: HTTPServer, corpus: Path) -> None:
    web.expect_request("/article").respond_with_data(PAGE_HTML, content_type="text/html")
    url = _feed(web, [{"title": "Kestrel 2.0", "link": web.url_for("/article"), "description": "Court."}])
    write_sources(
        corpus, [{"name": "blog", "kind": "feed", "url": url, "source_type": "forum", "follow_links": True}]
    )
    collect_corpus(corpus, today=TODAY)
    doc = parse_document(next(iter(_docs(corpus).values())))
    assert "quantification FP8" in doc.body and doc.summary == "Court."


def test_followed_page_answering_304_keeps_its_text(web: HTTPServer, corpus: Path) -> None:
    """A new feed item refetches the feed; the older item's page answers 304: its document keeps
    the page's text instead of being rewritten with the feed's description (bench/month.py found it)."""
    items = [{"title": "Kestrel 2.0", "link": web.url_for("/article"), "description": "Court."}]

    def feed(request: Request) -> Response:
        return Response(rss(items), content_type="application/rss+xml")

    def page(request: Request) -> Response:
        if request.headers.get("If-None-Match") == '"p1"':
            return Response(status=304, headers={"ETag": '"p1"'})
        return Response(PAGE_HTML, content_type="text/html", headers={"ETag": '"p1"'})

    web.expect_request("/feed.xml").respond_with_handler(feed)
    web.expect_request("/article").respond_with_handler(page)
    web.expect_request("/other").respond_with_data(PAGE_HTML.replace("2.0", "2.1"), content_type="text/html")
    write_sources(
        corpus,
        [
            {
                "name": "blog",
                "kind": "feed",
                "url": web.url_for("/feed.xml"),
                "source_type": "forum",
                "follow_links": True,
            }
        ],
    )
    assert collect_corpus(corpus, today=TODAY).counts["added"] == 1
    path = _docs(corpus)[document_id(web.url_for("/article"))]
    before = path.read_bytes()
    items.insert(0, {"title": "Kestrel 2.1", "link": web.url_for("/other"), "description": "Autre."})
    night = collect_corpus(corpus, today=TODAY + dt.timedelta(days=1))
    assert (night.counts["added"], night.counts["unchanged"], night.counts["updated"]) == (1, 1, 0)
    assert path.read_bytes() == before and "quantification FP8" in parse_document(path).body


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            '[[source]]\nname = "a"\nkind = "feed"\nurl = "file:///etc/passwd"\nsource_type = "forum"\n',
            "source.0.url",
        ),
        (
            '[[source]]\nname = "a"\nkind = "rss"\nurl = "http://x.example/"\nsource_type = "forum"\n',
            "source.0.kind",
        ),
        (
            '[[source]]\nname = "a"\nkind = "feed"\nurl = "http://x.example/"\nsource_type = "Forum"\n',
            "source.0.source_type",
        ),
        (
            '[[source]]\nname = "a"\nkind = "feed"\nurl = "http://x.example/"\nsource_type = "forum"\nmax_item = 3\n',
            "source.0.max_item",
        ),
        ("[limit]\ntimeout_s = 3\n", "limit"),
        # Longer than a waiting collect waits (run.COLLECT_WAIT_S): refused, so a night always ends first.
        ("[limits]\nnight_deadline_s = 900\n", "limits.night_deadline_s"),
        ("[limits]\nfetch_deadline_s = 0\n", "limits.fetch_deadline_s"),
        ("[[source]\n", "not valid TOML"),
    ],
)
def test_sources_file_errors_name_the_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourcesError) as info:
        load_sources(path)
    assert str(path) in str(info.value) and field in str(info.value)


def test_duplicate_source_names_are_refused(tmp_path: Path) -> None:
    source = '[[source]]\nname = "a"\nkind = "feed"\nurl = "http://x.example/"\nsource_type = "forum"\n'
    (tmp_path / "sources.toml").write_text(source * 2, encoding="utf-8")
    with pytest.raises(SourcesError, match="a used twice"):
        load_sources(tmp_path / "sources.toml")


def test_a_second_collect_waits_for_the_first_then_gives_up_naming_the_lock(
    web: HTTPServer, corpus: Path
) -> None:
    import fcntl

    from veille.collect import collect_night
    from veille.collect.run import LOCK_FILE, STATE_FILE, CollectBusyError

    url = _feed(web, [{"title": "Un", "link": web.url_for("/a"), "description": "Texte un."}])
    write_sources(corpus, [{"name": "blog", "kind": "feed", "url": url, "source_type": "article-presse"}])
    collect_corpus(corpus, today=TODAY)
    state = (corpus / STATE_FILE).read_text()
    with (corpus / LOCK_FILE).open("a") as held:  # another collect of this corpus, still running
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(CollectBusyError, match=r"\.collect\.lock: another collect"):
            collect_corpus(corpus, today=TODAY, lock_wait_s=0.3)
        assert (corpus / STATE_FILE).read_text() == state  # nothing touched while it waited
        night = collect_night(corpus, lock_wait_s=0.3)  # the nightly step: an alert, not a failure
        assert [(a.code, a.severity) for a in night.alerts] == [("collect.busy", "error")]
        assert LOCK_FILE in night.alerts[0].message
    # Released: the next collect runs (and finds the item unchanged).
    assert collect_corpus(corpus, today=TODAY, lock_wait_s=0.3).counts["unchanged"] == 1
