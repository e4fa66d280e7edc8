"""What one source gives in a night: its items (a feed's entries, with their pages when
``follow_links``; or one page), and what went wrong with single items, for the source's alerts."""

from __future__ import annotations

from dataclasses import dataclass, field

from veille.collect.feeds import parse_feed
from veille.collect.fetch import Fetched, Fetcher, FetchError
from veille.collect.items import Item, normalise_url
from veille.collect.pages import PageError, convert_document, extract_page
from veille.collect.sources import Source
from veille.corpus.convert import MEDIA_TYPES

__all__ = ["SourceNight", "feed_type", "page_type", "source_items"]

_FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/xml",
    "text/xml",
    "application/rdf+xml",
)
_PAGE_TYPES = ("text/html", "application/xhtml+xml")
# PDF and Word files, as a page source or an item's page: converted like the corpus's own files.
_DOCUMENT_TYPES = frozenset(t for t, fmt in MEDIA_TYPES.items() if fmt in ("pdf", "docx"))


@dataclass
class SourceNight:
    """A source's items this night (empty when not modified) and the problems with single items."""

    items: list[Item] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # item pages not fetched (the feed's text kept)
    pages_not_modified: set[str] = field(default_factory=set)  # followed pages that answered 304
    guid_only: list[str] = field(default_factory=list)  # entries keyed by their guid (no http(s) link)
    unusable: int = 0  # entries with neither link nor guid


def feed_type(content_type: str) -> bool:
    return (
        content_type in _FEED_TYPES or content_type.endswith(("+xml", "/xml")) or content_type == "text/plain"
    )


def page_type(content_type: str) -> bool:
    return content_type in _PAGE_TYPES or content_type in _DOCUMENT_TYPES


def _page(got: Fetched, url: str) -> Item:
    if got.content_type in _DOCUMENT_TYPES:
        return convert_document(got.body, url, got.content_type)
    return extract_page(got.body, url, got.content_type_header)


def source_items(fetcher: Fetcher, source: Source) -> SourceNight:
    """Fetch ``source`` and parse it. Raises FetchError, FeedError or PageError for the source
    itself; a followed item page that fails only leaves the feed's text (a problem)."""
    private_host = source.private_host
    accept = feed_type if source.kind == "feed" else page_type
    got = fetcher.get(source.url, private_host=private_host, accept=accept)
    night = SourceNight()
    if got.not_modified:
        return night
    if source.kind == "page":
        night.items = [_page(got, normalise_url(source.url) or source.url)]
        return night
    feed = parse_feed(got.body, got.url, got.content_type_header)
    night.guid_only, night.unusable = feed.guid_only, feed.unusable
    items = feed.items[: source.max_items]
    if source.follow_links:
        items = [_followed(fetcher, source, item, night) for item in items]
    night.items = items
    return night


def _followed(fetcher: Fetcher, source: Source, item: Item, night: SourceNight) -> Item:
    """The item with its page's main text (the feed's own text when the page cannot be had)."""
    if item.url is None:
        return item  # keyed by its guid: no page to follow
    try:
        page = fetcher.get(item.url, private_host=source.private_host, accept=page_type)
        if page.not_modified:
            night.pages_not_modified.add(item.url)
            return item
        extracted = _page(page, item.url)
    except (FetchError, PageError) as exc:  # the feed's own text stands in for the page
        night.problems.append(f"{item.url}: {exc}")
        return item
    return Item(
        item.url,
        item.title,
        item.day or extracted.day,
        item.summary or extracted.summary,
        extracted.body,
        item.guid,
    )
