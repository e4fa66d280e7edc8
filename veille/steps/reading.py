"""What one analyst call reads of its documents within the input budget (issue 27 item 2).

Documents are read whole while they all fit ``Settings.analyst_token_budget`` (tokens of document
text, estimated as everywhere: veille.tokens); else the budget is shared among them (shortest first)
and each long document is read through its sections most relevant to the sub-task's question (BM25,
:func:`veille.corpus.sections.read_within_budget`), cut at headings, paragraphs and sentence ends,
never inside a sentence. The documents' text shown never exceeds the budget, whatever their sizes
(a 5 MB document among others included): that bound is structural, not a warning after the fact. What was left out is recorded per document
(:class:`PartRead`): the branch's findings.json entry (``read``), an info alert and the run
summary's « lu à N % ». Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Protocol

from veille.alerts import Alert, alert
from veille.corpus.sections import read_within_budget, split_sections
from veille.offline.text import STOP_WORDS
from veille.roles.analyst import DocumentText
from veille.steps.partread import PartRead

__all__ = ["PartRead", "axis_passages", "read_documents", "read_note", "reading_alert", "reading_query"]


class SubTaskLike(Protocol):
    @property
    def question(self) -> str: ...
    @property
    def search_terms(self) -> list[str]: ...


def axis_passages(
    documents: Sequence[DocumentText], passages: Mapping[str, Sequence[int]]
) -> list[DocumentText]:
    """``documents`` with each one listed in ``passages`` (a sub-task's, veille.steps.plan_reading:
    a document another branch reads whole) shown through those sections only, in reading order,
    joined like budgeted reading, with its share of the text; the others unchanged."""
    out: list[DocumentText] = []
    for d in documents:
        wanted = set(passages.get(d.id, ()))
        sections = split_sections(d.body)
        chosen = [s.text(d.body).strip() for s in sections if s.n in wanted]
        chosen = [t for t in chosen if t]
        if not wanted or not chosen or len(chosen) == len(sections):
            out.append(d)
            continue
        text = _GAP.join(chosen)
        percent = max(1, min(99, len(text) * 100 // max(1, len(d.body))))
        out.append(d.model_copy(update={"body": text, "read_percent": percent}))
    return out


_GAP = "\n\n[…]\n\n"


def reading_query(sub_task: SubTaskLike) -> str:
    """What a branch's passages are ranked against: its question and the terms of its axis (the
    request's words and the planner's search terms, set on the sub-task by
    veille.steps.plan_reading), so a French question finds the English passages of its axis."""
    return " ".join([sub_task.question, *sub_task.search_terms])


def _unread_passages(body: str, shown: str, query: str) -> int:
    """Sections of ``body`` sharing a word with ``query`` whose text is not in ``shown``."""
    wanted = set(_keys(query))
    count = 0
    for section in split_sections(body):
        text = section.text(body).strip()
        if text and wanted & set(_keys(text)) and text not in shown:
            count += 1
    return count


def _keys(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()
    return [w[:6] for w in re.findall(r"[a-z0-9]+", folded) if len(w) > 2 and w not in STOP_WORDS]


def read_documents(
    documents: Sequence[DocumentText], question: str, budget: int
) -> tuple[list[DocumentText], dict[str, PartRead]]:
    """The documents as the analyst is shown them (in the given order) and, for each one read in
    part, how much of it. The same document id twice is read once (the first)."""
    unique = {d.id: d for d in reversed(documents)}  # first occurrence wins
    readings = read_within_budget({i: d.body for i, d in unique.items()}, question, budget)
    shown: list[DocumentText] = []
    parts: dict[str, PartRead] = {}
    for d in documents:
        reading = readings[d.id]
        if reading.whole:
            shown.append(d)
            continue
        part = PartRead(
            tokens_read=reading.tokens_read,
            tokens_total=reading.tokens_total,
            passages_unread=_unread_passages(d.body, reading.text, question),
        )
        parts[d.id] = part
        shown.append(d.model_copy(update={"body": reading.text, "read_percent": part.percent}))
    return shown, parts


def read_note(parts: Mapping[str, PartRead]) -> str:
    """« doc-3 lu à 40 % (2 000 / 5 000 tokens), … » — the documents read in part, in id order."""
    return ", ".join(
        f"{i} lu à {p.percent} % ({p.tokens_read} / {p.tokens_total} tokens"
        + (f", {p.passages_unread} passage(s) pertinent(s) non lu(s))" if p.passages_unread else ")")
        for i, p in sorted(parts.items())
    )


def reading_alert(subtask_id: str, parts: Mapping[str, PartRead], budget: int) -> list[Alert]:
    """One alert naming the sub-task's documents read in part and how much of each (none: no
    alert): info while each was read at least in part, a warning when one could not be read at all
    (no whole sentence fitted its share: a document far beyond the budget among others)."""
    if not parts:
        return []
    unread = sorted(i for i, p in parts.items() if p.tokens_read <= 0)
    message = (
        f"{subtask_id} : budget de lecture de {budget} tokens atteint, passages les plus pertinents "
        f"lus : {read_note(parts)}"
    )
    if unread:
        message += f" ; non lu(s), aucune phrase entière dans sa part du budget : {', '.join(unread)}"
    return [
        alert(
            "analyse",
            "analyse.partial_read",
            message,
            severity="warning" if unread else "info",
            subject=subtask_id,
        )
    ]
