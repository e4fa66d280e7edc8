"""The main text of a web page with trafilatura (boilerplate, menus and comments left out).

trafilatura over readability-lxml or jusText: maintained, the best scores in the published extraction
benchmarks (ScrapingHub article-extraction, Bevendorff et al. 2023), pure-Python wheels; it gives the
page's metadata (title, date, description) as well.
"""

from __future__ import annotations

from datetime import date

import trafilatura

from veille.collect.items import Item, first_sentence

__all__ = ["PageError", "extract_page"]


class PageError(ValueError):
    """The page extracted to no text."""


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def extract_page(html: str, url: str) -> Item:
    """The page as an item: main text as Markdown, title, date and description from its metadata."""
    doc = trafilatura.bare_extraction(
        html,
        url=url,
        with_metadata=True,
        include_comments=False,
        output_format="python",
    )
    text = (getattr(doc, "text", None) or "").strip() if doc is not None else ""
    if not text:
        raise PageError("the page extracted to no text")
    title = " ".join((getattr(doc, "title", None) or "").split()) or url
    description = getattr(doc, "description", None) or ""
    return Item(url, title, _day(getattr(doc, "date", None)), first_sentence(description or text), text)
