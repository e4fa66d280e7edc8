"""Offline writer: the dossier's structure from numbered findings.

- synthesis: three or four short sentences (scope and mandatory mentions, the most concrete
  finding, how contradictions were settled, which option the comparable figures favour);
- one section per axis: its findings, each with its source numbers; promotional or superlative
  statements left out, long sentences cut at a comma or conjunction; a finding superseded by a
  contradiction of its axis is left out of the key points (:mod:`.ledger`), the ledger states it;
- the ledger: one entry per analyst note, retained and rejected sources, the date/authority reason;
- uncertainties: open questions, then every missing axis, named in full;
- the recommendation, extractive and saying so (:mod:`.compare`).

Over the word budget (measured on the rendered text, as the arbiter measures it), the least
concrete key points go first (every axis keeps its most concrete one). Only numbers present in
``sources`` are ever written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry, render_body
from veille.offline import lexicon
from veille.offline.compare import recommendation
from veille.offline.figures import date_key, extract_dates, extract_figures, figure_unit, is_year
from veille.offline.ledger import Statement, ledger, rejected_units, superseded
from veille.offline.markdown import cited, count_words, sentence_words
from veille.offline.sentences import fit_clauses, split_plain
from veille.offline.text import SUPERLATIVE_RE, language, quote_if_foreign
from veille.roles.writer import WriterInput

__all__ = ["quote_foreign", "scope_sentence", "write"]

_CITE_RE = re.compile(r"\s*\[(\d+)\]")
_SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+")
MISSING_AXIS = "Axe non couvert (analyse en échec) : "  # the form the report code looks for


@dataclass
class _Point:
    text: str  # without citation markers, cut to the sentence limit
    numbers: list[int]
    axis: str
    rank: int  # order within its axis
    value: float  # how concrete: figures, options compared
    pinned: bool = False  # the most concrete point of each axis is kept

    def statement(self) -> Statement:
        return Statement(self.axis, self.text, tuple(self.numbers))


def _clean(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """Text without citation markers, and the valid numbers it cited (in order)."""
    numbers = [int(n) for n in _CITE_RE.findall(text) if int(n) in valid]
    stripped = _CITE_RE.sub("", text)
    stripped = re.sub(r"\s+([.,])", r"\1", stripped).strip()  # French keeps the space before : ; ! ?
    return stripped, list(dict.fromkeys(numbers))


def _fit(text: str, limit: int) -> str:
    """Every sentence of ``text`` within ``limit`` words, cut between clauses only, each ending
    with a period; "" when a sentence cannot be cut so (a piece of a sentence is never quoted)."""
    parts: list[str] = []
    for sentence in split_plain(text.strip()):
        fitted = fit_clauses(sentence, limit)
        if fitted is None:
            return ""
        parts += fitted
    return " ".join(p if p.endswith((".", "!", "?", "…")) else p + "." for p in parts)


def quote_foreign(text: str, request_lang: str) -> str:
    """Each sentence of ``text`` in another language than the request's shown as a quote in its
    language, « … » (en), never as a sentence of the report (:func:`quote_if_foreign`); a leading
    « Subject — » stays outside the quote; "" when a sentence's language cannot be named. Under an English request nothing is quoted: the report's
    own sentences are French whatever the request."""
    if request_lang != "fr":
        return text
    out = []
    for sentence in split_plain(text.strip()):
        head, sep, rest = sentence.partition(" — ")
        if not sep or len(head.split()) > 4:
            head, sep, rest = "", "", sentence
        quoted = quote_if_foreign(rest.rstrip(" ."), request_lang) if "«" not in rest else rest
        if not quoted:
            return ""  # its language cannot be named: left out rather than shown as the report's
        out.append(f"{head}{sep}{quoted}." if quoted.startswith("«") else f"{head}{sep}{rest}")
    return " ".join(out)


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " et " + items[-1]


def _value(text: str, mentions: Sequence[str], written: str = "") -> float:
    """Measured figures, options compared. A date counts when it is after ``written`` (the source's
    date: a commitment, "maintenue jusqu'en 2029"), not before it (history); a bare year never."""
    named = sum(1 for m in mentions if m and m.casefold() in text.casefold())
    dates = set(extract_dates(text))
    measured = [
        f
        for f in extract_figures(text)
        if figure_unit(f) and not is_year(f) and (f not in dates or date_key(f) > written[:7])
    ]
    return min(len(measured), 3) + (1.5 if named >= 2 else 0.0)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n <= 1 else f"{n} {noun}s"


def _points(data: WriterInput, axes: Sequence[str], valid: set[int]) -> list[_Point]:
    """One point per distinct statement (two branches' twins merged), in axis order."""
    points: list[_Point] = []
    lang = language(f"{data.request_title} {data.request}") or "fr"
    dates = {s.number: s.date for s in data.sources}
    seen: dict[str, _Point] = {}
    ranks: dict[str, int] = {}
    for finding in sorted(
        (f for f in data.findings if f.subtask_id in axes), key=lambda f: axes.index(f.subtask_id)
    ):
        text, inline = _clean(finding.statement, valid)
        numbers = list(dict.fromkeys([*inline, *(n for n in finding.sources if n in valid)]))
        if (
            not numbers
            or not text
            or lexicon.pattern("promotional").search(text)
            or SUPERLATIVE_RE.search(text)
        ):
            continue  # a fact without a valid source, promotional or superlative, is not written
        key = text.casefold()
        if key in seen:
            twin = seen[key]
            twin.numbers = list(dict.fromkeys([*twin.numbers, *numbers]))
            continue
        rank = ranks.get(finding.subtask_id, 0)
        ranks[finding.subtask_id] = rank + 1
        written = min((dates[n] for n in numbers if n in dates), default="")
        value = _value(text, _options(data), written)
        fitted = _fit(text, data.max_sentence_words)
        if not fitted:
            continue  # too long to cut between clauses: left out rather than cut
        shown = quote_foreign(fitted, lang)
        if not shown:
            continue
        point = _Point(shown, numbers, finding.subtask_id, rank, value)
        seen[key] = point
        points.append(point)
    return points


def scope_sentence(data: WriterInput, cited: int) -> str:
    """The synthesis's first sentence; ``cited``: the sources the dossier cites (its bibliography)."""
    mentions = _options(data)
    scope = (
        f"en {_count(len(data.axes) or len(data.questions), 'volet')}, à partir de {_count(cited, 'source')}"
    )
    first = f"Ce dossier compare {_join(mentions)} {scope}."
    if not mentions or sentence_words(first) > data.max_sentence_words:
        first = f"Ce dossier traite la demande {scope}."
    return first


def _synthesis(
    data: WriterInput, points: Sequence[_Point], entries: Sequence[LedgerEntry], leads: dict[str, int]
) -> list[CitedText]:
    limit = data.max_sentence_words
    numbers = {n for p in points for n in p.numbers} | {
        n for e in entries for n in (*e.retained, *e.rejected)
    }
    out = [CitedText(text=scope_sentence(data, len(numbers)))]
    candidates = sorted(
        (
            p
            for p in points
            if p.value > 0 and sentence_words(p.text) <= limit - 3 and len(_SENTENCE_RE.split(p.text)) == 1
        ),
        key=lambda p: (-p.value, sentence_words(p.text), p.axis, p.rank),
    )
    if candidates:  # introduced, so the synthesis does not repeat the key point word for word
        best = candidates[0]
        out.append(CitedText(text=f"À retenir : {best.text}", citations=list(best.numbers)))
    else:
        out.append(
            CitedText(text="Les points clés ci-dessous reprennent les faits vérifiables des documents.")
        )
    if entries:
        n = len(entries)
        what = (
            "Une divergence entre sources est tranchée"
            if n == 1
            else f"{n} divergences entre sources sont tranchées"
        )
        out.append(CitedText(text=f"{what} selon la date et la fiabilité des sources."))
    elif data.open_questions or data.missing_axes:
        out.append(CitedText(text="Les points encore ouverts sont listés dans une section dédiée."))
    else:
        out.append(CitedText(text="Aucune divergence entre sources n'a été relevée."))
    if leads:
        option, n = max(leads.items(), key=lambda kv: (kv[1], -list(leads).index(kv[0])))
        total = sum(leads.values())
        sentence = f"Sur les chiffres comparables, {option} ressort sur {n} comparaison(s) sur {total}."
        if sentence_words(sentence) <= limit:
            out.append(CitedText(text=sentence))
    return out


def _uncertain(data: WriterInput, valid: set[int]) -> list[CitedText]:
    lang = language(f"{data.request_title} {data.request}") or "fr"
    out = []
    for question in data.open_questions:
        text, numbers = _clean(question, valid)
        fitted = quote_foreign(_fit(text, data.max_sentence_words), lang) if text else ""
        if fitted:
            out.append(CitedText(text=fitted, citations=numbers))
    out += [CitedText(text=f"{MISSING_AXIS}{axis}") for axis in data.missing_axes]
    return out or [CitedText(text="Les documents fournis ne laissent pas de question ouverte identifiée.")]


def _fallback(data: WriterInput, axes: Sequence[str]) -> list[_Point]:
    """No finding survived: the sources themselves (cited), so the key points stay sourced."""
    out = []
    for source in sorted(data.sources, key=lambda x: x.number):
        kind = source.source_type.replace("-", " ")
        text = f"Document consulté : « {source.title} » ({kind}, {source.date})."
        text = _fit(text, data.max_sentence_words) or text  # our own sentence: whole rather than none
        out.append(_Point(text, [source.number], axes[0], source.number, 0.0, pinned=True))
    return out if axes else []


def _options(data: WriterInput) -> list[str]:
    """What the request compares: its terms, else its mandatory mentions (older inputs)."""
    return [o for o in data.options if o.strip()] or [m for m in data.mandatory_mentions if m.strip()]


def write(data: WriterInput) -> Dossier:
    valid = {s.number for s in data.sources}
    titles = data.axes or {sid: sid for sid in data.questions}
    axes = list(titles)
    options = _options(data)
    points = _points(data, axes, valid)
    entries = ledger(
        data.contradictions, data.sources, [p.statement() for p in points], options, data.max_sentence_words
    )
    gone = superseded([p.statement() for p in points], data.contradictions, entries, options)
    points = [p for i, p in enumerate(points) if i not in gone] or _fallback(data, axes)
    for axis in axes:  # each axis keeps its most concrete point
        own = [p for p in points if p.axis == axis]
        if own:
            max(own, key=lambda p: (p.value, -p.rank)).pinned = True
    retained = {n for e in entries for n in e.retained}
    for p in points:  # a point of a retained source states what a contradiction settled
        p.value += 1.0 if set(p.numbers) & retained else 0.0
    advice, leads = recommendation([p.statement() for p in points], options, titles, rejected_units(entries))
    synthesis = _synthesis(data, points, entries, leads)
    uncertain = _uncertain(data, valid)

    def dossier_for(kept: Sequence[_Point]) -> Dossier:
        sections = [
            AxisSection(
                axis=axis, points=[KeyPoint(text=p.text, citations=p.numbers) for p in kept if p.axis == axis]
            )
            for axis in axes
        ]
        return Dossier(synthesis=synthesis, sections=sections, contradictions=entries,
                       uncertainties=uncertain, recommendation=advice)  # fmt: skip

    kept = list(points)
    dossier = dossier_for(kept)
    # Over the word budget: the axis with the most points loses its least concrete one.
    while count_words(render_body(dossier, titles)) > data.max_words:
        droppable = [p for p in kept if not p.pinned]
        if not droppable:
            break
        sizes = {p.axis: sum(1 for k in kept if k.axis == p.axis) for p in droppable}
        kept.remove(min(droppable, key=lambda p: (-sizes[p.axis], p.value, -p.rank, p.axis)))
        dossier = dossier_for(kept)
    # Still too long (few, very long findings): open questions go from the end, missing axes stay.
    while (
        count_words(render_body(dossier, titles)) > data.max_words
        and len(uncertain) > len(data.missing_axes) + 1
    ):
        uncertain.pop(len(uncertain) - len(data.missing_axes) - 1)
        dossier = dossier_for(kept)
    # The scope sentence counts the sources this dossier cites: the bibliography lists those only.
    synthesis[0] = CitedText(text=scope_sentence(data, len(set(cited(render_body(dossier, titles))))))
    return dossier_for(kept)
