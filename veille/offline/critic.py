"""Offline critic: scores a draft 1–5 per criterion with measurable proxies, plus French remarks.

The proxies follow the grid rules the arbiter checks (same word and sentence measures), so a
draft that meets every rule can score 5 everywhere and the loop can validate:

- clarity: sentences over the limit, repeated sentences, synthesis not in three to five sentences;
- concreteness: share of key-point bullets quoting a figure;
- citations: share of key-point bullets ending with their sources, orphan numbers, uncited text;
- tone: forbidden words, promotional words, superlatives, exclamation marks;
- correctness: sections (present, in order, no Sources section), the structure (one ``###``
  section per expected axis, a ledger entry when the analysts noted contradictions, a
  recommendation), mandatory mentions, word range, doubled words and unbalanced brackets.

A flat list of quoted bullets therefore does not score 5: the structure is measured, not assumed.

A criterion with another name gets the mean of the five (rounded down).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from veille.dossier import (
    EMPTY_RECOMMENDATION,
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    RECOMMENDATION_SECTION,
    SYNTHESIS_MAX,
    SYNTHESIS_MIN,
    ledger_entries,
)
from veille.offline import lexicon
from veille.offline.figures import extract_figures
from veille.offline.markdown import (
    MODEL_SECTIONS,
    bullets,
    count_words,
    ends_with_citation,
    sentence_words,
    sentences,
    split_sections,
)
from veille.offline.text import SUPERLATIVE_RE
from veille.roles.critic import CriticInput
from veille.textstats import section_order

__all__ = ["TOP", "clamp", "criticise", "measure"]

# The grid's one promotional list (veille/data/lang), the writer's and the judge's too.
_PROMO_RE = lexicon.pattern("promotional")
_DOUBLED_RE = re.compile(r"\b(\w{2,})\s+\1\b", re.IGNORECASE)
_CITE_RE = re.compile(r"\[(\d+)\]")
TOP = int(lexicon.weight("write_scale.top"))  # the best score of the grid's and the judge's 1–5 scales


def _start(sentence: str, n: int = 8) -> str:
    return " ".join(sentence.split()[:n])


def _contains(text: str, term: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term.lower())}(?!\w)", text.lower()) is not None


@dataclass
class Measures:
    """What the critic measured, with one French remark per problem found."""

    long_sentences: list[tuple[int, str]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    synthesis_sentences: int = 0
    bullets: int = 0
    bullets_with_figures: int = 0
    bullets_cited: int = 0
    orphans: list[int] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    promotional: list[str] = field(default_factory=list)
    superlatives: list[str] = field(default_factory=list)
    exclamations: int = 0
    section_problems: list[str] = field(default_factory=list)
    structure_problems: list[str] = field(default_factory=list)
    missing_mentions: list[str] = field(default_factory=list)
    words: int = 0
    out_of_range: bool = False
    typos: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)


def measure(data: CriticInput) -> Measures:
    """Every check of the draft, in the order its remarks are given to the reviser."""
    m = Measures()
    sections = split_sections(data.draft)
    for check in (_sentences, _sections, _structure, _key_points, _citations, _tone, _form):
        check(data, sections, m)
    return m


def _sentences(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Sentences too long, sentences repeated."""
    draft = data.draft
    limit = data.max_sentence_words
    all_sentences = sentences(draft)
    for s in all_sentences:
        n = sentence_words(s)
        if n > limit:
            m.long_sentences.append((n, _start(s)))
            m.remarks.append(
                f"La phrase « {_start(s)}… » compte {n} mots ({limit} au plus) : coupez-la en deux à une virgule."
            )
    seen: set[str] = set()
    for s in all_sentences:
        key = re.sub(r"\W+", " ", s.casefold()).strip()
        if sentence_words(s) >= 4 and key in seen and s not in m.duplicates:
            m.duplicates.append(s)
            m.remarks.append(f"La phrase « {_start(s)}… » apparaît deux fois : supprimez la répétition.")
        seen.add(key)


def _sections(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """The model's sections present, in order, and no other; the synthesis' length."""
    draft = data.draft
    order = section_order(draft)
    for name in MODEL_SECTIONS:
        if name not in order:
            m.section_problems.append(name)
            m.remarks.append(f"Ajoutez la section « ## {name} ».")
    present = [n for n in order if n in MODEL_SECTIONS]
    if not m.section_problems and present != list(MODEL_SECTIONS):
        m.section_problems.append("ordre")
        m.remarks.append("Remettez les sections dans l'ordre : " + ", ".join(MODEL_SECTIONS) + ".")
    for name in order:
        if name not in MODEL_SECTIONS:
            m.section_problems.append(name)
            m.remarks.append(
                f"Supprimez la section « ## {name} » : seules les sections prévues sont attendues."
            )
    synthesis = sections.get(MODEL_SECTIONS[0], "")
    m.synthesis_sentences = len(sentences(synthesis))
    if MODEL_SECTIONS[0] in order and not SYNTHESIS_MIN <= m.synthesis_sentences <= SYNTHESIS_MAX:
        m.remarks.append(
            f"La synthèse compte {m.synthesis_sentences} phrase(s) : ramenez-la à {SYNTHESIS_MIN} à "
            f"{SYNTHESIS_MAX} phrases courtes."
        )


def _key_points(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Key points ending with their source, and giving figures."""
    key_points = bullets(sections.get(MODEL_SECTIONS[1], ""))
    m.bullets = len(key_points)
    for b in key_points:
        if extract_figures(_CITE_RE.sub("", b)):
            m.bullets_with_figures += 1
        if ends_with_citation(b):
            m.bullets_cited += 1
        else:
            m.remarks.append(
                f"La puce « {_start(b)}… » ne finit pas par le numéro de sa source : ajoutez-le, ex. [1]."
            )
    if m.bullets and m.bullets_with_figures * 2 < m.bullets:
        m.remarks.append(
            f"Seules {m.bullets_with_figures} puces sur {m.bullets} donnent un chiffre : "
            "reprenez les chiffres des documents avec leur unité."
        )


def _citations(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Citation numbers that resolve to a source; at least one citation."""
    draft = data.draft
    cited = sorted({int(n) for n in _CITE_RE.findall(draft)})
    m.orphans = [n for n in cited if not 1 <= n <= data.source_count]
    if m.orphans:
        listed = ", ".join(f"[{n}]" for n in m.orphans)
        m.remarks.append(
            f"Les numéros {listed} ne renvoient à aucune source (1 à {data.source_count}) : retirez-les."
        )
    if not cited and data.source_count:
        m.remarks.append("Aucune source n'est citée : terminez chaque fait par le numéro de sa source.")


def _tone(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Forbidden, promotional and superlative words; exclamation marks."""
    draft = data.draft
    m.forbidden = [w for w in data.forbidden_words if w.strip() and _contains(draft, w)]
    for w in m.forbidden:
        m.remarks.append(f"Retirez le mot interdit « {w} » et gardez une formulation neutre.")
    m.promotional = sorted(
        {match.group(0).lower() for match in _PROMO_RE.finditer(draft)} - {w.lower() for w in m.forbidden}
    )
    for w in m.promotional:
        m.remarks.append(f"Le mot « {w} » donne un ton commercial : remplacez-le par un fait chiffré.")
    m.superlatives = sorted({match.group(0).lower() for match in SUPERLATIVE_RE.finditer(draft)})
    for w in m.superlatives:
        m.remarks.append(
            f"Le superlatif « {w} » n'est pas neutre : donnez plutôt le chiffre qui le justifie."
        )
    m.exclamations = draft.count("!")
    if m.exclamations:
        m.remarks.append("Retirez les points d'exclamation : le ton doit rester factuel.")


def _form(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Mandatory mentions, word count, doubled words, unpaired signs."""
    draft = data.draft
    m.missing_mentions = [x for x in data.mandatory_mentions if x.strip() and x not in draft]
    for x in m.missing_mentions:
        m.remarks.append(f"Mentionnez explicitement « {x} », par exemple dans la synthèse.")
    m.words = count_words(draft)
    m.out_of_range = not data.min_words <= m.words <= data.max_words
    if m.out_of_range:
        m.remarks.append(
            f"Le texte compte {m.words} mots ; visez entre {data.min_words} et {data.max_words} mots."
        )
    m.typos = sorted(
        {match.group(0) for match in _DOUBLED_RE.finditer(draft) if not match.group(1).isdigit()}
    )
    for typo in m.typos:
        m.remarks.append(f"Mot répété « {typo} » : supprimez le doublon.")
    for opening, closing in (("(", ")"), ("[", "]"), ("«", "»")):
        if draft.count(opening) != draft.count(closing):
            m.typos.append(opening + closing)
            m.remarks.append(
                f"Les signes {opening} et {closing} ne sont pas appariés : fermez chaque ouverture."
            )


def _structure(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """The dossier's shape: a section per axis, the ledger, the recommendation."""
    key_points = sections.get(KEY_POINTS_SECTION, "")
    headings = {line[3:].strip() for line in key_points.splitlines() if line.startswith("### ")}
    for axis in data.axes:
        if axis not in headings:
            m.structure_problems.append(axis)
            m.remarks.append(f"Ajoutez la section « ### {axis} » sous Points clés, avec ses faits sourcés.")
    if data.axes and not headings:
        m.structure_problems.append("flat")
        m.remarks.append("Les points clés forment une liste plate : regroupez-les par axe de la demande.")
    if data.contradictions and not ledger_entries(sections.get(LEDGER_SECTION, "")):
        m.structure_problems.append("ledger")
        m.remarks.append(
            f"Les analystes ont relevé {data.contradictions} contradiction(s) : dites, pour chacune, "
            "la source retenue, la source écartée et pourquoi."
        )
    advice = sections.get(RECOMMENDATION_SECTION, "").strip()
    if not advice or advice == EMPTY_RECOMMENDATION:
        m.structure_problems.append("recommendation")
        m.remarks.append("Formulez une recommandation qui découle des chiffres retenus, avec leurs sources.")


def clamp(value: int) -> int:
    return max(1, min(TOP, value))


def _ratio_score(ratio: float, steps: tuple[float, float, float]) -> int:
    high, mid, low = steps
    if ratio >= high:
        return 5
    if ratio >= mid:
        return 4
    if ratio >= low:
        return 3
    return 2 if ratio > 0 else 1


def scores(m: Measures, data: CriticInput) -> dict[str, int]:
    synthesis_off = not SYNTHESIS_MIN <= m.synthesis_sentences <= SYNTHESIS_MAX
    clarity = clamp(5 - len(m.long_sentences) - len(m.duplicates) - synthesis_off)
    concreteness = _ratio_score(m.bullets_with_figures / m.bullets, (0.5, 0.35, 0.2)) if m.bullets else 1
    citations = _ratio_score(m.bullets_cited / m.bullets, (1.0, 0.9, 0.7)) if m.bullets else 1
    if m.orphans:
        citations = min(citations, 2)
    tone = clamp(
        5 - 2 * len(m.forbidden) - len(m.promotional) - bool(m.superlatives) - min(m.exclamations, 2)
    )
    correctness = clamp(
        5
        - len(m.section_problems)
        - len(m.structure_problems)
        - len(m.missing_mentions)
        - m.out_of_range
        - len(m.typos)
    )
    return {
        "clarity": clarity,
        "concreteness": concreteness,
        "citations": citations,
        "tone": tone,
        "correctness": correctness,
    }


# Aliases: French criterion names (the seed's grid) map to the same proxies.
_ALIASES = {
    "clarte": "clarity",
    "clarté": "clarity",
    "concret": "concreteness",
    "citation": "citations",
    "sources": "citations",
    "ton": "tone",
    "correction": "correctness",
    "exactitude": "correctness",
}


def criticise(data: CriticInput, criteria: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The evaluation dict for ``evaluation_schema(criteria)``: one int per criterion + remarks."""
    m = measure(data)
    proxy = scores(m, data)
    generic = sum(proxy.values()) // len(proxy)
    out: dict[str, Any] = {}
    for name in criteria if criteria is not None else data.criteria:
        key = _ALIASES.get(name.lower(), name.lower())
        out[name] = proxy.get(key, generic)
    out["remarks"] = list(dict.fromkeys(m.remarks))[:12]
    return out
