"""The arbiter (seed 000): pure code turning the critic's scores and hard checks into instructions.

Design rules from the seed:
- a missing score counts as 0: a forgotten criterion fails the grid instead of passing silently;
- instructions are full sentences that restate the criterion, handed to the reviser as they are;
- the critic's remarks are added only when the grid fails (a critic always finds something to say,
  which is no reason to loop again);
- hard checks in code: word range, sentence length (quoted by their start), forbidden words,
  mandatory mentions, orphan citations, the report's sections, cited bullets, and the request's
  language (veille.language_checks: prose in it, foreign passages as framed quotations, bounded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from veille.citations import CITATION_RE, invalid_citations
from veille.dossier import OPTIONAL_SECTIONS, SYNTHESIS_MAX, SYNTHESIS_MIN
from veille.grid import Grid
from veille.language_checks import language_instructions, unframed_instructions
from veille.textstats import (
    MODEL_SECTIONS,
    SENTENCE_START_WORDS,
    SOURCES_HEADING,
    count_words,
    long_sentences,
    section_order,
    sentences,
    split_sections,
)

__all__ = [
    "SENTENCE_START_WORDS",
    "Verdict",
    "arbitrate",
    "long_sentences",
    "part_instructions",
    "scores_of",
]

_LISTED = ", ".join(f"## {name}" for name in MODEL_SECTIONS)


@dataclass(frozen=True)
class Verdict:
    valid: bool
    instructions: list[str]
    scores: dict[str, int] = field(default_factory=dict)  # per grid criterion, missing -> 0
    mean: float = 0.0
    word_count: int = 0
    remarks: list[str] = field(default_factory=list)  # the critic's, among ``instructions`` (their tail)


def scores_of(evaluation: Mapping[str, Any], criteria: Sequence[str]) -> dict[str, int]:
    """Score per criterion; a missing or non-integer score counts as 0."""
    out = {}
    for name in criteria:
        value = evaluation.get(name, 0)
        out[name] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return out


def _contains_word(text: str, term: str) -> bool:
    # Whole-word, case-insensitive: "leader" must not fire on "leadership".
    return re.search(rf"(?<!\w){re.escape(term.lower())}(?!\w)", text.lower()) is not None


def _section_checks(draft: str) -> list[str]:
    out = []
    order = section_order(draft)
    for name in MODEL_SECTIONS:
        if name not in order and name not in OPTIONAL_SECTIONS:
            out.append(
                f"Section manquante : « ## {name} ». Le rapport doit contenir exactement les sections "
                f"{_LISTED}, dans cet ordre."
            )
    present = [name for name in order if name in MODEL_SECTIONS]
    if not out and present != [name for name in MODEL_SECTIONS if name in present]:
        out.append(f"Ordre des sections : placez-les dans cet ordre : {_LISTED}.")
    if SOURCES_HEADING in order:
        out.append("Supprimez la section « ## Sources » : la liste des sources est ajoutée par le code.")
    extra = [name for name in order if name not in (*MODEL_SECTIONS, SOURCES_HEADING)]
    if extra:
        listed = ", ".join(f"« ## {name} »" for name in extra)
        out.append(f"Sections en trop : {listed}. Gardez uniquement {_LISTED}.")
    sections = split_sections(draft)
    synthesis = sections.get("Synthèse")
    if synthesis is not None:
        n = len(sentences(synthesis))
        if not SYNTHESIS_MIN <= n <= SYNTHESIS_MAX:
            out.append(
                f"La section Synthèse compte {n} phrase(s) : elle doit en compter de {SYNTHESIS_MIN} "
                f"à {SYNTHESIS_MAX}, courtes et factuelles."
            )
    key_points = sections.get("Points clés")
    if key_points is not None:
        bullets = [line.strip() for line in key_points.splitlines() if re.match(r"^\s*[-*+]\s+", line)]
        if not bullets:
            out.append("La section Points clés doit être une liste à puces, une puce par fait sourcé.")
        for bullet in bullets:
            if not re.search(r"(\[\d+\])[\s.]*$", bullet):
                start = " ".join(bullet.lstrip("-*+ ").split()[:SENTENCE_START_WORDS])
                out.append(
                    f"Puce sans numéro de source final : « {start}… » ; terminez chaque puce par le ou "
                    "les numéros de ses sources, par exemple [1][3]."
                )
    return out


def _sentence_checks(text: str, grid: Grid) -> list[str]:
    return [
        f"Phrase trop longue ({n} mots, {grid.max_sentence_words} au plus) : « {start}… » ; coupez-la en deux."
        for n, start in long_sentences(text, grid.max_sentence_words)
    ]


def _word_checks(text: str, grid: Grid) -> list[str]:
    return [
        f"Mot interdit : « {w} » ; remplacez-le par une formulation neutre et factuelle."
        for w in grid.forbidden_words
        if _contains_word(text, w)
    ]


def part_instructions(text: str, grid: Grid, language: str = "") -> list[str]:
    """The instructions of the checks that read one line at a time (long sentences, forbidden
    words, unframed foreign quotations), on ``text``, one part of a draft: the same sentences
    :func:`arbitrate` writes for the whole draft, so an instruction can be traced to the parts
    that give it (veille.steps.review_scope: the reviser gets only the failing sections)."""
    return (
        _sentence_checks(text, grid) + _word_checks(text, grid) + unframed_instructions(text, language, grid)
    )


def _hard_checks(draft: str, grid: Grid, sources: Sequence[object], word_count: int) -> list[str]:
    """The grid's checks code makes whatever the critic says: length, sentences, words, mentions,
    citations."""
    instructions: list[str] = []
    if not grid.min_words <= word_count <= grid.max_words:
        instructions.append(
            f"Longueur : {word_count} mots, il en faut entre {grid.min_words} et {grid.max_words}."
        )
    instructions += _sentence_checks(draft, grid) + _word_checks(draft, grid)
    instructions += [
        f"Mention obligatoire absente : « {m} » ; citez-la explicitement dans le texte."
        for m in grid.mandatory_mentions
        if m not in draft
    ]
    orphans = invalid_citations(draft, sources)
    if orphans:
        listed = ", ".join(f"[{n}]" for n in orphans)
        instructions.append(
            f"Citations orphelines : {listed} ne correspond(ent) à aucune source. Supprimez-les ou "
            f"remplacez-les par un numéro de la liste des sources (1 à {len(sources)})."
        )
    if not CITATION_RE.search(draft) and sources:
        instructions.append(
            "Aucune source citée : chaque fait doit finir par le numéro de sa source, ex. [1]."
        )
    return instructions


def arbitrate(
    evaluation: Mapping[str, Any], draft: str, grid: Grid, sources: Sequence[object], language: str = ""
) -> Verdict:
    """Scores + hard checks -> (valid, instructions for the reviser).

    ``evaluation`` is the critic's output as a mapping (criterion -> int, ``remarks`` -> list[str]);
    ``draft`` is the model text (no title, no Sources section); ``sources`` the numbered sources;
    ``language`` the request's (ISO 639-1), a hard criterion when given.
    """
    scores = scores_of(evaluation, list(grid.criteria))
    instructions: list[str] = []
    for name, definition in grid.criteria.items():
        score = scores[name]
        if score < grid.threshold:
            shown = f"{score}/5" if score else "absente (comptée 0/5)"
            instructions.append(
                f"Critère « {name} » : note {shown}, il faut au moins {grid.threshold}/5. {definition}"
            )
    mean = sum(scores.values()) / len(scores)
    remarks = [str(r).strip() for r in evaluation.get("remarks", []) or [] if str(r).strip()]
    if mean < grid.mean_min:
        advice = (
            "Traitez en priorité les remarques ci-dessous."
            if remarks
            else "Relisez le texte critère par critère."
        )
        instructions.append(f"Moyenne : {mean:.1f}/5, il faut au moins {grid.mean_min}/5. {advice}")

    word_count = count_words(draft)
    instructions += _hard_checks(draft, grid, sources, word_count)
    instructions += _section_checks(draft)
    instructions += language_instructions(draft, language, grid)

    if instructions:  # the critic's remarks count only when the grid is not satisfied
        instructions += remarks
    return Verdict(
        valid=not instructions,
        instructions=instructions,
        scores=scores,
        mean=mean,
        word_count=word_count,
        remarks=remarks if instructions else [],
    )
