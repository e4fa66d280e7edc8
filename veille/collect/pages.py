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
from charset_normalizer import from_bytes
from w3lib.encoding import html_to_unicode

from veille.collect.items import Item, first_sentence, plain_title
from veille.corpus.convert import ConversionError, convert_bytes

__all__ = ["PageError", "convert_document", "decode_page", "extract_page"]

# Unicode blocks of Latin-script text (charset-normalizer's names for them).
_LATIN_RANGES = (
    "Basic Latin",
    "Latin",
    "Control character",
    "General Punctuation",
    "Spacing Modifier Letters",
    "Currency Symbols",
    "Letterlike Symbols",
)


class PageError(ValueError):
    """The page extracted to no text."""


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def _guess(data: bytes) -> str | None:
    """No BOM, header charset or declaration: UTF-8 when the bytes are; else charset-normalizer's
    guess, except that a text it reads as Latin script is windows-1252, the browsers' default for
    undeclared pages (charset-normalizer cannot tell the Latin code pages apart on a page's worth of
    text: it read a French windows-1252 page as cp1257, « déją »)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        best = from_bytes(data[:200_000]).best()
        if best is None or all(a.startswith(_LATIN_RANGES) for a in best.alphabets):
            try:
                data.decode("cp1252")
            except UnicodeDecodeError:
                return best.encoding if best is not None else None
            return "cp1252"
        return best.encoding
    return "utf-8"


def decode_page(data: bytes, content_type: str = "") -> str:
    """The page's text, decoded by its BOM, the header's charset, its own declaration, else a guess."""
    _encoding, text = html_to_unicode(content_type or None, data, auto_detect_fun=_guess)
    return text


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
