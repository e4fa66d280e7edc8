"""The shipped report as blocks of text: what report.html and the chat message are built from.

report.md is written by code (veille.dossier.render_body, veille.steps.news, finalize) in a small
fixed grammar: ``# title``, ``## section``, ``### axis``, ``- item``, paragraphs, citations ``[n]``,
then the code-built ``## Sources``. This module reads that grammar back into plain strings; it
never interprets any other markup: a model or document string stays a string (rendering escapes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from veille.dossier import DOSSIER_SECTIONS, NEWS_SECTION, SYNTHESIS_SECTION
from veille.textstats import SOURCES_HEADING

__all__ = ["Block", "Section", "Segment", "news_section", "parse_report", "segments", "synthesis_text"]

_CITE_RE = re.compile(r"\[(\d{1,4})\]")


@dataclass(frozen=True)
class Segment:
    """A run of text, or a citation (``number`` set; ``text`` is its label ``[n]``)."""

    text: str
    number: int | None = None


@dataclass(frozen=True)
class Block:
    kind: Literal["h3", "item", "paragraph"]
    text: str


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


def segments(text: str, known: frozenset[int]) -> list[Segment]:
    """``text`` split at its citations; a number not in ``known`` (the bibliography) stays text."""
    out: list[Segment] = []
    last = 0
    for match in _CITE_RE.finditer(text):
        number = int(match.group(1))
        if number not in known:
            continue
        if match.start() > last:
            out.append(Segment(text[last : match.start()]))
        out.append(Segment(match.group(0), number))
        last = match.end()
    if last < len(text):
        out.append(Segment(text[last:]))
    return out


def _is_section(heading: str) -> bool:
    """Only the headings code writes open a section: a model line starting with ``## `` is text."""
    return heading in DOSSIER_SECTIONS or heading.startswith(NEWS_SECTION)


def parse_report(markdown: str) -> tuple[str, list[Section]]:
    """The title and the sections of report.md, the ``## Sources`` section left out (the
    bibliography is rendered from the SourceRef list, never from text). Code appends that section
    last, so the cut is at its last heading, whatever a model line says."""
    lines = markdown.splitlines()
    cut = [i for i, line in enumerate(lines) if line.strip() == f"## {SOURCES_HEADING}"]
    title, sections = "", list[Section]()
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph and sections:
            sections[-1].blocks.append(Block("paragraph", " ".join(paragraph)))
        paragraph.clear()

    for raw in lines[: cut[-1]] if cut else lines:
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("# ") and not title and not sections:
            title = line[2:].strip()
        elif line.startswith("## ") and _is_section(line[3:].strip()):
            flush()
            sections.append(Section(line[3:].strip()))
        elif line.startswith("### ") and sections:
            flush()
            sections[-1].blocks.append(Block("h3", line[4:].strip()))
        elif line.startswith("- ") and sections:
            flush()
            sections[-1].blocks.append(Block("item", line[2:].strip()))
        else:
            paragraph.append(line)
    flush()
    return title, sections


def news_section(sections: list[Section]) -> Section | None:
    """The ``## Nouveautés…`` section (its heading may carry the previous dossier's date)."""
    return next((s for s in sections if s.title.startswith(NEWS_SECTION)), None)


def synthesis_text(sections: list[Section]) -> str:
    found = next((s for s in sections if s.title == SYNTHESIS_SECTION), None)
    return " ".join(b.text for b in found.blocks) if found else ""
