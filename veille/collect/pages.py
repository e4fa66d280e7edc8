"""The main text of a web page with trafilatura (boilerplate, menus and comments left out).

trafilatura over readability-lxml or jusText: maintained, the best scores in the published extraction
benchmarks (ScrapingHub article-extraction, Bevendorff et al. 2023), pure-Python wheels; it gives the
page's metadata (title, date, description) as well.

The charset is decided before trafilatura sees the page, by w3lib's ``html_to_unicode`` (Scrapy's):
the BOM, the HTTP header's charset, ``<meta charset>``/``http-equiv`` or the XML declaration, in
the order browsers follow (WHATWG encoding sniffing), else a guess. trafilatura alone only guesses
from the bytes (UTF-8 first), which turned Shift_JIS and windows-1252 pages into U+FFFD.
"""

from __future__ import annotations

import datetime as dt
from datetime import date
from urllib.parse import unquote, urlsplit

import trafilatura

from veille.collect.items import Item, first_sentence, plain_title
from veille.corpus.convert import ConversionError, convert_bytes
from veille.corpus.sniff import decode_html

__all__ = ["PageError", "convert_document", "decode_page", "extract_page"]


class PageError(ValueError):
    """The page extracted to no text."""


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def decode_page(data: bytes, content_type: str = "") -> str:
    """The page's text, decoded by its BOM, the header's charset, its own declaration, else a guess
    (the corpus's own HTML files are decoded the same way: :mod:`veille.corpus.sniff`)."""
    return decode_html(data, content_type)


def extract_page(data: bytes, url: str, content_type: str = "") -> Item:
    """The page as an item: main text as Markdown, title, date and description from its metadata.
    ``content_type`` is the HTTP header as received (its charset decides the decoding)."""
    doc = trafilatura.bare_extraction(
        decode_page(data, content_type),
        url=url,
        with_metadata=True,
        include_comments=False,
        output_format="python",
    )
    text = (getattr(doc, "text", None) or "").strip() if doc is not None else ""
    if not text:
        raise PageError("the page extracted to no text")
    title = plain_title(getattr(doc, "title", None) or "", is_html=False, fallback=url)
    description = getattr(doc, "description", None) or ""
    return Item(url, title, _day(getattr(doc, "date", None)), first_sentence(description or text), text)


def convert_document(data: bytes, url: str, media_type: str) -> Item:
    """A PDF or DOCX a source serves, through the same conversion as the corpus's own files
    (veille/corpus/convert.py): text, and title and date from the file's properties."""
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or "document"
    try:
        converted = convert_bytes(data, name=name, media_type=media_type)
    except ConversionError as exc:
        raise PageError(f"cannot convert the document: {exc}") from None
    day = converted.date.date() if isinstance(converted.date, dt.datetime) else converted.date
    title = plain_title(converted.title or "", is_html=False, fallback=name)
    return Item(url, title, day, first_sentence(converted.text), converted.text)
