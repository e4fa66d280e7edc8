"""The verifier of figures (issue 36, items 1 and 2): what the dossier says is what its sources say.

Run by code on every structure a writer or reviser returns, whatever the backend (offline engine,
Gemini, scripted), after :func:`veille.steps.write.sanitize_dossier`'s form checks:

- every figure (value and unit, :func:`veille.numbers.read_numbers`) of a key point, ledger entry,
  synthesis sentence, uncertainty or recommendation item occurs in one of the documents the item
  cites, at a place giving it to the subjects the item gives it to (veille.steps.verify_passages):
  else the item is dropped whole — ``report.unsupported_figure`` (in no cited document) or
  ``report.misattributed`` (there, but another subject's); a figure the request itself states (« 12
  GPU », « 3 ans ») is the request's, not a source's, and is not looked up;
- a ledger entry opposes two values of one measure (same unit) given to the same subjects, one found
  in a retained document, the other in a rejected one — else ``ledger.not_a_contradiction``;
- a recommendation item comparing options on figures compares one measure and names every option a
  cited document gives a value of that measure — else ``recommendation.incomplete_row``.

Nothing is rewritten: an item stands as written or goes. Each kept key point and ledger entry gets
its :class:`~veille.dossier.Evidence`, the passage code located (for a point without a figure, the
cited sentence sharing the most words with it, when it shares enough).

An item citing a web page (``--web``: no text here) is left to the grounding step's own checks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

from veille.alerts import Alert, grouped_alert
from veille.dossier import AxisSection, CitedText, Dossier, Evidence, KeyPoint, LedgerEntry
from veille.numbers import Reading
from veille.numberunits import fold
from veille.roles.writer import SourceRef
from veille.steps.verify_passages import (
    DocumentIndex,
    Located,
    SourceText,
    figures,
    option_mentions,
    same_figure,
    settings_value,
    subjects_at,
)
from veille.store.readers import fetch_documents

__all__ = ["SourceText", "VerifyContext", "read_context", "verify_dossier"]


class VerifyContext(BaseModel):
    """What the verifier reads: the cited documents' texts by source number, the options the
    request compares (its terms) and the request's text (its own figures)."""

    documents: dict[int, SourceText] = Field(default_factory=dict)
    options: list[str] = Field(default_factory=list)
    request: str = ""
    # Where the verifier's results are kept across nights (veille.steps.verify_memo), None: not
    # kept. Not data: excluded from dumps, so no cache key or output holds it.
    memo: Path | None = Field(default=None, exclude=True)


def read_context(
    db_path: Path,
    sources: Sequence[SourceRef],
    options: Sequence[str],
    request: str,
    memo: Path | None = None,
) -> VerifyContext:
    """The texts of the numbered corpus sources (web pages have none here), read from the store;
    ``memo``: where the verifier keeps its results (veille.steps.verify_memo)."""
    corpus = [s for s in sources if s.kind == "corpus"]
    texts = {d.id: d for d in fetch_documents(db_path, [s.id for s in corpus])}
    documents = {
        s.number: SourceText(number=s.number, id=s.id, title=s.title, date=s.date, text=texts[s.id].body)
        for s in corpus
        if s.id in texts
    }
    return VerifyContext(documents=documents, options=list(options), request=request, memo=memo)


@dataclass
class _Dropped:
    unsupported: list[str] = field(default_factory=list)
    misattributed: list[str] = field(default_factory=list)
    not_contradiction: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    def alerts(self, stage: str) -> list[Alert]:
        out = []
        for code, items, head in (
            ("report.unsupported_figure", self.unsupported,
             "élément(s) retiré(s) : un chiffre ne figure dans aucune des sources citées"),
            ("report.misattributed", self.misattributed,
             "élément(s) retiré(s) : un chiffre est, dans la source citée, celui d'un autre sujet"),
            ("ledger.not_a_contradiction", self.not_contradiction,
             "contradiction(s) retirée(s) : pas deux valeurs d'une même mesure sur un même sujet, "
             "chacune trouvée dans sa source"),
            ("recommendation.incomplete_row", self.incomplete,
             "recommandation(s) retirée(s) : comparaison de plusieurs mesures ou omettant une option "
             "chiffrée par les sources citées"),
        ):  # fmt: skip
            if items:
                out.append(grouped_alert(code, stage=stage, head=head, subjects=items))
        return out


def _label(text: str, figure: str = "") -> str:
    short = " ".join(text.split())
    short = short if len(short) <= 70 else short[:69].rstrip() + "…"
    return f"« {short} »" + (f" ({figure})" if figure else "")


@lru_cache(maxsize=256)
def _index(
    number: int, doc_id: str, title: str, date: str, text: str, options: tuple[str, ...]
) -> DocumentIndex:
    """A document read once for the write step and every review round (the same texts each time)."""
    return DocumentIndex(SourceText(number=number, id=doc_id, title=title, date=date, text=text), options)


@lru_cache(maxsize=256)
def _counted(text: str) -> frozenset[str]:
    """The nouns ``text`` counts (« 12 GPU » -> ``gpu``)."""
    return frozenset(r.unit.name for r in figures(text) if r.unit is not None and r.unit.kind == "count")


def _subjects(context: VerifyContext) -> list[str]:
    """The request's options that are subjects: a term the documents count (« 12 GPU », « 4 200 EUR
    par GPU ») is what a figure measures, not what it is given to."""
    texts = [context.request, *(d.text for d in context.documents.values())]
    counted = {name for t in texts for name in _counted(t)}
    return [o for o in context.options if fold(o.strip()) not in counted]


class _Verifier:
    def __init__(self, context: VerifyContext) -> None:
        self.options = _subjects(context)
        self.indexes = {
            n: _index(n, d.id, d.title, d.date, d.text, tuple(self.options))
            for n, d in context.documents.items()
        }
        self.request_figures = figures(context.request)
        self.dropped = _Dropped()

    def claims(self, text: str) -> list[tuple[str, frozenset[str], Reading]]:
        """(figure as written, subjects the text gives it, reading) of each figure to look up."""
        index = DocumentIndex(SourceText(number=0, id="", title="", date="", text=text), self.options)
        mentions = option_mentions(text, self.options)
        out = []
        previous: Reading | None = None
        for located in index.figures:
            reading = located.reading
            if any(same_figure(reading, r) for r in self.request_figures) or _own_count(reading):
                previous = reading
                continue
            if (
                previous is not None
                and _own_count(previous)
                and _RATIO_RE.match(text[previous.end : reading.start])
            ):
                continue  # « 2 comparaisons sur 3 »: the total of the same own count
            subjects = (
                subjects_at(text, mentions, [(0, len(text))]) if not located.subjects else located.subjects
            )
            out.append((reading.text, subjects, reading))
            previous = reading
        return out

    def checkable(self, numbers: Sequence[int]) -> bool:
        """Whether every cited source has a text here (a web page has none: not checked)."""
        return all(n in self.indexes for n in numbers)

    def support(self, text: str, numbers: Sequence[int]) -> list[list[Located]] | None:
        """Where each figure of ``text`` stands in the cited documents (one list per figure), or None
        (the item is dropped, the reason recorded)."""
        found: list[list[Located]] = []
        for written, subjects, reading in self.claims(text):
            given: list[Located] = []
            anywhere: list[Located] = []
            for n in numbers:
                ok, seen = self.indexes[n].find(reading, subjects)
                given += ok
                anywhere += seen
            if not given:
                target = self.dropped.misattributed if anywhere else self.dropped.unsupported
                target.append(_label(text, written))
                return None
            found.append(given)
        return found

    def evidence(self, located: Sequence[Located], text: str, numbers: Sequence[int]) -> list[Evidence]:
        """The passages of ``located`` (one per figure), else the closest cited sentence."""
        out = [self._evidence(place.source, place.passage) for place in located]
        if not located:
            best = self._closest(text, numbers)
            if best is not None:
                out.append(self._evidence(*best))
        unique: dict[tuple[str, int], Evidence] = {}
        for e in out:
            unique.setdefault((e.doc_id, e.start), e)
        return list(unique.values())

    def _evidence(self, number: int, span: tuple[int, int]) -> Evidence:
        index = self.indexes[number]
        source = index.source
        return Evidence(doc_id=source.id, title=source.title, date=source.date, passage=index.text(span),
                        start=span[0], end=span[1])  # fmt: skip

    def _closest(self, text: str, numbers: Sequence[int]) -> tuple[int, tuple[int, int]] | None:
        """The cited sentence sharing the most content words with ``text``, if enough."""
        mine = _content(text)
        best: tuple[int, int, tuple[int, int]] | None = None
        for n in numbers:
            index = self.indexes[n]
            for span in index.sentences:
                shared = len(mine & _content(index.source.text[span[0] : span[1]]))
                if best is None or shared > best[0]:
                    best = (shared, n, span)
        if best is None or best[0] < int(settings_value("evidence", "min_shared_words")):
            return None
        return best[1], best[2]


def _own_count(reading: Reading) -> bool:
    """« 6 volets », « 25 sources »: a count of the dossier's own parts (verify.toml, own_counts)."""
    unit = reading.unit
    own = {str(w) for w in settings_value("figures", "own_counts")}
    return unit is not None and unit.kind == "count" and not reading.decimal and unit.name in own


_RATIO_RE = re.compile(r"^(?:\(s\)|s)?\s*(?:sur|of|/)\s*$")
_WORD_RE = re.compile(r"[^\W\d_]{5,}")


def _content(text: str) -> set[str]:
    return {fold(w) for w in _WORD_RE.findall(text)}


def _points(verifier: _Verifier, sections: Sequence[AxisSection]) -> list[AxisSection]:
    out = []
    for section in sections:
        kept = []
        for point in section.points:
            if not verifier.checkable(point.citations):
                kept.append(point)
                continue
            located = verifier.support(point.text, point.citations)
            if located is not None:
                evidence = verifier.evidence([places[0] for places in located], point.text, point.citations)
                kept.append(KeyPoint(text=point.text, citations=point.citations, superseded=point.superseded,
                                     evidence=evidence))  # fmt: skip
        out.append(AxisSection(axis=section.axis, points=kept))
    return out


def _cited(verifier: _Verifier, items: Sequence[CitedText]) -> list[CitedText]:
    return [
        i
        for i in items
        if not verifier.checkable(i.citations) or verifier.support(i.text, i.citations) is not None
    ]


def _ledger(verifier: _Verifier, entries: Sequence[LedgerEntry]) -> list[LedgerEntry]:
    out = []
    for entry in entries:
        cited = [*entry.retained, *entry.rejected]
        if not verifier.checkable(cited):
            out.append(entry)
            continue
        text = f"{entry.subject}. {entry.reason}"
        located = verifier.support(text, cited)
        if located is None:
            continue
        if not located:  # no figure: a statement settled by date or reliability, nothing to oppose
            out.append(entry.model_copy(update={"evidence": verifier.evidence([], text, cited)}))
            continue
        pair = _opposed([p for places in located for p in places], set(entry.retained), set(entry.rejected))
        if pair is None:
            verifier.dropped.not_contradiction.append(_label(entry.subject))
            continue
        evidence = verifier.evidence(list(pair), text, cited)
        out.append(entry.model_copy(update={"evidence": evidence}))
    return out


def _opposed(
    located: Sequence[Located], retained: set[int], rejected: set[int]
) -> tuple[Located, Located] | None:
    """A figure from a retained document and another from a rejected one: same unit, same subjects,
    different values (the two sides of one measure)."""
    for a in located:
        for b in located:
            if a.source not in retained or b.source not in rejected:
                continue
            if a.reading.unit != b.reading.unit or a.subjects != b.subjects:
                continue
            if not same_figure(a.reading, b.reading):
                return a, b
    return None


def _recommendation(verifier: _Verifier, items: Sequence[CitedText]) -> list[CitedText]:
    out = []
    for item in items:
        if not verifier.checkable(item.citations):
            out.append(item)
            continue
        located = verifier.support(item.text, item.citations)
        if located is None:
            continue
        first = [places[0] for places in located]
        subjects = {s for p in first for s in p.subjects}
        if len(subjects) >= 2 and not _complete_row(verifier, item, first, subjects):
            verifier.dropped.incomplete.append(_label(item.text))
            continue
        out.append(item)
    return out


def _complete_row(
    verifier: _Verifier, item: CitedText, located: Sequence[Located], subjects: set[str]
) -> bool:
    """One measure (one unit) and every option a cited document gives a value of it."""
    units = {p.reading.unit for p in located}
    if len(units) != 1:
        return False
    unit = next(iter(units))
    named = {o for _, _, o in option_mentions(item.text, verifier.options)}
    for n in item.citations:
        for place in verifier.indexes[n].figures:
            if (
                place.reading.unit == unit
                and len(place.subjects) == 1
                and not place.subjects <= named | subjects
            ):
                return False
    return True


def verify_dossier(
    dossier: Dossier, context: VerifyContext, stage: str = "report"
) -> tuple[Dossier, list[Alert]]:
    """``dossier`` without the items whose figures its cited documents do not support, each kept
    key point and ledger entry with its evidence; one alert per kind of item dropped."""
    verifier = _Verifier(context)
    clean = Dossier(
        synthesis=_cited(verifier, dossier.synthesis),
        sections=_points(verifier, dossier.sections),
        contradictions=_ledger(verifier, dossier.contradictions),
        uncertainties=_cited(verifier, dossier.uncertainties),
        # None: no choice was asked, so no recommendation section (veille.steps.request_read).
        recommendation=(
            None if dossier.recommendation is None else _recommendation(verifier, dossier.recommendation)
        ),
    )
    return clean, verifier.dropped.alerts(stage)
