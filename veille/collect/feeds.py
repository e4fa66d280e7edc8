"""RSS and Atom with feedparser, from bytes we fetched (feedparser never fetches anything itself).

feedparser turns external entities off (``feature_external_ges``) but does expand internal ones: a
feed declaring ``<!ENTITY a "...">`` nested ten deep grows a few hundred bytes into megabytes (billion
laughs). Feeds have no use for entity declarations, so a feed that has one is refused before parsing
(tests/test_collect_hostile.py).
"""

from __future__ import annotations

import re
import time
from datetime import date
from typing import Any

import feedparser

from veille.collect.items import Item, first_sentence, html_to_text

__all__ = ["FeedError", "parse_feed"]

_ENTITY_DECLARATION = re.compile(rb"<!ENTITY", re.IGNORECASE)


class FeedError(ValueError):
    """The bytes are not a feed (invalid XML with no entry, or no entry at all)."""


def _day(entry: Any) -> date | None:
    for key in ("published_parsed", "updated_parsed"):
        parsed: time.struct_time | None = entry.get(key)
        if parsed is not None:
            return date(parsed.tm_year, parsed.tm_mon, parsed.tm_mday)
    return None


def _entry_text(entry: Any) -> tuple[str, str]:
    """(summary, body) as plain text: the full content when the feed carries it, else the summary."""
    summary = html_to_text(str(entry.get("summary", "")))
    contents = entry.get("content") or []
    body = "\n\n".join(html_to_text(str(c.get("value", ""))) for c in contents).strip()
    return summary, body or summary


def parse_feed(data: bytes, base_url: str) -> list[Item]:
    """The entries of a feed with a link, in feed order. Raises :class:`FeedError`."""
    if _ENTITY_DECLARATION.search(data):
        raise FeedError("the feed declares XML entities (<!ENTITY …>): refused, feeds have no use for them")
    parsed = feedparser.parse(data, response_headers={"content-location": base_url})
    if not parsed.entries:
        problem = parsed.get("bozo_exception")
        raise FeedError(f"not a feed: {problem}" if problem else "no entry in the feed")
    items = []
    for entry in parsed.entries:
        link = str(entry.get("link", "")).strip()
        if not link.startswith(("http://", "https://")):
            continue  # no usable URL: the document id comes from it
        summary, body = _entry_text(entry)
        title = " ".join(str(entry.get("title", "")).split()) or link
        items.append(Item(link, title, _day(entry), first_sentence(summary or body), body))
    return items
