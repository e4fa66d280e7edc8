"""A collected item (before it becomes a corpus document) and the text helpers feeds and pages share:
HTML to text with lxml's parser (never regexes), titles as plain capped text, URLs normalised so
ingestion accepts them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import lxml.html
from w3lib.url import safe_url_string

__all__ = ["TITLE_MAX_CHARS", "Item", "first_sentence", "html_to_text", "normalise_url", "plain_title"]

TITLE_MAX_CHARS = 300  # a catalogue line, not a page: a 700 KB title made a document ingest refused
_SPACES = re.compile(r"\s+")
# C0/C1 controls and the Unicode line/paragraph separators: never part of a one-line title.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s")


@dataclass(frozen=True)
class Item:
    """One feed entry or page: what the corpus document will say (text is untrusted data)."""

    url: str | None  # absolute http(s), normalised; None for a feed entry with only a guid
    title: str
    day: date | None  # from the item; None: the collect date is used
    summary: str
    body: str
    guid: str | None = None  # the entry's id, when it has no http(s) link

    @property
    def key(self) -> str:
        """What the document id is made of: the URL, else the guid."""
        return self.url if self.url is not None else f"guid:{self.guid}"


def html_to_text(fragment: str) -> str:
    """The visible text of an HTML fragment (feed summaries and contents), paragraphs kept."""
    if "<" not in fragment:
        return fragment.strip()
    try:
        root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    except (ValueError, lxml.etree.ParserError):
        return ""
    for bad in root.xpath("//script|//style"):
        bad.drop_tree()
    for block in root.xpath("//p|//br|//li|//div|//h1|//h2|//h3|//h4|//tr"):
        block.tail = "\n\n" + (block.tail or "")
    lines = (_SPACES.sub(" ", part).strip() for part in root.text_content().split("\n\n"))
    return "\n\n".join(line for line in lines if line)


def first_sentence(text: str, limit: int = 300) -> str:
    """The first sentence of ``text`` on one line, at most ``limit`` characters."""
    flat = _SPACES.sub(" ", text).strip()
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def plain_title(title: str, *, is_html: bool, fallback: str) -> str:
    """A title as one line of plain text, at most :data:`TITLE_MAX_CHARS` characters: markup parsed
    away when the source says it is HTML (``<b>Kestrel</b>`` is Kestrel; a script's text is
    dropped), controls removed; ``fallback`` when nothing is left."""
    text = html_to_text(title) if is_html else title
    flat = _SPACES.sub(" ", _CONTROLS.sub(" ", text)).strip()
    if not flat:
        flat = _SPACES.sub(" ", _CONTROLS.sub(" ", fallback)).strip()
    return flat if len(flat) <= TITLE_MAX_CHARS else flat[: TITLE_MAX_CHARS - 1].rstrip() + "…"


def normalise_url(url: str) -> str | None:
    """An absolute http(s) URL that ingestion accepts (no whitespace, ASCII), or None when ``url``
    is not one. Spaces and non-ASCII characters are percent-encoded (hosts in IDNA) by w3lib, as a
    browser would; a URL that is already printable ASCII without spaces is returned unchanged, so
    the ids of documents collected before stay the same."""
    text = url.strip()
    if not text.lower().startswith(("http://", "https://")):
        return None
    if not (text.isascii() and text.isprintable() and " " not in text):
        try:
            text = safe_url_string(text)
        except ValueError:  # e.g. a host IDNA refuses
            return None
    if any(c.isspace() for c in text) or not text.isascii():
        return None
    return text
