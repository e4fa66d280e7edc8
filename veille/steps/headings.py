"""The axis headings of the dossier (issue 36 item 5): whole phrases of the request's axes, clean
by construction whatever the plan's questions hold.

- **never cut**: a heading is the question's subject up to its own boundary (its detail in
  parentheses, its question mark), never a number of words followed by « … »;
- **no internal id**: sub-task ids (« st-4 — ») are removed, wherever they appear; they stay in
  the HTML anchors (veille.delivery.html) and in the run folder's files, never in the text;
- **no model-made structure**: format characters, front matter, rules, heading and list markers
  are removed (veille.steps.model_structure) before the subject is read;
- **each heading once**: two axes whose subjects read alike add their detail, then their whole
  question, then their rank (« volet 2 »), so no heading is shown twice.

Pure text: imports nothing of veille but veille.plaintext and veille.steps.model_structure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from veille.plaintext import clean_text
from veille.steps.model_structure import strip_markup

__all__ = ["axis_anchors", "axis_titles", "failed_axis_titles"]

# A question's framing, in either language the offline planner writes it (docs/offline-engine.md).
_FRAME_RE = re.compile(r"^(?:dans le cadre de|within) «[^»]*»\s*,\s*", re.IGNORECASE)
_ASK = r"(?:que|qu'est-ce que) disent les documents (?:sur|de)|what do the documents say about"
_ASK_RE = re.compile(rf"^(?:{_ASK})\s+", re.IGNORECASE)  # spaces: the question is normalised first
# A sub-task id anywhere (plan_validate numbers them st-1, st-2…), and an id-like label written
# before a title by a planner or a model: « st-4 — », « ST4: », « axe_2 - ».
_SUBTASK_ID_RE = re.compile(r"(?<![\w-])\(?st-\d{1,4}\)?(?![\w-])", re.IGNORECASE)
_ID_PREFIX_RE = re.compile(r"^\s*[a-z]{1,6}[-_ ]?\d{1,4}\s*(?:[—–:|]\s*)+", re.IGNORECASE)
_EDGES = " ,;:.—–-…"


def _without_ids(text: str, ids: list[str]) -> str:
    for sid in sorted(ids, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-])\(?{re.escape(sid)}\)?(?![\w-])", " ", text, flags=re.IGNORECASE)
    text = _SUBTASK_ID_RE.sub(" ", text)
    while (match := _ID_PREFIX_RE.match(text)) is not None:
        text = text[match.end() :]
    return " ".join(text.split()).strip(_EDGES)


def _subject(question: str, ids: list[str]) -> tuple[str, str, str]:
    """(subject, detail, whole question), each without ids or markup."""
    text = strip_markup(_without_ids(clean_text(strip_markup(question)), ids))  # « st-4 — 1. x »
    text = _ASK_RE.sub("", _FRAME_RE.sub("", text))
    detail = re.search(r"\(([^()]+)\)", text)
    head = _bare(re.split(r"\s*[(?]", text, maxsplit=1)[0])
    whole = _bare(text.strip(_EDGES + "?"))
    return head, (_bare(detail.group(1)) if detail else ""), whole


def _bare(text: str) -> str:
    """``text`` without markup nor edge punctuation, to a fixed point: cutting at « ? » may bare a
    list marker (« ? 1. x »)."""
    while (bare := strip_markup(text).strip(_EDGES)) != text:
        text = bare
    return text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def axis_titles(questions: Mapping[str, str]) -> dict[str, str]:
    """Sub-task id -> heading: the question's subject, whole, its framing dropped; no id, no
    markup, and no two headings alike (case and spacing aside)."""
    ids = list(questions)
    parts = {sid: _subject(q, ids) for sid, q in questions.items()}
    titles = {sid: _capital(head or whole) for sid, (head, _, whole) in parts.items()}

    def alike() -> set[str]:
        keys = [" ".join(t.casefold().split()) for t in titles.values()]
        return {sid for sid, key in zip(titles, keys, strict=True) if keys.count(key) > 1}

    for sid in alike():  # the detail tells them apart (« Coût : licence », « Coût : exploitation »)
        head, detail, _ = parts[sid]
        if head and detail:
            titles[sid] = _capital(f"{head} : {detail}")
    for sid in alike():  # then the whole question
        titles[sid] = _capital(parts[sid][2] or titles[sid])
    for rank, sid in enumerate(questions, 1):  # then the rank: the same words asked twice
        if sid in alike() or not titles[sid]:
            titles[sid] = f"{titles[sid]} (volet {rank})".strip() if titles[sid] else f"Volet {rank}"
    return titles


def axis_anchors(questions: Mapping[str, str]) -> dict[str, str]:
    """Heading -> sub-task id, for the HTML anchors of the headings :func:`axis_titles` gives
    (the questions as the write step reads them: ``clean_text`` first, as numbering does)."""
    return {
        title: sid for sid, title in axis_titles({k: clean_text(q) for k, q in questions.items()}).items()
    }


class _Branch(Protocol):
    """An analysed branch as read here (veille.steps.analyse.Analysis), read-only."""

    @property
    def subtask_id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def status(self) -> str: ...


def failed_axis_titles(analyses: Sequence[_Branch]) -> list[str]:
    """The failed branches as the dossier names its axes (report.html's header said « st-2 (question) »):
    titles made among every branch's question, so two axes never read alike, without ids."""
    titles = axis_titles({a.subtask_id: clean_text(a.question) for a in analyses})
    return [titles[a.subtask_id] for a in analyses if a.status == "failed"]
