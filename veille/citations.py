"""Numbered sources (seed 004): numbers travel in the text, ids and titles stay in state.

- :class:`SourceRegistry` numbers documents in order of first citation; a document cited by two
  branches keeps one number (stable, de-duplicated). Web pages (``--web``) are entries like the
  documents, one per URI (their id is derived from it), numbered by the same rule.
- :func:`bibliography` writes the ``## Sources`` list from state; the model never writes it.
- :func:`invalid_citations` finds orphan numbers; :func:`renumber_citations` renumbers the final
  report in order of first appearance and keeps only the sources it cites.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from veille.docdates import known_day, origin_label
from veille.plaintext import plain
from veille.roles.writer import SourceRef

__all__ = [
    "CITATION_RE",
    "DocumentMeta",
    "SourceRegistry",
    "bibliography",
    "cited_numbers",
    "invalid_citations",
    "normalize_citations",
    "normalize_lookalikes",
    "renumber_citations",
    "strip_citations",
]

# Dates not given by the author nor by their file's own properties: the bibliography says where they came from.
_SHOWN_ORIGINS = frozenset({"file_name", "text", "file_clock"})
CITATION_RE = re.compile(r"\[(\d+)\]")
# "[1, 3]" or "[1; 3]" written by a model: rewritten as "[1][3]" so every check sees them.
_LIST_RE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)+)\]")
# The same number twice in a row ("[2][2]") after renumbering or stripping.
_REPEAT_RE = re.compile(r"(\[(\d+)\])(?:\s*\[\2\])+")


class DocumentMeta(Protocol):
    """What the registry needs to know about a document (catalogue entry or document text)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def date(self) -> str: ...
    @property
    def source_type(self) -> str: ...


class SourceRegistry:
    """Assigns source numbers in order of first citation; ids and titles come from ``documents``."""

    def __init__(self, documents: Mapping[str, DocumentMeta]) -> None:
        self._documents = documents
        self._numbers: dict[str, int] = {}

    def number(self, doc_id: str) -> int:
        """The number of ``doc_id``, assigned on first citation. Unknown ids are a programming error."""
        if doc_id not in self._documents:
            raise KeyError(f"{doc_id!r} is not a document of this corpus")
        if doc_id not in self._numbers:
            self._numbers[doc_id] = len(self._numbers) + 1
        return self._numbers[doc_id]

    def numbers(self, doc_ids: Iterable[str]) -> list[int]:
        """Numbers for ``doc_ids``, de-duplicated, in citation order."""
        return list(dict.fromkeys(self.number(i) for i in doc_ids))

    def sources(self) -> list[SourceRef]:
        """The numbered sources, number 1 first."""
        refs = []
        for doc_id, number in sorted(self._numbers.items(), key=lambda item: item[1]):
            doc = self._documents[doc_id]
            refs.append(
                SourceRef(
                    number=number,
                    id=doc.id,
                    title=doc.title,
                    date=str(doc.date),
                    source_type=doc.source_type,
                    url=getattr(doc, "url", None) or None,
                    flag=getattr(doc, "flag", None) or None,
                    kind=getattr(doc, "kind", "corpus"),
                    domain=getattr(doc, "domain", None) or None,
                    retrieved_at=getattr(doc, "retrieved_at", None) or None,
                    date_origin=getattr(doc, "date_origin", None) or None,
                )
            )
        return refs

    def __len__(self) -> int:
        return len(self._numbers)


def normalize_citations(text: str) -> str:
    """Rewrite "[1, 3]" as "[1][3]" and collapse a number repeated in a row."""
    text = _LIST_RE.sub(lambda m: "".join(f"[{n.strip()}]" for n in re.split(r"[,;]", m.group(1))), text)
    return _REPEAT_RE.sub(r"\1", text)


# Look-alikes of ``[n]`` a model writes (``[ 9 ]``, ``［9］``, ``[n°9]``, ``[#9]``, ``[^9]``,
# ``[9-10]``, ``(source 9)``): rewritten as ``[n]`` when every number is a source, else removed.
_PREFIX = r"(?:n\s*[°º]\.?|no\.?|#|\^|sources?|r[ée]f\.?)"
_LOOKALIKE_RES = (
    re.compile(rf"[\[［【〔]\s*(?:{_PREFIX}\s*)?(\d+)(?:\s*[-–—]\s*(\d+))?\s*[\]］】〕]", re.IGNORECASE),
    re.compile(rf"[(（]\s*(?:{_PREFIX}\s*)(\d+)(?:\s*[-–—]\s*(\d+))?\s*[)）]", re.IGNORECASE),
)
_MAX_RANGE = 5  # "[3-7]" names five sources; "[3-300]" names none clearly


def normalize_lookalikes(text: str, valid: Collection[int]) -> tuple[str, int, int]:
    """``text`` with look-alike citations as ``[n]`` (when every number is in ``valid``) or
    removed; returns the text, how many were normalised and how many removed."""
    counts = [0, 0]

    def repl(match: re.Match[str]) -> str:
        if re.fullmatch(r"\[\d+\]", match.group(0)):
            return match.group(0)  # already a citation
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        numbers = list(range(first, last + 1)) if 0 <= last - first < _MAX_RANGE else []
        if numbers and all(n in valid for n in numbers):
            counts[0] += 1
            return "".join(f"[{n}]" for n in numbers)
        counts[1] += 1
        return ""

    for pattern in _LOOKALIKE_RES:
        text = pattern.sub(repl, text)
    return text, counts[0], counts[1]


def cited_numbers(text: str) -> list[int]:
    """Numbers cited in ``text``, in order of first appearance, without repeats."""
    return list(dict.fromkeys(int(n) for n in CITATION_RE.findall(normalize_citations(text))))


def _valid_numbers(sources: Sequence[object]) -> set[int]:
    # Sources carrying their own number (SourceRef) are checked by number, anything else by position.
    return {getattr(s, "number", i) for i, s in enumerate(sources, 1)}


def invalid_citations(report: str, sources: Sequence[object]) -> list[int]:
    """Numbers cited in ``report`` that match no source (orphans), sorted."""
    valid = _valid_numbers(sources)
    return sorted(n for n in cited_numbers(report) if n not in valid)


def strip_citations(text: str, numbers: Iterable[int]) -> str:
    """Remove the citation markers of ``numbers`` (orphans) from ``text``."""
    drop = set(numbers)
    text = normalize_citations(text)
    stripped = CITATION_RE.sub(lambda m: "" if int(m.group(1)) in drop else m.group(0), text)
    # A marker removed before a period or comma leaves "mot ." : tidy the space (French keeps its
    # space before : ; ! ?).
    return re.sub(r"[ \t]{2,}", " ", re.sub(r"[ \t]+([.,])", r"\1", stripped))


def renumber_citations(text: str, sources: Sequence[SourceRef]) -> tuple[str, list[SourceRef]]:
    """Renumber citations in order of first appearance in ``text``; keep only the cited sources.

    Orphan numbers (no matching source) are left untouched: strip them first (zero tolerance is
    enforced by the caller, which also raises the alert).
    """
    text = normalize_citations(text)
    by_number = {s.number: s for s in sources}
    mapping: dict[int, int] = {}
    for n in cited_numbers(text):
        if n in by_number:
            mapping[n] = len(mapping) + 1
    renumbered = CITATION_RE.sub(
        lambda m: f"[{mapping[int(m.group(1))]}]" if int(m.group(1)) in mapping else m.group(0), text
    )
    kept = [
        by_number[old].model_copy(update={"number": new})
        for old, new in sorted(mapping.items(), key=lambda i: i[1])
    ]
    return normalize_citations(renumbered), kept


def _dated(source: SourceRef) -> str:
    """The date as the reader should weigh it: a date the author did not give says where it came from
    (« 2026-02-05 (date lue dans le texte) »); an unknown one reads « date inconnue »."""
    if source.date_origin in _SHOWN_ORIGINS and known_day(source.date) is not None:
        return f"{source.date} ({origin_label(source.date_origin)})"
    return source.date


def bibliography(sources: Sequence[SourceRef]) -> str:
    """The ``## Sources`` list, built by code: number, id, title, date, source type, url if any.

    Each item carries its citation label, ``- [12] **doc-07** — …``: a Markdown ordered list
    (``12. …``) would be renumbered by renderers, and the Prefect UI clips numbers ≥ 10 to their
    last digit, so [12] in the text would land on an item labelled "2.".

    A web page shows its domain, title, the date it was found and its URL (from the grounding chunk,
    never fetched): ``- [3] **exemple.org** — Titre — page web consultée le 2026-12-02 — <https://…>``."""
    lines = []
    for s in sorted(sources, key=lambda s: s.number):
        if s.kind == "web":  # the title is left out when it only repeats the domain
            label = plain(s.domain or "web")
            title = f" — {plain(s.title)}" if s.title and s.title != label else ""
            line = f"- [{s.number}] **{label}**{title} — page web consultée le {s.date}"
        else:
            line = (
                f"- [{s.number}] **{plain(s.id)}** — {plain(s.title)} — {_dated(s)} — {plain(s.source_type)}"
            )
        if s.url:
            line += f" — <{s.url}>"
        if s.flag:  # flagged by the screen and kept because relevant: the reader should know
            line += f" — ⚠ {s.flag}"
        lines.append(line)
    return "\n".join(lines)
