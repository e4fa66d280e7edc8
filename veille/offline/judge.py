"""Offline judge: scores each response 1–5 on accuracy, usefulness, tone and format by its closeness
to the reference (figures, key words, length, sections), a part of a dossier by what it covers;
the rules: docs/offline-engine.md."""

from __future__ import annotations

import re
from collections import Counter

from veille.offline import lexicon
from veille.offline.critic import TOP, clamp
from veille.offline.figures import extract_figures, figure_unit, figure_value
from veille.offline.markdown import cited
from veille.offline.text import stems
from veille.roles.judge import JudgeInput, JudgeScore, JudgeVerdict, make_verdict
from veille.textstats import count_words, section_order

__all__ = ["judge"]

# The grid's one promotional list (veille/data/lang), the writer's and the critic's too.
_PROMO_RE = lexicon.pattern("promotional")
_BULLET_RE = re.compile(r"^\s*[-*+]\s+", re.MULTILINE)
_GRADES = ("grade_5", "grade_4", "grade_3", "grade_2")  # shares of the reference, best grade first


def _w(key: str) -> float:
    return lexicon.weight(f"write_judge.{key}")


def _figures(text: str) -> set[tuple[float, str]]:
    return {(value, figure_unit(f)) for f in extract_figures(text) if (value := figure_value(f)) is not None}


def _found(figure: tuple[float, str], pool: set[tuple[float, str]]) -> bool:
    value, unit = figure
    margin = _w("figure_tolerance") * max(abs(value), _w("zero_scale"))
    return any(u == unit and abs(v - value) <= margin for v, u in pool)


def _key_words(text: str) -> set[str]:
    counts = Counter(s for s in stems(text) if len(s) > 2)
    return {s for s, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: int(_w("key_words"))]}


def _share(hits: int, total: int) -> float:
    return hits / total if total else 1.0


def _scale(ratio: float) -> int:
    return TOP - sum(ratio < _w(g) for g in _GRADES)


def _percent(ratio: float) -> str:
    return f"{ratio:.0%}".replace("%", " %")


def _part(response: str, reference: str, ref_figures: set[tuple[float, str]]) -> JudgeScore:
    """One part of a dossier (criteria ``dossier_part``, veille.graders.parts: an axis's key points
    or the conclusions), judged on what it covers: the share of its figures and key words that are
    the reference's (precision), never on the reference's share it covers — the other parts hold
    the rest, so recall would score a part low for what it does not contain."""
    figures = _figures(response)
    right = sum(_found(f, ref_figures) for f in figures)
    own = _key_words(response)
    word_share = _share(len(own & set(stems(reference))), len(own))
    accuracy = _scale(_w("figure_part") * _share(right, len(figures)) + _w("word_part") * word_share)
    promo = len(_PROMO_RE.findall(response)) * int(_w("promotional_cost"))
    tone = TOP - promo - min(response.count("!"), int(lexicon.weight("write_scale.exclamation_cap")))
    ref_sections = section_order(reference)
    sections = section_order(response)  # the conclusions hold sections; an axis's block holds none
    section_share = _share(sum(s in ref_sections for s in sections), len(sections))
    has_cites = bool(cited(response))
    fmt = (
        _scale(section_share)
        - (bool(ref_sections) and not _BULLET_RE.search(response))
        - (bool(cited(reference)) and not has_cites)
    )
    justification = (
        f"Partie du dossier : chiffres présents dans la référence : {right}/{len(figures)} ; "
        f"vocabulaire clé commun avec la référence : {_percent(word_share)} ; "
        f"{'citations présentes' if has_cites else 'aucune citation'}."
    )
    empty = not response.strip()
    return JudgeScore(
        accuracy=1 if empty else clamp(accuracy),
        usefulness=1 if empty else clamp(_scale(word_share)),
        tone=clamp(tone),
        format=clamp(fmt),
        justification=justification,
    )


def judge(data: JudgeInput) -> JudgeVerdict:
    ref_figures = _figures(data.reference)
    if data.criteria == "dossier_part":
        return make_verdict([_part(response, data.reference, ref_figures) for response in data.responses])
    ref_words = _key_words(data.reference)
    ref_sections = section_order(data.reference)
    ref_length = max(count_words(data.reference), 1)
    ref_cites = bool(cited(data.reference))
    scores = []
    for response in data.responses:
        resp_figures = _figures(response)
        found = sum(_found(f, resp_figures) for f in ref_figures)
        word_recall = _share(len(ref_words & set(stems(response))), len(ref_words))
        accuracy = _scale(_w("figure_part") * _share(found, len(ref_figures)) + _w("word_part") * word_recall)
        length_ratio = count_words(response) / ref_length
        length_off = not _w("length_min") <= length_ratio <= _w("length_max")
        usefulness = _scale(word_recall) - length_off
        promo = len(_PROMO_RE.findall(response)) * int(_w("promotional_cost"))
        tone = TOP - promo - min(response.count("!"), int(lexicon.weight("write_scale.exclamation_cap")))
        sections = section_order(response)
        section_share = _share(sum(s in sections for s in ref_sections), len(ref_sections))
        has_cites = bool(cited(response))
        fmt = (
            _scale(section_share)
            - (bool(ref_sections) and not _BULLET_RE.search(response))
            - (ref_cites and not has_cites)
        )
        justification = (
            f"Chiffres de la référence retrouvés : {found}/{len(ref_figures)} ; "
            f"vocabulaire clé couvert à {_percent(word_recall)} ; longueur {_percent(length_ratio)} "
            f"de la référence ; sections attendues présentes : {_percent(section_share)} ; "
            f"{'citations présentes' if has_cites else 'aucune citation'}."
        )
        empty = not response.strip()  # an empty response is neither accurate nor useful
        scores.append(
            JudgeScore(
                accuracy=1 if empty else clamp(accuracy),
                usefulness=1 if empty else clamp(usefulness),
                tone=clamp(tone),
                format=clamp(fmt),
                justification=justification,
            )
        )
    return make_verdict(scores)
