"""The report (seed 004): model text with fixed sections, then a ``## Sources`` list built by code.

Text measures used by the arbiter live here too, so the arbiter and the report agree on what a
word, a sentence and a section are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from veille.citations import CITATION_RE, bibliography, invalid_citations, renumber_citations, strip_citations
from veille.roles.writer import SourceRef

__all__ = [
    "MODEL_SECTIONS",
    "SOURCES_HEADING",
    "UNCERTAIN_SECTION",
    "FinalReport",
    "assemble_report",
    "count_words",
    "ensure_missing_axes",
    "finalize_report",
    "section_order",
    "sentences",
    "split_sections",
    "strip_title",
    "words",
]

MODEL_SECTIONS = ("Synthèse", "Points clés", "Ce qui reste incertain")
UNCERTAIN_SECTION = "Ce qui reste incertain"
SOURCES_HEADING = "Sources"

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


def strip_title(markdown: str) -> str:
    """Drop a leading ``# title`` line the model may have added (the code writes the title)."""
    lines = markdown.strip().splitlines()
    if lines and re.match(r"^#\s+\S", lines[0]):
        lines = lines[1:]
    return "\n".join(lines).strip()


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


def ensure_missing_axes(body: str, missing_axes: Sequence[str]) -> str:
    """Name every failed axis under "Ce qui reste incertain" (added by code when the model did not)."""
    if not missing_axes:
        return body
    uncertain = split_sections(body).get(UNCERTAIN_SECTION, "")
    lines = [
        f"- Axe non couvert (analyse en échec) : {axis}" for axis in missing_axes if axis not in uncertain
    ]
    if not lines:
        return body
    addition = "\n".join(lines)
    if UNCERTAIN_SECTION not in section_order(body):
        return f"{body.rstrip()}\n\n## {UNCERTAIN_SECTION}\n\n{addition}\n"
    # Insert at the end of the section, before the next heading if any.
    out, inside, inserted = [], False, False
    for line in body.splitlines():
        is_heading = re.match(r"^##\s+", line) is not None and not line.startswith("###")
        if inside and is_heading and not inserted:
            out.extend([addition, ""])
            inserted = True
        if is_heading:
            inside = line[2:].strip().rstrip("#").strip() == UNCERTAIN_SECTION
        out.append(line)
    if not inserted:
        out.extend(["", addition])
    return "\n".join(out).strip() + "\n"


def assemble_report(title: str, body: str, sources: Sequence[SourceRef]) -> str:
    """``# title``, the model text, then the code-built ``## Sources``."""
    text = body.strip()
    sources_text = bibliography(sources) if sources else "Aucune source citée."
    return f"# {title.strip()}\n\n{text}\n\n## {SOURCES_HEADING}\n\n{sources_text}\n"


@dataclass(frozen=True)
class FinalReport:
    """The shipped report: orphans stripped, citations renumbered, Sources appended."""

    markdown: str  # the whole report.md
    body: str  # the model text as shipped (no title, no Sources)
    sources: list[SourceRef]  # renumbered, cited ones only
    removed_orphans: list[int]  # orphan numbers stripped by code (an alert is due when non-empty)


def finalize_report(
    title: str, body: str, sources: Sequence[SourceRef], missing_axes: Sequence[str] = ()
) -> FinalReport:
    """Zero tolerance for orphans: strip them, renumber by first appearance, append the bibliography."""
    body = strip_title(body)
    # A "## Sources" section written by the model is dropped: the code writes it.
    if SOURCES_HEADING in section_order(body):
        kept = [
            f"## {name}\n\n{text}" if name else text
            for name, text in split_sections(body).items()
            if name != SOURCES_HEADING and (name or text)
        ]
        body = "\n\n".join(kept)
    orphans = invalid_citations(body, sources)
    if orphans:
        body = strip_citations(body, orphans)
    body = ensure_missing_axes(body, missing_axes)
    body, kept_sources = renumber_citations(body, sources)
    return FinalReport(assemble_report(title, body, kept_sources), body, kept_sources, orphans)
