"""What the incremental analyst is shown of the previous analysis, and what code keeps of its answer
(issue 40, items 2–3).

Code keeps every previous finding that still stands (:func:`veille.steps.analyse_update.merge_update`),
so the update is not asked to carry them: it is shown only the ones it needs to answer well. Pure
code, the same for every backend:

- :func:`shown_previous`: the previous findings drawn from one document already read (the ones the
  prompt states in full, :func:`veille.roles.analyst_update.read_alone`) are shown when they may be
  about what tonight's text says — a figure of a compatible unit in one of its passages (a new
  value of the same measure: what a contradiction, or a changed figure, is made of), or the content
  words of one of its passages under its document's title (the same subject: what the update must
  not repeat). The others are findings about other things, kept by code whatever the update says.
  Findings of several documents, of the documents read tonight, contradictions and open questions
  are short (ids and figures) and always shown;
- :func:`without_repeats`: the update's findings less those that state a previous finding again
  (same words, case, accents and spacing aside): a finding it was not shown and repeats is already
  in the analysis, so night 2 never holds it twice.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from veille.marks import without_marks
from veille.numbers import Unit, compatible
from veille.numberunits import fold
from veille.roles.analyst import DocumentText, Finding, Findings
from veille.steps.verify_passages import figures, settings_value

__all__ = ["shown_previous", "statement_key", "without_repeats"]

_WORD = re.compile(r"[^\W\d_]{5,}")  # content words, as the verifier's evidence (verify.py)
_PASSAGE_END = re.compile(r"(?<=[.!?…])\s+|\n+")  # sentences and lines, as edited_sections.py


def _words(text: str) -> set[str]:
    return {fold(w) for w in _WORD.findall(text)}


@dataclass(frozen=True)
class _Passage:
    """A passage read tonight, parsed once for every previous finding it is compared with."""

    units: tuple[Unit | None, ...]  # the units of its figures (None: a bare number)
    words: frozenset[str]  # its content words
    title: frozenset[str]  # its document's title's content words


def _passages(documents: Sequence[DocumentText]) -> list[_Passage]:
    out = []
    for d in documents:
        title = frozenset(_words(d.title))
        for passage in _PASSAGE_END.split(d.body):
            if passage.strip():
                out.append(
                    _Passage(tuple(r.unit for r in figures(passage)), frozenset(_words(passage)), title)
                )
    return out


def _about(finding: Finding, passages: Sequence[_Passage]) -> bool:
    """May ``finding`` be about what one of ``passages`` says? One of its figures and one of the
    passage's have compatible units (a bare number is compatible with most), or the passage shares
    content words with it — at least one of its own and ``min_shared_words`` with its document's
    title (or all the finding has, when fewer)."""
    words = _words(finding.statement)
    need = min(int(settings_value("evidence", "min_shared_words")), len(words))
    units = [r.unit for r in figures(" ".join([finding.statement, *finding.figures]))]
    for p in passages:
        if units and any(compatible(u, unit) for unit in p.units for u in units):
            return True
        own = words & p.words
        if own and len(words & (own | p.title)) >= need:
            return True
    return False


def shown_previous(
    previous: Findings, known_ids: Sequence[str], documents: Sequence[DocumentText]
) -> Findings:
    """The previous analysis as the update is shown it: the findings of one document already read
    (``known_ids``) only when :func:`_about` what ``documents`` (the text it reads tonight) say;
    everything else as it is. The findings left out stay in the analysis (code merges the answer
    with all of ``previous``)."""
    known = set(known_ids)
    passages = _passages(documents)
    return previous.model_copy(
        update={
            "findings": [
                f
                for f in previous.findings
                if not (len(set(f.doc_ids)) == 1 and set(f.doc_ids) <= known) or _about(f, passages)
            ]
        }
    )


def statement_key(statement: str) -> str:
    """A statement compared as words: case, accents, punctuation and spacing aside."""
    decomposed = unicodedata.normalize("NFKD", statement.casefold())
    return " ".join(re.findall(r"\w+", without_marks(decomposed)))


def without_repeats(previous: Sequence[Finding], new: Sequence[Finding]) -> list[Finding]:
    """``new`` without the findings that state a finding of ``previous`` (or an earlier one of
    ``new``) again: the analysis has it already."""
    seen = {statement_key(f.statement) for f in previous}
    out: list[Finding] = []
    for f in new:
        key = statement_key(f.statement)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out
