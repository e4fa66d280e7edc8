"""A collected item (before it becomes a corpus document) and the text helpers feeds and pages share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import lxml.html

__all__ = ["Item", "first_sentence", "html_to_text"]

_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s")


@dataclass(frozen=True)
class Item:
    """One feed entry or page: what the corpus document will say (text is untrusted data)."""

    url: str
    title: str
    day: date | None  # from the item; None: the collect date is used
    summary: str
    body: str


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
