"""The dossier as a structure (seed 004: numbers in the text, sources in the state): what the writer
and the reviser return, how code renders it, and the rules code applies to it whatever the model wrote.

- :class:`Dossier` is the internal form (lenient types: code sanitises it); :func:`dossier_schema`
  builds, per request, the strict schema a model answers in: citation numbers are a ``Literal`` of
  the sources of that request (at least one per key point), section ids a ``Literal`` of its axes.
- :func:`render_body` writes the Markdown sections in a fixed order; the title and ``## Sources``
  are added when the report is finalised.
- :func:`ledger_entries` reads the rendered ledger back (graders); :func:`supersedes` is the generic
  rule "a key point citing only the rejected side of a contradiction on its subject".

This module imports nothing of veille but veille.plaintext and the schema ceilings of
veille.roles.limits (textstats and citations import from it):
model text is escaped here, where it becomes Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from veille.plaintext import md_escape
from veille.roles.limits import ITEMS, REASON_CHARS, TEXT_CHARS, TITLE_CHARS

__all__ = [
    "DOSSIER_SECTIONS",
    "EMPTY_AXIS",
    "EMPTY_KEY_POINTS",
    "EMPTY_LEDGER",
    "EMPTY_RECOMMENDATION",
    "EMPTY_SYNTHESIS",
    "EMPTY_UNCERTAIN",
    "KEY_POINTS_SECTION",
    "LEDGER_SECTION",
    "NEWS_SECTION",
    "OPTIONAL_SECTIONS",
    "RECOMMENDATION_SECTION",
    "SUPERSEDED_MARK",
    "SYNTHESIS_MAX",
    "SYNTHESIS_MIN",
    "SYNTHESIS_SECTION",
    "UNCERTAIN_SECTION",
    "AxisSection",
    "CitedText",
    "Dossier",
    "Evidence",
    "KeyPoint",
    "LedgerEntry",
    "dossier_schema",
    "ledger_entries",
    "parse_ledger_entry",
    "render_body",
    "render_ledger_entry",
    "rendered_key_points",
    "supersedes",
    "without_news",
]

SYNTHESIS_SECTION = "Synthèse"
KEY_POINTS_SECTION = "Points clés"
# What the critic reads in place of a section kept from a validated night (veille.steps.review):
# the offline critic measures the other sections, code re-checks the whole draft (veille.arbiter).
KEPT_NOTE = "Section inchangée depuis la nuit précédente, où la grille l'a validée."
LEDGER_SECTION = "Contradictions tranchées"
UNCERTAIN_SECTION = "Ce qui reste incertain"
RECOMMENDATION_SECTION = "Recommandation"
DOSSIER_SECTIONS = (
    SYNTHESIS_SECTION,
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    UNCERTAIN_SECTION,
    RECOMMENDATION_SECTION,
)
# Rendered only when the request asks for it (a recommendation answers a choice): a dossier without
# it is complete (arbiter, critic).
OPTIONAL_SECTIONS = frozenset({RECOMMENDATION_SECTION})
SYNTHESIS_MIN, SYNTHESIS_MAX = 3, 5  # sentences of the synthesis
SUPERSEDED_MARK = "(remplacé)"
# Written by code between the synthesis and the key points (veille.steps.news), outside the five
# sections the writer answers: graders compare the five, without it (:func:`without_news`).
NEWS_SECTION = "Nouveautés"

# Placeholders: every section keeps its heading and a line of text, whatever the model returned.
EMPTY_SYNTHESIS = "Synthèse non fournie."
EMPTY_KEY_POINTS = "Aucun point clé sourcé."
EMPTY_AXIS = "Aucun constat sourcé pour cet axe."
EMPTY_LEDGER = "Aucune contradiction entre sources n'a été relevée."
EMPTY_UNCERTAIN = "Aucune incertitude n'a été relevée."
EMPTY_RECOMMENDATION = "Aucune recommandation n'a été formulée."


# --- the internal form ---------------------------------------------------------------------------


class CitedText(BaseModel):
    text: str = Field(description="Une ou deux phrases courtes, sans numéro de source dans le texte")
    citations: list[int] = Field(default_factory=list, description="Numéros des sources de ce texte")


class Evidence(BaseModel):
    """A cited document's passage supporting an item, located by code (veille.steps.verify): shown
    on demand under the item in report.html and the e-mail, never in report.md's prose."""

    doc_id: str
    title: str
    date: str
    passage: str  # the document's words, whitespace collapsed (data: escaped wherever shown)
    start: int  # the passage's span in the document's text
    end: int


class KeyPoint(BaseModel):
    text: str = Field(description="Un fait vérifiable, chiffres recopiés avec leur unité")
    citations: list[int] = Field(default_factory=list, description="Numéros de ses sources (au moins un)")
    superseded: bool = Field(
        default=False, description="Vrai si ce chiffre est remplacé par une source retenue dans le registre"
    )
    evidence: list[Evidence] = Field(default_factory=list)  # code's, never a model's (not in its schema)


class AxisSection(BaseModel):
    axis: str = Field(description="Identifiant de la sous-tâche (axe) de ces points")
    points: list[KeyPoint] = Field(default_factory=list)


class LedgerEntry(BaseModel):
    subject: str = Field(description="Sur quoi les sources divergent")
    retained: list[int] = Field(default_factory=list, description="Numéros des sources retenues")
    rejected: list[int] = Field(default_factory=list, description="Numéros des sources écartées")
    reason: str = Field(description="Pourquoi : date plus récente, source plus fiable, correctif…")
    evidence: list[Evidence] = Field(default_factory=list)  # code's: each side's passage


class Dossier(BaseModel):
    """The report's content; its Markdown is written by :func:`render_body`."""

    synthesis: list[CitedText] = Field(default_factory=list)
    sections: list[AxisSection] = Field(default_factory=list)
    contradictions: list[LedgerEntry] = Field(default_factory=list)
    uncertainties: list[CitedText] = Field(default_factory=list)
    # None: the request asks for no choice (an inventory, an evolution, a survey), so the dossier has
    # no recommendation section (veille.corpus.request_reading; set by code, never by a model).
    recommendation: list[CitedText] | None = Field(default_factory=list)


# --- the per-request schema ----------------------------------------------------------------------


def _choice(values: Sequence[Any]) -> Any:
    # Literal of the request's values; ``Literal[tuple]`` is how a Literal is built at run time.
    return Literal.__getitem__(tuple(values))


def _list(
    item: Any, description: str | None = None, *, min_length: int = 0, max_length: int | None = None
) -> Any:
    """``list[item]`` with its item count in the schema (minItems / maxItems)."""
    return Annotated[list[item], Field(description=description, min_length=min_length, max_length=max_length)]


@lru_cache(maxsize=64)
def _schema(numbers: tuple[int, ...], axes: tuple[str, ...], recommend: bool) -> type[BaseModel]:
    cite: Any = _choice(numbers) if numbers else int
    # Ceilings on every string and list (veille.roles.limits); no source: nothing may be cited, no
    # key point may exist.
    most = 0 if not numbers else ITEMS
    cites = _list(cite, "Numéros de sources de la liste", max_length=most)
    cites_one = _list(cite, "Au moins un numéro de source de la liste", min_length=1, max_length=ITEMS)
    text: Any = Annotated[str, Field(max_length=TEXT_CHARS)]
    cited = create_model("CitedText", text=(text, ...), citations=(cites, ...))
    point = create_model("KeyPoint", text=(text, ...), citations=(cites_one, ...), superseded=(bool, False))
    axis: Any = _choice(axes) if axes else str
    section = create_model("AxisSection", axis=(axis, ...), points=(_list(point, max_length=most), ...))
    entry = create_model(
        "LedgerEntry",
        subject=(Annotated[str, Field(max_length=TITLE_CHARS)], ...),
        retained=(cites_one, ...),
        rejected=(cites_one, ...),
        reason=(Annotated[str, Field(max_length=REASON_CHARS)], ...),
    )
    fields: dict[str, Any] = {
        "synthesis": (_list(cited, min_length=SYNTHESIS_MIN, max_length=SYNTHESIS_MAX), ...),
        "sections": (_list(section, "Une section par axe", max_length=len(axes)), ...),
        # A contradiction needs two distinct sources, one on each side.
        "contradictions": (_list(entry, max_length=ITEMS if len(numbers) >= 2 else 0), ...),
        "uncertainties": (_list(cited, max_length=ITEMS), ...),
    }
    if recommend:  # only a request that asks for a choice gets a recommendation
        fields["recommendation"] = (_list(cited, min_length=1, max_length=ITEMS), ...)
    return create_model("Dossier", __doc__=Dossier.__doc__, **fields)


def dossier_schema(numbers: Iterable[int], axes: Iterable[str], recommend: bool = True) -> type[BaseModel]:
    """The writer's and reviser's output schema for one request: citations among ``numbers``, at
    least one per key point and per side of a contradiction; section ids among ``axes``; a
    recommendation only when ``recommend`` (the request asks for a choice)."""
    return _schema(tuple(sorted(set(numbers))), tuple(dict.fromkeys(axes)), recommend)


# --- rendering -----------------------------------------------------------------------------------


def _cites(numbers: Iterable[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def _item(text: str, numbers: Sequence[int], mark: str = "") -> str:
    """``text [1][2].``: the citations after the text, before its final period (a question or
    an exclamation keeps its own mark: ``Coût ? [1]``)."""
    body = md_escape(text.strip())
    end = "" if body.endswith(("?", "!", "…")) else "."
    parts = [p for p in (body.rstrip(". ") if end else body, mark, _cites(numbers)) if p]
    return " ".join(parts) + end


def render_ledger_entry(entry: LedgerEntry) -> str:
    reason = md_escape(entry.reason.strip().rstrip("."))
    head = f"{md_escape(entry.subject.strip().rstrip('.:'))} — retenu : {_cites(entry.retained)} ; écarté : {_cites(entry.rejected)}"
    return f"{head}. {reason[:1].upper() + reason[1:]}." if reason else f"{head}."


def render_body(dossier: Dossier, titles: Mapping[str, str]) -> str:
    """The five sections in order (no title, no Sources), the recommendation only when the request
    asks for a choice; each axis under ``### <title>``."""
    synthesis = " ".join(_item(s.text, s.citations) for s in dossier.synthesis if s.text.strip())
    parts = [f"## {SYNTHESIS_SECTION}\n\n{synthesis or EMPTY_SYNTHESIS}"]
    axes = []
    for section in dossier.sections:
        points = [
            "- " + _item(p.text, p.citations, SUPERSEDED_MARK if p.superseded else "")
            for p in section.points
            if p.text.strip()
        ]
        title = md_escape(titles.get(section.axis, section.axis))
        axes.append(f"### {title}\n\n" + ("\n".join(points) or EMPTY_AXIS))
    parts.append(f"## {KEY_POINTS_SECTION}\n\n" + ("\n\n".join(axes) or EMPTY_KEY_POINTS))
    ledger = [f"- {render_ledger_entry(e)}" for e in dossier.contradictions]
    parts.append(f"## {LEDGER_SECTION}\n\n" + ("\n".join(ledger) or EMPTY_LEDGER))
    uncertain = [f"- {_item(u.text, u.citations)}" for u in dossier.uncertainties if u.text.strip()]
    parts.append(f"## {UNCERTAIN_SECTION}\n\n" + ("\n".join(uncertain) or EMPTY_UNCERTAIN))
    if dossier.recommendation is None:  # no choice asked: no recommendation section
        return "\n\n".join(parts) + "\n"
    items = [r for r in dossier.recommendation if r.text.strip()]
    recommendation = EMPTY_RECOMMENDATION
    if items:
        recommendation = _item(items[0].text, items[0].citations)
        rest = [f"- {_item(r.text, r.citations)}" for r in items[1:]]
        if rest:
            recommendation += "\n\n" + "\n".join(rest)
    parts.append(f"## {RECOMMENDATION_SECTION}\n\n{recommendation}")
    return "\n\n".join(parts) + "\n"


# --- reading the rendered ledger back ------------------------------------------------------------

_LEDGER_RE = re.compile(r"retenu : ((?:\[\d+\])+) ; écarté : ((?:\[\d+\])+)")
_NUMBER_RE = re.compile(r"\[(\d+)\]")


def ledger_entries(section: str) -> list[tuple[list[int], list[int], str]]:
    """(retained numbers, rejected numbers, line) of each entry of a rendered ledger section."""
    out = []
    for line in section.splitlines():
        match = _LEDGER_RE.search(line)
        if match:
            retained = [int(n) for n in _NUMBER_RE.findall(match.group(1))]
            rejected = [int(n) for n in _NUMBER_RE.findall(match.group(2))]
            out.append((retained, rejected, line))
    return out


def parse_ledger_entry(line: str) -> LedgerEntry | None:
    """A rendered ledger line back as an entry: subject before « — retenu », reason after the sides."""
    match = _LEDGER_RE.search(line)
    if match is None:
        return None
    subject = re.sub(r"^\s*-\s+", "", line[: match.start()]).rstrip(" —")
    return LedgerEntry(
        subject=subject,
        retained=[int(n) for n in _NUMBER_RE.findall(match.group(1))],
        rejected=[int(n) for n in _NUMBER_RE.findall(match.group(2))],
        reason=line[match.end() :].lstrip(" ."),
    )


_POINT_RE = re.compile(r"^\s*-\s+(?P<text>.*?)\s*(?P<mark>\(remplacé\))?\s*(?P<cites>(?:\[\d+\])+)\.?\s*$")


def rendered_key_points(section: str) -> list[KeyPoint]:
    """The key points of a rendered ``Points clés`` section (text, citations, superseded mark)."""
    out = []
    for line in section.splitlines():
        match = _POINT_RE.match(line)
        if match:
            numbers = [int(n) for n in _NUMBER_RE.findall(match.group("cites"))]
            out.append(
                KeyPoint(text=match.group("text"), citations=numbers, superseded=bool(match.group("mark")))
            )
    return out


# --- the generic superseded rule -----------------------------------------------------------------

# A figure: digits (spaces, commas or dots inside) and the word that follows (its unit, if any).
_FIGURE_RE = re.compile(r"\d+(?:[  .,]\d+)*(?:\s*[%€$]|\s+[^\W\d][\w/.-]*)?")
_WORD_RE = re.compile(r"[^\W\d_]{4,}")
_SUBJECT_SHARED = 2  # content words a key point shares with a ledger subject to be "about" it


_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _figures(text: str) -> set[str]:
    """Figures with a unit or a separator ("2 900 EUR", "3.4.2"); bare numbers and dates left out."""
    found = (
        " ".join(f.replace(" ", " ").split()).lower().rstrip(".")
        for f in _FIGURE_RE.findall(_DATE_RE.sub("", text))
    )
    return {f for f in found if not f.isdigit()}


# French function words of four letters or more: shared, they say nothing of a subject.
_FUNCTION_WORDS = frozenset([
    "plus", "pour", "dans", "avec", "sans", "sont", "être", "cette", "leur", "leurs", "mais", "comme",
    "elle", "elles", "nous", "vous", "tous", "tout", "toute", "toutes", "entre", "selon", "après",
    "avant", "depuis", "aussi", "donc", "alors", "très", "moins", "autre", "autres", "même", "dont",
    "encore"
])  # fmt: skip


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text)} - _FUNCTION_WORDS


def supersedes(entry: LedgerEntry, point: KeyPoint) -> bool:
    """True when ``point`` cites only sources ``entry`` rejects and is about its subject: it quotes
    a figure of the entry's subject or reason, or shares ``_SUBJECT_SHARED`` words with its subject."""
    if not point.citations or not set(point.citations) <= set(entry.rejected):
        return False
    if set(point.citations) & set(entry.retained):
        return False
    if _figures(point.text) & _figures(f"{entry.subject} {entry.reason}"):
        return True
    return len(_content_words(point.text) & _content_words(entry.subject)) >= _SUBJECT_SHARED


# --- the news section ----------------------------------------------------------------------------

_NEWS_RE = re.compile(rf"^## {NEWS_SECTION}\b.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)


def without_news(markdown: str) -> str:
    """The report without its ``## Nouveautés…`` section (what changed since the previous dossier)."""
    return _NEWS_RE.sub("", markdown)
