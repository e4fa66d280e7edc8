"""RSS and Atom with feedparser, from the bytes and headers we fetched (feedparser never fetches
anything itself). The Content-Type header goes with the bytes: feedparser decides the charset from
it, the BOM and the XML declaration (RFC 7303), where decoding everything as UTF-8 made mojibake of
Shift_JIS and KOI8-R feeds whose charset was only in the header.

feedparser turns external entities off (``feature_external_ges``) but does expand internal ones: a
feed declaring ``<!ENTITY a "...">`` nested ten deep grows a few hundred bytes into megabytes (billion
laughs). Feeds have no use for entity declarations, so a feed that has one is refused before parsing
(tests/test_collect_hostile.py).

An entry's document is keyed by its http(s) link; an entry without one (Atom ``tag:``/``urn:`` ids
are common) is keyed by its id/guid, else by a hash of its title and text, and written without
``url``; the source says how many in an alert. An entry with no link, no id and no text at all is
counted as unusable (alerted too, never silently dropped).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import feedparser

from veille.collect.items import Item, first_sentence, html_to_text, normalise_url, plain_title

__all__ = ["FeedError", "ParsedFeed", "parse_feed"]

_ENTITY_DECLARATION = re.compile(rb"<!ENTITY", re.IGNORECASE)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class FeedError(ValueError):
    """The bytes are not a feed (invalid XML with no entry, or no entry at all)."""


@dataclass
class ParsedFeed:
    """A feed's usable entries, in feed order, and what could not be keyed by a link."""

    items: list[Item] = field(default_factory=list)
    guid_only: list[str] = field(default_factory=list)  # keys of entries without an http(s) link
    unusable: int = 0  # entries with no link, no id and no text


def _day(entry: Any) -> date | None:
    for key in ("published_parsed", "updated_parsed"):
        parsed: time.struct_time | None = entry.get(key)
        if parsed is not None:
            return date(parsed.tm_year, parsed.tm_mon, parsed.tm_mday)
    return None


def _as_text(value: Any, detail: Any) -> str:
    """Plain text of a feed value: parsed as HTML when feedparser says it is, else kept as written."""
    text = str(value or "")
    kind = str((detail or {}).get("type", "text/html")).lower()
    return html_to_text(text) if kind in _HTML_TYPES else text.strip()


def _entry_text(entry: Any) -> tuple[str, str]:
    """(summary, body) as plain text: the full content when the feed carries it, else the summary."""
    summary = _as_text(entry.get("summary", ""), entry.get("summary_detail"))
    contents = entry.get("content") or []
    body = "\n\n".join(_as_text(c.get("value", ""), c) for c in contents).strip()
    return summary, body or summary


def _link(entry: Any) -> str | None:
    """The entry's http(s) link: ``link``, else an alternate or any link, else a URL-shaped id."""
    links = entry.get("links") or []
    candidates = [entry.get("link")]
    candidates += [link.get("href") for link in links if link.get("rel") == "alternate"]
    candidates += [link.get("href") for link in links]
    candidates.append(entry.get("id"))
    for candidate in candidates:
        if candidate and (url := normalise_url(str(candidate))) is not None:
            return url
    return None


def parse_feed(data: bytes, base_url: str, content_type: str = "") -> ParsedFeed:
    """The entries of a feed, ``content_type`` being the HTTP header as received (its charset
    decides the decoding when the document does not say). Raises :class:`FeedError`."""
    if _ENTITY_DECLARATION.search(data):
        raise FeedError("the feed declares XML entities (<!ENTITY …>): refused, feeds have no use for them")
    headers = {"content-location": base_url}
    if content_type:
        headers["content-type"] = content_type
    parsed = feedparser.parse(data, response_headers=headers)
    if not parsed.entries:
        problem = parsed.get("bozo_exception")
        raise FeedError(f"not a feed: {problem}" if problem else "no entry in the feed")
    feed = ParsedFeed()
    # Atom says a title's type; RSS has none, and escaped HTML in RSS titles is common practice
    # (<b>…</b>, even <script>): a title is read as HTML unless it is Atom's type="text".
    atom = str(parsed.get("version", "")).startswith("atom")
    for entry in parsed.entries:
        url = _link(entry)
        guid = " ".join(str(entry.get("id") or "").split()) or None
        summary, body = _entry_text(entry)
        title_type = str((entry.get("title_detail") or {}).get("type", "")).lower()
        is_html = not (atom and title_type == "text/plain")  # only Atom's type="text" is literal
        title = plain_title(str(entry.get("title", "")), is_html=is_html, fallback="")
        if url is None:
            if guid is None and not (title or body):
                feed.unusable += 1
                continue
            if guid is None:  # stable while the entry's text is: the same entry is the same document
                guid = (
                    "text-sha1:" + hashlib.sha1(f"{title}\x1f{body}".encode("utf-8", "replace")).hexdigest()
                )
            feed.guid_only.append(guid)
        title = title or plain_title("", is_html=False, fallback=url or guid or "")
        feed.items.append(Item(url, title, _day(entry), first_sentence(summary or body), body, guid))
    return feed
