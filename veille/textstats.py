"""Text measures and the report's section names, shared by the write and review steps, the arbiter
and the offline engine, so they all agree on what a word, a sentence and a section are."""

from __future__ import annotations

import re

from veille.citations import CITATION_RE
from veille.dossier import DOSSIER_SECTIONS, UNCERTAIN_SECTION

__all__ = [
    "MODEL_SECTIONS",
    "SENTENCE_START_WORDS",
    "SOURCES_HEADING",
    "UNCERTAIN_SECTION",
    "count_words",
    "long_sentences",
    "section_order",
    "sentences",
    "split_sections",
    "words",
]

MODEL_SECTIONS = DOSSIER_SECTIONS  # the sections code renders, in order (veille.dossier)
SOURCES_HEADING = "Sources"
SENTENCE_START_WORDS = 8  # how much of a long sentence the arbiter's instruction quotes

# A word keeps its elisions and hyphens ("l'article", "c'est-à-dire" count once): \w+ alone would
# count French elisions twice and make the 25-word sentence rule stricter than intended.
_WORD_RE = re.compile(r"\w+(?:['’\-]\w+)*")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?…])\s+")
_MARKUP_RE = re.compile(r"[*_`>]+")


def _prose_lines(markdown: str) -> list[str]:
    """Lines of prose: headings dropped, list markers, emphasis and citation markers removed."""
    out = []
    for line in markdown.splitlines():
        if not line.strip() or _HEADING_RE.match(line.strip()):
            continue
        line = _LIST_MARK_RE.sub("", line)
        line = CITATION_RE.sub("", line)
        out.append(_MARKUP_RE.sub("", line).strip())
    return [line for line in out if line]


def words(text: str) -> list[str]:
    """Words of the prose (citation markers and headings excluded)."""
    return [w for line in _prose_lines(text) for w in _WORD_RE.findall(line)]


def count_words(text: str) -> int:
    return len(words(text))


def sentences(text: str) -> list[str]:
    """Sentences of the prose. Each list item or line is a unit of its own, then split on . ! ? …"""
    out: list[str] = []
    for line in _prose_lines(text):
        out.extend(s.strip() for s in _SENTENCE_SPLIT_RE.split(line) if s.strip())
    return out


def split_sections(markdown: str) -> dict[str, str]:
    """``## heading`` -> body. Text before the first ``##`` is returned under the key ``""``."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in markdown.splitlines():
        match = re.match(r"^##\s+(.+?)\s*#*\s*$", line)
        if match and not line.startswith("###"):
            current = match.group(1).strip()
            sections.setdefault(current, [])
            continue
        sections[current].append(line)
    return {name: "\n".join(body).strip() for name, body in sections.items()}


def section_order(markdown: str) -> list[str]:
    """Level-2 headings in order of appearance."""
    return [m.group(1).strip() for m in re.finditer(r"^##\s+(.+?)\s*#*\s*$", markdown, flags=re.MULTILINE)]


def long_sentences(text: str, max_words: int) -> list[tuple[int, str]]:
    """(word count, start of the sentence) for each sentence over ``max_words`` (the arbiter's
    rule, shared with the offline critic)."""
    out = []
    for sentence in sentences(text):
        n = len(words(sentence))
        if n > max_words:
            out.append((n, " ".join(sentence.split()[:SENTENCE_START_WORDS])))
    return out
