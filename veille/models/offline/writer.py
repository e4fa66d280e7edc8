"""Offline writer: assembles the report format from numbered findings.

- ``## Synthèse``: exactly three short sentences (scope and mandatory mentions, the most concrete
  finding, how contradictions were settled or what remains open).
- ``## Points clés``: one bullet per finding, grouped by sub-task, each ending with its source
  numbers; then one bullet per contradiction. Long sentences are cut at a comma or conjunction;
  when the text is over the word budget, the least concrete bullets go first (every sub-task
  keeps at least one).
- ``## Ce qui reste incertain``: open questions, then every missing axis, named in full.

Only numbers present in ``sources`` are ever written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from veille.models.offline.markdown import assemble, count_words, fit_sentence, sentence_words
from veille.models.offline.text import SUPERLATIVE_RE, extract_figures
from veille.roles.writer import Draft, WriterInput

__all__ = ["write"]

_CITE_RE = re.compile(r"\s*\[(\d+)\]")
_PROMO_RE = re.compile(
    r"\b(révolutionnaire|incroyable|exceptionnel(le)?s?|inégalée?s?|leader|n°\s?1|meilleur du marché)\b",
    re.IGNORECASE,
)


@dataclass
class _Bullet:
    text: str  # findings: without citations; contradictions: with their inline citations
    numbers: list[int]
    subtask: str
    rank: int  # order within its sub-task (contradictions: negative)
    value: float  # how concrete: figures, subjects compared
    pinned: bool = False  # contradictions and the best finding of each sub-task are kept

    def render(self, max_words: int) -> str:
        parts = [
            p
            for sentence in _CITED_SENTENCE_RE.findall(self.text)
            for p in fit_sentence(sentence.strip(), max_words)
        ]
        body = " ".join(parts).rstrip(".!?… ")
        if re.search(r"\]\s*$", body):  # already ends with its sources
            return f"{body}."
        cites = "".join(f"[{n}]" for n in self.numbers)
        return f"{body} {cites}." if cites else f"{body}."


# A sentence, with the citation markers that follow its final period.
_CITED_SENTENCE_RE = re.compile(r".+?(?:[.!?…](?:\s*\[\d+\])*(?=\s|$)|$)")


def _clean(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """Text without citation markers, and the valid numbers it cited (in order)."""
    numbers = [int(n) for n in _CITE_RE.findall(text) if int(n) in valid]
    stripped = _CITE_RE.sub("", text)
    stripped = re.sub(r"\s+([.,])", r"\1", stripped).strip()  # French keeps the space before : ; ! ?
    return stripped, list(dict.fromkeys(numbers))


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " et " + items[-1]


def _contradiction_text(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """A phrased contradiction with its citations kept in place and orphan numbers removed; a final
    parenthesis and semicolons opened into sentences so it can be cut to length."""
    text = _CITE_RE.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", text.strip())
    numbers = list(dict.fromkeys(int(n) for n in _CITE_RE.findall(text)))
    text = re.sub(r"\s*\(([^()]*)\)\s*\.?\s*$", r". \1.", text)
    text = text.replace(" ; ", ". ")
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    return " ".join(s[:1].upper() + s[1:] for s in sentences), numbers


def _value(text: str, mentions: Sequence[str]) -> float:
    named = sum(1 for m in mentions if m and m.casefold() in text.casefold())
    return min(len(extract_figures(text)), 3) + (1.5 if named >= 2 else 0.0)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n <= 1 else f"{n} {noun}s"


def _synthesis(data: WriterInput, bullets: Sequence[_Bullet], valid: set[int]) -> list[str]:
    limit = data.max_sentence_words
    n_parts = len({b.subtask for b in bullets if b.rank >= 0}) or len(data.questions)
    mentions = [m for m in data.mandatory_mentions if m.strip()]
    scope = f"en {_count(n_parts, 'volet')}, à partir de {_count(len(valid), 'source')}"
    first = f"Ce dossier compare {_join(mentions)} {scope}."
    if not mentions or sentence_words(first) > limit:
        first = f"Ce dossier traite la demande {scope}."
    # The most concrete finding that fits in one sentence, comparisons first.
    candidates = sorted(
        (b for b in bullets if b.rank >= 0 and b.value > 0 and sentence_words(b.text) <= limit - 2),
        key=lambda b: (-b.value, sentence_words(b.text), b.subtask, b.rank),
    )
    if candidates:
        best = candidates[0]
        # Introduced, so the synthesis does not repeat the key point word for word.
        second = f"À retenir : {best.text.rstrip('.!?… ')} " + "".join(f"[{n}]" for n in best.numbers) + "."
    else:
        second = "Les points clés ci-dessous reprennent les faits vérifiables des documents."
    n_contradictions = len(data.contradictions)
    if n_contradictions == 1:
        third = "Une divergence entre sources est tranchée selon la date et la fiabilité des sources."
    elif n_contradictions:
        third = f"{n_contradictions} divergences entre sources sont tranchées selon la date et la fiabilité des sources."
    elif data.open_questions or data.missing_axes:
        third = "Les points encore ouverts sont listés dans la dernière section."
    else:
        third = "Aucune divergence entre sources n'a été relevée."
    return [first, second, third]


def write(data: WriterInput) -> Draft:
    valid = {s.number for s in data.sources}
    limit = data.max_sentence_words
    order = list(dict.fromkeys([*data.questions, *(f.subtask_id for f in data.findings)]))
    bullets: list[_Bullet] = []
    seen: dict[str, _Bullet] = {}
    ranks: dict[str, int] = {}
    for finding in sorted(data.findings, key=lambda f: order.index(f.subtask_id)):
        text, inline = _clean(finding.statement, valid)
        numbers = list(dict.fromkeys([*inline, *(n for n in finding.sources if n in valid)]))
        if not numbers or not text or _PROMO_RE.search(text) or SUPERLATIVE_RE.search(text):
            continue  # a fact without a valid source, promotional or superlative, is not written
        key = text.casefold()
        if key in seen:  # the same statement from two branches: one bullet, all its sources
            twin = seen[key]
            twin.numbers = list(dict.fromkeys([*twin.numbers, *numbers]))
            continue
        rank = ranks.get(finding.subtask_id, 0)
        ranks[finding.subtask_id] = rank + 1
        bullet = _Bullet(text, numbers, finding.subtask_id, rank, _value(text, data.mandatory_mentions))
        seen[key] = bullet
        bullets.append(bullet)
    for subtask in order:  # each sub-task keeps its most concrete finding
        own = [b for b in bullets if b.subtask == subtask]
        if own:
            max(own, key=lambda b: (b.value, -b.rank)).pinned = True
    for n, phrased in enumerate(data.contradictions):
        text, numbers = _contradiction_text(phrased, valid)
        if numbers:
            bullets.append(
                _Bullet(text, numbers, "~", -1 - n, _value(text, data.mandatory_mentions), pinned=True)
            )

    uncertain: list[str] = []
    for question in data.open_questions:
        text, _ = _clean(question, valid)
        if text:
            uncertain.append(" ".join(fit_sentence(text, limit)))
    for axis in data.missing_axes:
        # Named in full, in the form the report code looks for, so it is not added twice.
        uncertain.append(f"Axe non couvert (analyse en échec) : {axis}")
    if not uncertain:
        uncertain.append("Les documents fournis ne laissent pas de question ouverte identifiée.")

    if not bullets:
        # No finding survived: list the sources themselves (cited), so the key points stay sourced.
        for source in sorted(data.sources, key=lambda x: x.number):
            kind = source.source_type.replace("-", " ")
            text = f"Document consulté : « {source.title} » ({kind}, {source.date})."
            bullets.append(_Bullet(text, [source.number], "~sources", source.number, 0.0, pinned=True))
    synthesis = _synthesis(data, bullets, valid)

    def draft_for(kept: Sequence[_Bullet]) -> str:
        return assemble(synthesis, [b.render(limit) for b in kept], uncertain)

    kept = list(bullets)
    markdown = draft_for(kept)
    # Over the word budget: the sub-task with the most bullets loses its least concrete one.
    while count_words(markdown) > data.max_words:
        droppable = [b for b in kept if not b.pinned]
        if not droppable:
            break
        sizes = {b.subtask: sum(1 for k in kept if k.subtask == b.subtask) for b in droppable}
        victim = min(droppable, key=lambda b: (-sizes[b.subtask], b.value, -b.rank, b.subtask))
        kept.remove(victim)
        markdown = draft_for(kept)
    # Still too long (few, very long findings): drop open questions from the end, keeping missing axes.
    while count_words(markdown) > data.max_words and len(uncertain) > len(data.missing_axes) + 1:
        uncertain.pop(len(uncertain) - len(data.missing_axes) - 1)
        markdown = draft_for(kept)
    return Draft(markdown=markdown)
