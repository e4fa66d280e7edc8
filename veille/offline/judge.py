"""Offline judge: scores each response 1–5 on accuracy, usefulness, tone and format from proxies.

- accuracy: share of the reference's figures found in the response (same value and unit, 1 %
  tolerance), blended with the share of the reference's key words it uses;
- usefulness: coverage of the reference's key words, and a length not far from the reference's;
- tone: forbidden or promotional words, exclamation marks;
- format: the reference's ``##`` sections present, bullets, citation markers when the reference has them.
"""

from __future__ import annotations

import re
from collections import Counter

from veille.offline import lexicon
from veille.offline.figures import extract_figures, figure_unit, figure_value
from veille.offline.text import stems
from veille.roles.judge import JudgeInput, JudgeScore, JudgeVerdict, make_verdict
from veille.textstats import count_words, section_order

__all__ = ["judge"]

# The grid's one promotional list (veille/data/lang), the writer's and the critic's too.
_PROMO_RE = lexicon.pattern("promotional")


def _figure_keys(text: str) -> set[tuple[float, str]]:
    out = set()
    for f in extract_figures(text):
        value = figure_value(f)
        if value is not None:
            out.add((value, figure_unit(f)))
    return out


def _found(figure: tuple[float, str], pool: set[tuple[float, str]]) -> bool:
    value, unit = figure
    return any(u == unit and abs(v - value) <= 0.01 * max(abs(value), 1e-9) for v, u in pool)


def _key_words(text: str, n: int = 40) -> set[str]:
    counts = Counter(s for s in stems(text) if len(s) > 2)
    return {s for s, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]}


def _scale(ratio: float) -> int:
    return 5 if ratio >= 0.8 else 4 if ratio >= 0.6 else 3 if ratio >= 0.4 else 2 if ratio >= 0.2 else 1


def judge(data: JudgeInput) -> JudgeVerdict:
    ref_figures = _figure_keys(data.reference)
    ref_words = _key_words(data.reference)
    ref_sections = section_order(data.reference)
    ref_length = max(count_words(data.reference), 1)
    ref_cites = bool(re.search(r"\[\d+\]", data.reference))
    scores = []
    for response in data.responses:
        resp_figures = _figure_keys(response)
        resp_stems = set(stems(response))
        fig_recall = (
            sum(_found(f, resp_figures) for f in ref_figures) / len(ref_figures) if ref_figures else 1.0
        )
        word_recall = len(ref_words & resp_stems) / len(ref_words) if ref_words else 1.0
        accuracy = _scale(0.7 * fig_recall + 0.3 * word_recall) if response.strip() else 1
        length_ratio = count_words(response) / ref_length
        length_ok = 0.5 <= length_ratio <= 2.0
        usefulness = _scale(word_recall) - (0 if length_ok else 1) if response.strip() else 1
        promo = len(_PROMO_RE.findall(response))
        tone = max(1, 5 - 2 * promo - min(response.count("!"), 2))
        sections = section_order(response)
        section_share = (
            sum(1 for s in ref_sections if s in sections) / len(ref_sections) if ref_sections else 1.0
        )
        has_bullets = bool(re.search(r"^\s*[-*+]\s+", response, flags=re.MULTILINE))
        has_cites = bool(re.search(r"\[\d+\]", response))
        fmt = (
            _scale(section_share)
            - (0 if has_bullets or not ref_sections else 1)
            - (1 if ref_cites and not has_cites else 0)
        )
        justification = (
            f"Chiffres de la référence retrouvés : {sum(_found(f, resp_figures) for f in ref_figures)}/{len(ref_figures)} ; "
            f"vocabulaire clé couvert à {round(100 * word_recall)} % ; longueur {round(100 * length_ratio)} % "
            f"de la référence ; sections attendues présentes : {round(100 * section_share)} % ; "
            f"{'citations présentes' if has_cites else 'aucune citation'}."
        )
        scores.append(
            JudgeScore(
                accuracy=max(1, min(5, accuracy)),
                usefulness=max(1, min(5, usefulness)),
                tone=max(1, min(5, tone)),
                format=max(1, min(5, fmt)),
                justification=justification,
            )
        )
    return make_verdict(scores)
