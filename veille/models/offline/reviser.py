"""Offline reviser: applies the arbiter's instructions mechanically.

Whatever the instructions say, the grid rules are re-applied in this order: keep exactly the three
sections (a ``## Sources`` section or extra sections are folded away), remove orphan citation
numbers and forbidden words, give every key point its final source numbers (a bullet with no
source at all is dropped: an unsourced fact is not shipped), drop key points phrased with a
superlative, cut sentences over the limit at a comma or conjunction, bring the synthesis back to
three sentences, add missing mandatory mentions to the synthesis, then trim or extend to the word
range. Forbidden words and mentions quoted in the instructions (« … ») are handled even when the
payload lists do not carry them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from veille.models.offline.markdown import (
    MODEL_SECTIONS,
    assemble,
    bullets,
    count_words,
    ends_with_citation,
    fit_sentence,
    sentence_words,
    sentences,
    split_sections,
)
from veille.models.offline.text import SUPERLATIVE_RE, extract_figures
from veille.roles.reviser import ReviserInput
from veille.roles.writer import Draft, SourceRef

__all__ = ["revise"]

_CITE_RE = re.compile(r"\s*\[(\d+)\]")
_QUOTED_RE = re.compile(r"«\s*(.+?)\s*»")
_FILLERS = (
    "Les points clés ci-dessous sont tirés des documents cités.",
    "Les incertitudes restantes sont listées dans la dernière section.",
    "Les chiffres sont repris tels que les documents les donnent.",
)


def _quoted(instructions: Sequence[str], marker: str) -> list[str]:
    out = []
    for text in instructions:
        if marker in text.lower():
            match = _QUOTED_RE.search(text)
            if match:
                out.append(match.group(1))
    return out


def _drop_words(text: str, words: Sequence[str]) -> str:
    for w in words:
        if w.strip():
            text = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s*!+", ".", text)  # exclamation marks: the tone stays factual
    text = re.sub(r"\.{2,}", ".", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([.,])", r"\1", text)
    return re.sub(r"\(\s*\)", "", text).strip()


def _split_units(text: str) -> list[str]:
    """Sentences of a paragraph, each with the citation markers that follow it."""
    return [
        s.strip() for s in re.findall(r".+?(?:[.!?…](?:\s*\[\d+\])*(?=\s|$)|$)", text.strip()) if s.strip()
    ]


def _fit_text(text: str, limit: int) -> str:
    """Every sentence of ``text`` cut to ``limit`` words; a trailing citation group stays at the end."""
    out: list[str] = []
    for unit in _split_units(text):
        tail_match = re.search(r"((?:\s*\[\d+\])+)\s*([.!?…]?)\s*$", unit)
        tail = ""
        if tail_match:
            tail = "".join(f"[{n}]" for n in re.findall(r"\d+", tail_match.group(1)))
            unit = unit[: tail_match.start()].rstrip() + (tail_match.group(2) or ".")
        parts = fit_sentence(unit, limit)
        if tail:
            parts[-1] = parts[-1].rstrip(".!?… ") + f" {tail}."
        out.extend(parts)
    return " ".join(out)


def _value(bullet: str, mentions: Sequence[str]) -> float:
    plain = _CITE_RE.sub("", bullet)
    return min(len(extract_figures(plain)), 3) + sum(1 for m in mentions if m in plain)


def revise(data: ReviserInput) -> Draft:
    limit = data.max_sentence_words
    valid = {s.number for s in data.sources} - set(data.invalid_citations)
    forbidden = list(dict.fromkeys([*data.forbidden_words, *_quoted(data.instructions, "mot interdit")]))
    mentions = list(
        dict.fromkeys([*data.mandatory_mentions, *_quoted(data.instructions, "mention obligatoire")])
    )

    # 1. Sections: the three expected ones; Sources dropped; extra sections folded into the nearest.
    sections = split_sections(data.draft)
    synthesis_text = sections.get(MODEL_SECTIONS[0], "")
    key_text = sections.get(MODEL_SECTIONS[1], "")
    uncertain_text = sections.get(MODEL_SECTIONS[2], "")
    preamble = sections.get("", "")
    if preamble and not synthesis_text:
        synthesis_text = preamble
    for name, body in sections.items():
        if name in (*MODEL_SECTIONS, "", "Sources"):
            continue
        if any(ends_with_citation(b) for b in bullets(body)):
            key_text += "\n" + body
        else:
            uncertain_text += "\n" + body

    # 2-3. Orphan numbers and forbidden words out.
    def clean(text: str) -> str:
        text = _CITE_RE.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", text)
        return _drop_words(text, forbidden)

    synthesis_text = clean(re.sub(r"^\s*[-*+]\s+", "", synthesis_text, flags=re.MULTILINE).replace("\n", " "))
    key_points = [clean(b) for b in bullets(key_text)] or [
        clean(line) for line in key_text.splitlines() if line.strip()
    ]
    uncertain = [clean(b) for b in bullets(uncertain_text)] or [
        clean(line) for line in uncertain_text.splitlines() if line.strip()
    ]

    # 4. Every key point ends with its sources; one without any source is dropped.
    fixed: list[str] = []
    for b in key_points:
        if not b:
            continue
        if not ends_with_citation(b):
            numbers = list(dict.fromkeys(re.findall(r"\[(\d+)\]", b)))
            if not numbers:
                continue
            b = _CITE_RE.sub("", b).rstrip(" .") + " " + "".join(f"[{n}]" for n in numbers) + "."
        fixed.append(b)
    key_points = list(dict.fromkeys(fixed))  # repeated bullets once
    # A superlative is not neutral, and cutting it out of a sentence breaks the sentence: the bullet
    # goes (one bullet at least stays).
    plain = [b for b in key_points if not SUPERLATIVE_RE.search(_CITE_RE.sub("", b))]
    key_points = plain or key_points[:1]

    # 5. Sentences over the limit are cut.
    key_points = [_fit_text(b, limit) for b in key_points]
    uncertain = [_fit_text(u, limit) for u in uncertain if u]

    # 6-7. Synthesis: three sentences, each within the limit, carrying the missing mentions.
    parts = [p for s in _split_units(synthesis_text) for p in _fit_text(s, limit).split(". ") if p.strip()]
    parts = [p if p.rstrip().endswith((".", "!", "?", "…", "]")) else p + "." for p in parts]
    synthesis = parts[:3]
    for filler in _FILLERS:
        if len(synthesis) >= 3:
            break
        synthesis.append(filler)
    body_so_far = assemble(synthesis, key_points, uncertain)
    missing = [m for m in mentions if m.strip() and m not in body_so_far]
    if missing:
        sentence = "Le dossier traite aussi de " + ", ".join(f"« {m} »" for m in missing) + "."
        if sentence_words(sentence) <= limit:
            synthesis[2] = sentence
        else:
            uncertain.extend(fit_sentence("À traiter aussi : " + " ; ".join(missing) + ".", limit))
    if len(sentences(" ".join(synthesis))) != 3:
        synthesis = [*synthesis[:2], _FILLERS[2]][:3]
        if missing and sentence_words(sentence) <= limit:
            synthesis[2] = sentence
    if not uncertain:
        uncertain = ["Les documents fournis ne laissent pas de question ouverte identifiée."]

    # 8. Word range: trim the least concrete key points, or extend with the sources not yet cited.
    draft = assemble(synthesis, key_points, uncertain)
    protected = {b for b in key_points if any(m in b for m in mentions)}
    while count_words(draft) > data.max_words:
        candidates = [b for b in key_points if b not in protected]
        if len(key_points) <= 1 or not candidates:
            break
        victim = min(reversed(candidates), key=lambda b: _value(b, mentions))
        key_points.remove(victim)
        draft = assemble(synthesis, key_points, uncertain)
    if count_words(draft) < data.min_words:
        cited_now = {int(n) for n in re.findall(r"\[(\d+)\]", draft)}
        for source in sorted(data.sources, key=lambda s: s.number):
            if count_words(draft) >= data.min_words:
                break
            if source.number in cited_now or source.number not in valid:
                continue
            key_points.append(_source_bullet(source, limit))
            draft = assemble(synthesis, key_points, uncertain)
    return Draft(markdown=draft)


def _source_bullet(source: SourceRef, limit: int) -> str:
    kind = source.source_type.replace("-", " ")
    text = f"Document consulté : « {source.title} » ({kind}, {source.date})."
    return _fit_text(text, limit).rstrip(". ") + f" [{source.number}]."
