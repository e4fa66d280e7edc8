"""Offline reviser: re-applies every grid rule to the dossier's structure whatever the arbiter's
instructions say (forbidden words and mentions quoted « … » in them included); citations are kept
as they are (code has already checked them). The order of the rules: docs/offline-engine.md."""

from __future__ import annotations

import re
from collections.abc import Sequence

from veille.dossier import (
    SYNTHESIS_MAX,
    SYNTHESIS_MIN,
    AxisSection,
    CitedText,
    Dossier,
    KeyPoint,
    LedgerEntry,
    render_body,
)
from veille.offline import lexicon
from veille.offline.figures import extract_figures
from veille.offline.markdown import count_words, fit_clauses, sentence_words
from veille.offline.text import SUPERLATIVE_RE
from veille.offline.writer import SENTENCE_RE, consulted, periods
from veille.roles.reviser import ReviserInput

__all__ = ["revise"]

_QUOTED_RE = re.compile(r"«\s*(.+?)\s*»")
_FILLERS = (
    "Les points clés ci-dessous sont tirés des documents cités.",
    "Les incertitudes restantes sont listées dans une section dédiée.",
    "Les chiffres sont repris tels que les documents les donnent.",
)


def _quoted(instructions: Sequence[str], marker: str) -> list[str]:
    """What the instructions carrying ``marker`` quote first (« … »)."""
    matches = (_QUOTED_RE.search(text) for text in instructions if marker in text.lower())
    return [match.group(1) for match in matches if match]


def _drop_words(text: str, words: Sequence[str]) -> str:
    for w in words:
        if w.strip():
            text = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s*!+", ".", text)  # exclamation marks: the tone stays factual
    text = re.sub(r"\.{2,}", ".", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([.,])", r"\1", text)
    return re.sub(r"\(\s*\)", "", text).strip()


def _fit(text: str, limit: int) -> str:
    """Each sentence within ``limit`` words where it can be cut between clauses (a semicolon);
    else kept whole: an over-long sentence costs a critic's remark, a cut one misquotes a source."""
    sentences = [s.strip() for s in SENTENCE_RE.split(text.strip()) if s.strip()]
    return periods(p for s in sentences for p in fit_clauses(s, limit) or [s])


def _value(point: KeyPoint, mentions: Sequence[str]) -> float:
    figures = min(len(extract_figures(point.text)), lexicon.weight("write_points.figures_cap"))
    return figures + sum(1 for m in mentions if m in point.text)


def _synthesis(items: Sequence[CitedText], limit: int) -> list[CitedText]:
    """One item per sentence (citations on the item's last sentence), three to five of them."""
    out: list[CitedText] = []
    for item in items:
        sentences = [s for s in SENTENCE_RE.split(_fit(item.text, limit)) if s.strip()]
        for n, sentence in enumerate(sentences):
            last = n == len(sentences) - 1
            out.append(CitedText(text=sentence, citations=list(item.citations) if last else []))
    out = out[:SYNTHESIS_MAX]
    out += [CitedText(text=filler) for filler in _FILLERS[: max(SYNTHESIS_MIN - len(out), 0)]]
    return out


def _sections(draft: Dossier, clean: Sequence[str], limit: int) -> list[AxisSection]:
    seen: set[str] = set()
    sections = []
    for section in draft.sections:
        points = []
        for p in section.points:
            text = _fit(_drop_words(p.text, clean), limit)
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                points.append(p.model_copy(update={"text": text}))
        sections.append(AxisSection(axis=section.axis, points=points))
    # A superlative is not neutral, and cutting it out breaks the sentence: the point goes (one stays).
    plain = [[p for p in s.points if not SUPERLATIVE_RE.search(p.text)] for s in sections]
    if any(plain):
        sections = [AxisSection(axis=s.axis, points=kept) for s, kept in zip(sections, plain, strict=True)]
    return sections


def _fit_length(dossier: Dossier, data: ReviserInput, mentions: Sequence[str]) -> Dossier:
    """Trim the least concrete key points, or extend with the sources not cited yet."""

    def words(d: Dossier) -> int:
        return count_words(render_body(d, data.axes))

    while words(dossier) > data.max_words:
        candidates = [
            (s_index, p) for s_index, s in enumerate(dossier.sections) for p in s.points
            if not any(m in p.text for m in mentions) and len(s.points) > 1
        ]  # fmt: skip
        if not candidates:
            break
        s_index, victim = min(reversed(candidates), key=lambda c: _value(c[1], mentions))
        dossier.sections[s_index].points.remove(victim)
    if dossier.sections and words(dossier) < data.min_words:
        # Too short: the sources no item cites are listed as read (an uncertainty), never as points.
        cited = set(re.findall(r"\[(\d+)\]", render_body(dossier, data.axes)))
        for line in consulted(
            [s for s in data.sources if str(s.number) not in cited], data.max_sentence_words
        ):
            if words(dossier) >= data.min_words:
                break
            dossier.uncertainties.append(line)
    return dossier


def revise(data: ReviserInput) -> Dossier:
    limit = data.max_sentence_words
    forbidden = list(dict.fromkeys([*data.forbidden_words, *_quoted(data.instructions, "mot interdit")]))
    mentions = list(
        dict.fromkeys([*data.mandatory_mentions, *_quoted(data.instructions, "mention obligatoire")])
    )
    draft = data.draft

    def cited(items: Sequence[CitedText]) -> list[CitedText]:
        out = [i.model_copy(update={"text": _fit(_drop_words(i.text, forbidden), limit)}) for i in items]
        return [i for i in out if i.text]

    def entry(e: LedgerEntry) -> LedgerEntry:
        reason = _fit(_drop_words(e.reason, forbidden), limit)
        return e.model_copy(update={"subject": _drop_words(e.subject, forbidden), "reason": reason})

    dossier = Dossier(
        synthesis=_synthesis(cited(draft.synthesis), limit),
        sections=_sections(draft, forbidden, limit),
        contradictions=[entry(e) for e in draft.contradictions],
        uncertainties=cited(draft.uncertainties),
        # No choice asked (None): no recommendation, whatever the critic says.
        recommendation=None
        if draft.recommendation is None
        else cited(draft.recommendation)
        or [CitedText(text="Le choix reste à instruire à partir des points clés.")],
    )
    missing = [m for m in mentions if m.strip() and m not in render_body(dossier, data.axes)]
    if missing:
        sentence = "Le dossier traite aussi de " + ", ".join(f"« {m} »" for m in missing) + "."
        if sentence_words(sentence) <= limit and len(dossier.synthesis) < SYNTHESIS_MAX:
            dossier.synthesis.append(CitedText(text=sentence))
        elif sentence_words(sentence) <= limit:
            dossier.synthesis[-1] = CitedText(text=sentence)
        else:
            dossier.uncertainties.append(
                CitedText(text=_fit("À traiter aussi : " + " ; ".join(missing) + ".", limit))
            )
    return _fit_length(dossier, data, mentions)
