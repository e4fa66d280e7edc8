"""Offline critic: scores a draft 1–5 per criterion with measurable proxies of the grid rules the
arbiter checks (so a compliant draft scores 5 everywhere), plus French remarks; docs/offline-engine.md."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from veille.dossier import (
    EMPTY_RECOMMENDATION,
    KEPT_NOTE,
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    OPTIONAL_SECTIONS,
    RECOMMENDATION_SECTION,
    SYNTHESIS_MAX,
    SYNTHESIS_MIN,
    ledger_entries,
)
from veille.offline import lexicon
from veille.offline.figures import extract_figures
from veille.offline.markdown import bullets, ends_with_citation, sentence_words
from veille.offline.text import SUPERLATIVE_RE
from veille.roles.critic import CriticInput
from veille.textstats import (
    MODEL_SECTIONS,
    SENTENCE_START_WORDS,
    count_words,
    long_sentences,
    section_order,
    sentences,
    split_sections,
)

__all__ = ["TOP", "clamp", "criticise"]

# The grid's one promotional list (veille/data/lang), the writer's and the judge's too.
_PROMO_RE = lexicon.pattern("promotional")
_DOUBLED_RE = re.compile(r"\b(\w{2,})\s+\1\b", re.IGNORECASE)
_CITE_RE = re.compile(r"\[(\d+)\]")
TOP = int(lexicon.weight("write_scale.top"))  # the best score of the grid's and the judge's 1–5 scales
# French criterion names (the seed's grid) -> the proxy they name.
_ALIASES = {
    name: proxy for proxy, names in lexicon.groups("write_critic_aliases", "fr").items() for name in names
}


def _w(key: str) -> int:
    return int(lexicon.weight(f"write_critic.{key}"))


def _start(sentence: str) -> str:  # a remark quotes as the arbiter's instructions do
    return " ".join(sentence.split()[:SENTENCE_START_WORDS])


def _contains(text: str, term: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term.lower())}(?!\w)", text.lower()) is not None


def clamp(value: int) -> int:
    return max(1, min(TOP, value))


@dataclass
class Measures:
    """Points each criterion lost, the key points' counts and one French remark per problem found."""

    lost: Counter[str] = field(default_factory=Counter)
    bullets: int = 0
    with_figures: int = 0
    cited: int = 0
    orphans: bool = False
    partial: bool = False  # sections kept from a validated night are shown as KEPT_NOTE
    remarks: list[str] = field(default_factory=list)

    def fault(self, remark: str, criterion: str = "correctness", points: int = 1) -> None:
        self.lost[criterion] += points
        if remark:
            self.remarks.append(remark)


def _sentences(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Sentences too long, sentences repeated."""
    limit = data.max_sentence_words
    for n, start in long_sentences(data.draft, limit):
        m.fault(
            f"La phrase « {start}… » compte {n} mots ({limit} au plus) : coupez-la en deux à une virgule.",
            "clarity",
        )
    seen: set[str] = set()
    duplicates: set[str] = set()
    for s in sentences(data.draft):
        key = re.sub(r"\W+", " ", s.casefold()).strip()
        if sentence_words(s) >= _w("repeat_words") and key in seen and s not in duplicates:
            duplicates.add(s)
            m.fault(f"La phrase « {_start(s)}… » apparaît deux fois : supprimez la répétition.", "clarity")
        seen.add(key)


def _sections(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """The model's sections present, in order, and no other; the synthesis' length."""
    order = section_order(data.draft)
    missing = [name for name in MODEL_SECTIONS if name not in order and name not in OPTIONAL_SECTIONS]
    for name in missing:
        m.fault(f"Ajoutez la section « ## {name} ».")
    present = [n for n in order if n in MODEL_SECTIONS]
    if not missing and present != [n for n in MODEL_SECTIONS if n in present]:
        m.fault("Remettez les sections dans l'ordre : " + ", ".join(MODEL_SECTIONS) + ".")
    for name in order:
        if name not in MODEL_SECTIONS:
            m.fault(f"Supprimez la section « ## {name} » : seules les sections prévues sont attendues.")
    n = len(sentences(sections.get(MODEL_SECTIONS[0], "")))
    if not SYNTHESIS_MIN <= n <= SYNTHESIS_MAX:  # a missing synthesis has its own remark
        m.fault(
            f"La synthèse compte {n} phrase(s) : ramenez-la à {SYNTHESIS_MIN} à {SYNTHESIS_MAX} phrases courtes."
            if MODEL_SECTIONS[0] in order
            else "",
            "clarity",
        )


def _key_points(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Key points ending with their source, and giving figures."""
    key_points = bullets(sections.get(MODEL_SECTIONS[1], ""))
    m.bullets = len(key_points)
    for b in key_points:
        m.with_figures += bool(extract_figures(_CITE_RE.sub("", b)))
        if ends_with_citation(b):
            m.cited += 1
        else:
            m.remarks.append(
                f"La puce « {_start(b)}… » ne finit pas par le numéro de sa source : ajoutez-le, ex. [1]."
            )
    if m.bullets and m.with_figures < m.bullets * lexicon.weight("write_critic.concrete_5"):
        m.remarks.append(
            f"Seules {m.with_figures} puces sur {m.bullets} donnent un chiffre : "
            "reprenez les chiffres des documents avec leur unité."
        )


def _citations(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Citation numbers that resolve to a source; at least one citation."""
    cited = sorted({int(n) for n in _CITE_RE.findall(data.draft)})
    orphans = [n for n in cited if not 1 <= n <= data.source_count]
    if orphans:
        m.orphans = True
        listed = ", ".join(f"[{n}]" for n in orphans)
        m.remarks.append(
            f"Les numéros {listed} ne renvoient à aucune source (1 à {data.source_count}) : retirez-les."
        )
    if not cited and data.source_count:
        m.remarks.append("Aucune source n'est citée : terminez chaque fait par le numéro de sa source.")


def _tone(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Forbidden, promotional and superlative words; exclamation marks."""
    draft = data.draft
    forbidden = [w for w in data.forbidden_words if w.strip() and _contains(draft, w)]
    for w in forbidden:
        m.fault(
            f"Retirez le mot interdit « {w} » et gardez une formulation neutre.", "tone", _w("forbidden_cost")
        )
    promotional = {match.group(0).lower() for match in _PROMO_RE.finditer(draft)} - {
        w.lower() for w in forbidden
    }
    for w in sorted(promotional):
        m.fault(f"Le mot « {w} » donne un ton commercial : remplacez-le par un fait chiffré.", "tone")
    superlatives = sorted({match.group(0).lower() for match in SUPERLATIVE_RE.finditer(draft)})
    m.lost["tone"] += bool(superlatives)  # one point whatever their number
    for w in superlatives:
        m.remarks.append(
            f"Le superlatif « {w} » n'est pas neutre : donnez plutôt le chiffre qui le justifie."
        )
    if draft.count("!"):
        m.fault(
            "Retirez les points d'exclamation : le ton doit rester factuel.",
            "tone",
            min(draft.count("!"), int(lexicon.weight("write_scale.exclamation_cap"))),
        )


def _form(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """Mandatory mentions, word count, doubled words, unpaired signs."""
    draft = data.draft
    # A partial draft (kept sections not shown): the whole-dossier rules, mentions and length, are
    # the arbiter's on the whole draft; measured here they would fault what is only not shown.
    for x in data.mandatory_mentions if not m.partial else ():
        if x.strip() and x not in draft:
            m.fault(f"Mentionnez explicitement « {x} », par exemple dans la synthèse.")
    words = count_words(draft)
    if not m.partial and not data.min_words <= words <= data.max_words:
        m.fault(f"Le texte compte {words} mots ; visez entre {data.min_words} et {data.max_words} mots.")
    for typo in sorted(
        {match.group(0) for match in _DOUBLED_RE.finditer(draft) if not match.group(1).isdigit()}
    ):
        m.fault(f"Mot répété « {typo} » : supprimez le doublon.")
    for opening, closing in (("(", ")"), ("[", "]"), ("«", "»")):
        if draft.count(opening) != draft.count(closing):
            m.fault(f"Les signes {opening} et {closing} ne sont pas appariés : fermez chaque ouverture.")


def _structure(data: CriticInput, sections: Mapping[str, str], m: Measures) -> None:
    """The dossier's shape: a section per axis, the ledger, the recommendation."""
    key_points = sections.get(KEY_POINTS_SECTION, "")
    headings = {
        line.removeprefix("###").strip() for line in key_points.splitlines() if line.startswith("### ")
    }
    for axis in data.axes:
        if axis not in headings:
            m.fault(f"Ajoutez la section « ### {axis} » sous Points clés, avec ses faits sourcés.")
    if data.axes and not headings:
        m.fault("Les points clés forment une liste plate : regroupez-les par axe de la demande.")
    if data.contradictions and not ledger_entries(sections.get(LEDGER_SECTION, "")):
        m.fault(
            f"Les analystes ont relevé {data.contradictions} contradiction(s) : dites, pour chacune, "
            "la source retenue, la source écartée et pourquoi.",
        )
    advice = sections.get(RECOMMENDATION_SECTION)  # absent: the request asks for no choice
    if advice is not None and (not advice.strip() or advice.strip() == EMPTY_RECOMMENDATION):
        m.fault("Formulez une recommandation qui découle des chiffres retenus, avec leurs sources.")


def _grade(ratio: float, kind: str) -> int:
    """5 from the ``{kind}_5`` share, 4 and 3 from the next cut-offs, 2 above nothing, 1 for nothing."""
    return (
        TOP - sum(ratio < lexicon.weight(f"write_critic.{kind}_{g}") for g in ("5", "4", "3")) - (ratio <= 0)
    )


def scores(m: Measures) -> dict[str, int]:
    out = {c: clamp(TOP - m.lost[c]) for c in ("clarity", "tone", "correctness")}
    # No key point shown: none written (1), or every section kept or held from a validated night,
    # where the grid passed them (TOP: nothing shown is at fault; the whole-dossier rules are code's).
    empty = TOP if m.partial else 1
    out["concreteness"] = _grade(m.with_figures / m.bullets, "concrete") if m.bullets else empty
    out["citations"] = _grade(m.cited / m.bullets, "cited") if m.bullets else empty
    if m.orphans:  # a number that resolves to no source is worse than a missing one
        out["citations"] = min(out["citations"], _w("orphan_cap"))
    return out


def criticise(data: CriticInput, criteria: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The evaluation dict for ``evaluation_schema(criteria)``: one int per criterion + remarks;
    a criterion with another name gets the mean of the five (rounded down)."""
    m = Measures(partial=KEPT_NOTE in data.draft)
    if m.partial:  # the kept sections' notes are not the draft's bullets: measured without them
        shown = "\n".join(line for line in data.draft.splitlines() if KEPT_NOTE not in line)
        data = data.model_copy(update={"draft": shown})
    sections = split_sections(data.draft)
    for check in (_sentences, _sections, _structure, _key_points, _citations, _tone, _form):
        check(data, sections, m)  # in the order their remarks are given to the reviser
    proxy = scores(m)
    generic = sum(proxy.values()) // len(proxy)
    out: dict[str, Any] = {}
    for name in criteria if criteria is not None else data.criteria:
        out[name] = proxy.get(_ALIASES.get(name.lower(), name.lower()), generic)
    out["remarks"] = list(dict.fromkeys(m.remarks))[: _w("max_remarks")]
    return out
