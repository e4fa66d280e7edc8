"""Offline writer: the dossier's structure (synthesis, a section per axis, ledger, uncertainties,
recommendation) from numbered findings; the rules: docs/offline-engine.md. Only numbers present in
``sources`` are ever written."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry, render_body
from veille.offline import lexicon
from veille.offline.compare import recommendation
from veille.offline.figures import date_key, extract_dates, extract_figures, figure_unit, is_year
from veille.offline.ledger import Statement, ledger, rejected_units, superseded
from veille.offline.markdown import cited, count_words, sentence_words
from veille.offline.sentences import fit_clauses, split_plain
from veille.offline.text import SUPERLATIVE_RE, language, quote_if_foreign
from veille.offline.writer_update import carried_ledger, touched_sources, updated_synthesis
from veille.roles.writer import SourceRef, WriterInput

__all__ = [
    "SENTENCE_RE",
    "consulted",
    "periods",
    "quote_foreign",
    "scope_sentence",
    "source_sentence",
    "write",
]

_CITE_RE = re.compile(r"\s*\[(\d+)\]")
SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+")
MISSING_AXIS = "Axe non couvert (analyse en échec) : "  # the form the report code looks for
_PROMO_RE = lexicon.pattern("promotional")  # the grid's one list, the critic's and the judge's too
_MONTH = len("YYYY-MM")  # an ISO date's month, as figures.date_key gives it
_OPEN_FRAME = "Les documents laissent ouverte cette question"


def _w(key: str) -> float:
    return lexicon.weight(f"write_writer.{key}")


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
    # French keeps the space before : ; ! ?
    return re.sub(r"\s+([.,])", r"\1", _CITE_RE.sub("", text)).strip(), list(dict.fromkeys(numbers))


def periods(parts: Iterable[str]) -> str:
    """The parts as one paragraph, each ending with its own mark or a period."""
    return " ".join(p if p.endswith((".", "!", "?", "…")) else p + "." for p in parts)


def source_sentence(source: SourceRef) -> str:
    """A source read that yields no fact of the dossier: listed as read (an uncertainty), never
    shown as a key point (issue 36: a placeholder is no fact)."""
    kind = source.source_type.replace("-", " ")
    return f"Document consulté sans constat retenu : « {source.title} » ({kind}, {source.date or 'date inconnue'})."


def consulted(sources: Iterable[SourceRef], limit: int) -> list[CitedText]:
    """One line per source ``sources`` the dossier read without a fact from it, cited."""
    out = []
    for source in sorted(sources, key=lambda x: x.number):
        text = source_sentence(source)
        out.append(CitedText(text=_fit(text, limit) or text, citations=[source.number]))  # ours: whole
    return out


def _fit(text: str, limit: int) -> str:
    """Every sentence of ``text`` within ``limit`` words, cut between clauses only; "" when a
    sentence cannot be cut so (a piece of a sentence is never quoted)."""
    fitted = [fit_clauses(sentence, limit) for sentence in split_plain(text.strip())]
    return "" if None in fitted else periods(p for parts in fitted for p in parts or ())


def quote_foreign(text: str, request_lang: str) -> str:
    """Under a French request, each sentence of ``text`` in another language shown as a quote in its
    language, « … » (en) (:func:`quote_if_foreign`), a leading « Subject — » outside the quote; ""
    when a sentence's language cannot be named. Under an English request nothing is quoted: the
    report's own sentences are French whatever the request."""
    if request_lang != "fr":
        return text
    out = []
    for sentence in split_plain(text.strip()):
        head, sep, rest = sentence.partition(" — ")
        if not sep or len(head.split()) > _w("subject_words"):
            head, sep, rest = "", "", sentence
        quoted = quote_if_foreign(rest.rstrip(" ."), request_lang) if "«" not in rest else rest
        if not quoted:
            return ""  # its language cannot be named: left out rather than shown as the report's
        out.append(f"{head}{sep}{quoted}." if quoted.startswith("«") else f"{head}{sep}{rest}")
    return " ".join(out)


def _frame(source: SourceRef | None, limit: int) -> str:
    """Who says it and when, in the report's words: the document's title and date when they take
    at most half the sentence, else the date alone (the citation names the document)."""
    when = f"du {source.date}" if source is not None and source.date else "non daté"
    if source is not None and source.title.strip():
        named = f"Le document « {' '.join(source.title.split())} », {when}, indique"
        if sentence_words(named) <= limit // 2:
            return named
    return f"Un document {when} indique"


def framed_quote(text: str, frame: str, request_lang: str, limit: int) -> str:
    """A finding in another language than a French request's, as one sentence of the report that
    says who says it and when around the document's words quoted whole, « … » (en) (issue 36: a
    foreign passage appears only inside a sentence in the request's language); a leading
    « Subject — » stays outside. "" when it cannot be fitted or its language cannot be named."""
    head, sep, rest = text.partition(" — ")
    if not sep or len(head.split()) > _w("subject_words"):
        head, sep, rest = "", "", text
    lead = f"{head}{sep}{frame[:1].lower() + frame[1:]}" if sep else frame
    body = _fit(rest, limit - sentence_words(lead) - 1)  # the frame's words are the first sentence's
    quoted = quote_if_foreign(body.rstrip(" ."), request_lang) if body else ""
    return f"{lead} : {quoted}." if quoted.startswith("«") else ""


def _named_axis(entry: LedgerEntry, titles: dict[str, str]) -> LedgerEntry:
    """The ledger's subject without « axe st-2 » (the heading when it says nothing else): an
    internal id is never report text."""
    subject = entry.subject
    for sid, title in titles.items():
        subject = re.sub(rf",\s*axe {re.escape(sid)}$", "", subject)  # the options name it already
        subject = title if subject.casefold() == f"axe {sid}".casefold() else subject
    return entry.model_copy(update={"subject": subject})


def _join(items: Sequence[str]) -> str:
    return f"{', '.join(items[:-1])} et {items[-1]}" if len(items) > 1 else "".join(items)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n <= 1 else f"{n} {noun}s"


def _options(data: WriterInput) -> list[str]:
    """What the request compares: its terms, else its mandatory mentions (older inputs)."""
    return [o for o in data.options if o.strip()] or [m for m in data.mandatory_mentions if m.strip()]


def _value(text: str, mentions: Sequence[str], written: str = "") -> float:
    """Measured figures, options compared. A date counts when it is after ``written`` (the source's
    date: a commitment, "maintenue jusqu'en 2029"), not before it (history); a bare year never."""
    named = sum(1 for m in mentions if m and m.casefold() in text.casefold())
    dates = set(extract_dates(text))
    measured = [
        f
        for f in extract_figures(text)
        if figure_unit(f) and not is_year(f) and (f not in dates or date_key(f) > written[:_MONTH])
    ]
    figures = min(len(measured), lexicon.weight("write_points.figures_cap"))
    return figures + (lexicon.weight("write_points.options_bonus") if named >= 2 else 0.0)


def _points(data: WriterInput, axes: Sequence[str], valid: set[int], lang: str) -> list[_Point]:
    """One point per distinct statement (two branches' twins merged), in axis order."""
    points: list[_Point] = []
    options = _options(data)
    dates = {s.number: s.date for s in data.sources}
    by_number = {s.number: s for s in data.sources}
    seen: dict[str, _Point] = {}
    ranks: dict[str, int] = {}
    for finding in sorted(
        (f for f in data.findings if f.subtask_id in axes), key=lambda f: axes.index(f.subtask_id)
    ):
        text, inline = _clean(finding.statement, valid)
        numbers = list(dict.fromkeys([*inline, *(n for n in finding.sources if n in valid)]))
        if not numbers or not text or _PROMO_RE.search(text) or SUPERLATIVE_RE.search(text):
            continue  # a fact without a valid source, promotional or superlative, is not written
        if (key := text.casefold()) in seen:
            seen[key].numbers = list(dict.fromkeys([*seen[key].numbers, *numbers]))
            continue
        rank = ranks.get(finding.subtask_id, 0)
        ranks[finding.subtask_id] = rank + 1
        written = min((dates[n] for n in numbers if n in dates), default="")
        # too long to cut between clauses, or in a language that cannot be named: left out
        shown = quote_foreign(_fit(text, data.max_sentence_words), lang)
        if "» (" in shown:  # a document's words in another language: framed by who and when
            frame = _frame(by_number.get(numbers[0]), data.max_sentence_words)
            shown = framed_quote(text, frame, lang, data.max_sentence_words)
        if shown:
            seen[key] = _Point(shown, numbers, finding.subtask_id, rank, _value(text, options, written))
            points.append(seen[key])
    return points


def scope_sentence(data: WriterInput, cited: int) -> str:
    """The synthesis's first sentence; ``cited``: the sources the dossier cites (its bibliography)."""
    mentions = _options(data)
    volets = _count(len(data.axes) + len(data.kept_axes) or len(data.questions), "volet")  # kept ones too
    scope = f"en {volets}, à partir de {_count(cited, 'source')}"
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
    room = limit - _w("synthesis_margin")  # for « À retenir : »
    best = min(
        (
            p
            for p in points
            if p.value > 0 and sentence_words(p.text) <= room and not SENTENCE_RE.search(p.text)
        ),
        key=lambda p: (-p.value, sentence_words(p.text), p.axis, p.rank),
        default=None,
    )
    if best:  # introduced, so the synthesis does not repeat the key point word for word
        out.append(CitedText(text=f"À retenir : {best.text}", citations=list(best.numbers)))
    else:
        out.append(
            CitedText(text="Les points clés ci-dessous reprennent les faits vérifiables des documents.")
        )
    if len(entries) == 1:
        settled = "Une divergence entre sources est tranchée selon la date et la fiabilité des sources."
    elif entries:
        settled = f"{len(entries)} divergences entre sources sont tranchées selon la date et la fiabilité des sources."
    elif data.open_questions or data.missing_axes:
        settled = "Les points encore ouverts sont listés dans une section dédiée."
    else:
        settled = "Aucune divergence entre sources n'a été relevée."
    out.append(CitedText(text=settled))
    if leads:
        option, n = max(leads.items(), key=lambda kv: (kv[1], -list(leads).index(kv[0])))
        sentence = f"Sur les chiffres comparables, {option} ressort sur {n} comparaison(s) sur {sum(leads.values())}."
        if sentence_words(sentence) <= limit:
            out.append(CitedText(text=sentence))
    return out


def _uncertain(data: WriterInput, valid: set[int], lang: str) -> list[CitedText]:
    out = []
    for question in data.open_questions:
        text, numbers = _clean(question, valid)
        fitted = quote_foreign(_fit(text, data.max_sentence_words), lang) if text else ""
        if "» (" in fitted:  # an open question in another language: framed in the report's words
            fitted = framed_quote(text, _OPEN_FRAME, lang, data.max_sentence_words)
        if fitted:
            out.append(CitedText(text=fitted, citations=numbers))
    out += [CitedText(text=f"{MISSING_AXIS}{axis}") for axis in data.missing_axes]
    return out or [CitedText(text="Les documents fournis ne laissent pas de question ouverte identifiée.")]


def _pin_items(points: Sequence[_Point], options: Sequence[str]) -> None:
    """Pin the most concrete point of each source and of each option it names: trimming to the word
    budget never drops an item's only entry."""
    items: list[Sequence[_Point]] = [
        [p for p in points if n in p.numbers] for n in {n for p in points for n in p.numbers}
    ]
    items += [[p for p in points if o.casefold() in p.text.casefold()] for o in options]
    for own in items:
        if own:
            max(own, key=lambda p: (p.value, -p.rank)).pinned = True


def write(data: WriterInput) -> Dossier:
    valid = {s.number for s in data.sources}
    titles = data.axes or {sid: sid for sid in data.questions}
    axes = list(titles)
    options = _options(data)
    lang = language(f"{data.request_title} {data.request}") or "fr"
    points = _points(data, axes, valid, lang)
    statements = [p.statement() for p in points]
    entries = ledger(data.contradictions, data.sources, statements, options, data.max_sentence_words)
    entries = [_named_axis(e, titles) for e in entries]
    # An incremental night (veille.offline.writer_update): the changed axes only, and the previous
    # conclusions to update; None on a full night.
    update = data.previous if data.kept_axes else None
    touched = touched_sources(data) if update is not None else set()
    if update is not None:
        entries = carried_ledger(entries, update, touched)
    gone = superseded(statements, data.contradictions, entries, options)
    points = [p for i, p in enumerate(points) if i not in gone]
    for axis in axes:  # each axis keeps its most concrete point
        if own := [p for p in points if p.axis == axis]:
            max(own, key=lambda p: (p.value, -p.rank)).pinned = True
    if data.kind == "inventory":  # one entry per item found: each source, each option keeps its best
        _pin_items(points, options)
    retained = {n for e in entries for n in e.retained}
    for p in points:  # a point of a retained source states what a contradiction settled
        p.value += lexicon.weight("write_points.retained_bonus") if set(p.numbers) & retained else 0.0
    advice, leads = recommendation([p.statement() for p in points], options, titles, rejected_units(entries))
    asked = advice if data.kind == "choice" else None  # only a choice asked gets a recommendation
    if asked is not None and update is not None and update.recommendation:  # it weighs the kept axes too
        asked = [c.model_copy(deep=True) for c in update.recommendation]
    dated = {s.number: s.date for s in data.sources}
    synthesis = _synthesis(data, points, entries, leads)
    if update is not None:
        synthesis = updated_synthesis(synthesis, update, touched, lambda text: _value(text, options))
    uncertain = _uncertain(data, valid, lang)
    if (
        not points and update is None
    ):  # no finding survived: the sources are listed as read, never as key points
        uncertain += consulted(data.sources, data.max_sentence_words)

    def dossier_for(kept: Sequence[_Point]) -> Dossier:
        if data.kind == "evolution":  # what changed when: each axis in its sources' date order
            kept = sorted(kept, key=lambda p: min((dated.get(n, "") for n in p.numbers), default=""))
        sections = [
            AxisSection(
                axis=axis, points=[KeyPoint(text=p.text, citations=p.numbers) for p in kept if p.axis == axis]
            )
            for axis in axes
        ]
        return Dossier(synthesis=synthesis, sections=sections, contradictions=entries,
                       uncertainties=uncertain, recommendation=asked)  # fmt: skip

    def too_long() -> bool:  # measured on the rendered text, as the arbiter measures it
        # the kept sections' words count too (an incremental night: veille.offline.writer_update)
        return count_words(render_body(dossier_for(kept), titles)) + data.kept_words > data.max_words

    kept = list(points)
    # Over the word budget: the axis with the most points loses its least concrete one.
    while too_long() and (droppable := [p for p in kept if not p.pinned]):
        sizes = {p.axis: sum(1 for k in kept if k.axis == p.axis) for p in droppable}
        kept.remove(min(droppable, key=lambda p: (-sizes[p.axis], p.value, -p.rank, p.axis)))
    # Still too long (few, very long findings): open questions go from the end, missing axes stay.
    while too_long() and len(uncertain) > len(data.missing_axes) + 1:
        uncertain.pop(len(uncertain) - len(data.missing_axes) - 1)
    # The scope sentence counts the sources this dossier cites: the bibliography lists those only.
    listed = set(cited(render_body(dossier_for(kept), titles)))
    if update is not None:  # and the sources only the kept axes cite
        listed |= valid - touched
    synthesis[0] = CitedText(text=scope_sentence(data, len(listed)))
    return dossier_for(kept)
