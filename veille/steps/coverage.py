"""Coverage of the plan (issue 11): which catalogue documents concern the request, and where code
places the ones the planner left out.

Relevance is lexical and generic (no list of any corpus's words): a document *names a term* when its
title or summary names one of the request's terms (whole word, case- and accent-insensitive); it
*shares the request's vocabulary* through the stems of the request's content words it contains
(function words and the words every request uses to give orders left out). A document is
*on topic* when it shares at least :data:`ON_TOPIC_WORDS` stems (one shared word, "service" or
"jour", is too weak a link on its own).

A document left out is put back (:func:`needs_placement`: the planner is re-asked once, then code
places it) when a cap cut it, when the planner did not mention it although it names a term or is on
topic (silence is not exclusion), or when the planner excluded it despite a *strong* link (names a
term AND is on topic). A weaker link the planner explicitly excluded may be a homonym (a meeting
room named like a product) or a look-alike: its exclusion stands, named in an alert (asking the
model "are you sure?" would only invite it to flip).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from veille.marks import without_marks
from veille.offline.text import cosine, stems, weighted_vector
from veille.roles.planner import CatalogueEntry, ExclusionReason, SubTask

if TYPE_CHECKING:  # the text measure imports this module's vocabulary
    from veille.steps.text_relevance import TextRelevance

__all__ = [
    "ON_TOPIC_WORDS",
    "REQUEST_META",
    "Placement",
    "Relevance",
    "Vocabulary",
    "drop_off_topic",
    "mentions_term",
    "needs_placement",
    "place_documents",
]

# Stems a document must share with the request to be on topic without naming a term.
ON_TOPIC_WORDS = 2
# Words requests use to give orders, not to name a subject ("produis un dossier factuel et sourcé,
# retiens les chiffres vérifiables, indique la source"), and English function words (the offline
# stop list is French-first): never evidence of relevance.
REQUEST_META = """
produis produire redige rediger ecris compare comparer comparaison retiens retenir indique indiquer
precise preciser donne donner dis dire explique expliquer analyse analyser synthese resume partir
factuel factuelle sourcee source sources chiffre chiffres verifiable verifiables francais francaise
anglais contredisent contredit contradiction lequel laquelle pourquoi ecarter ecartes ecarte rapport
axe axes suivant suivants suivantes selon chaque compare pour sans avec entre tenant compte
produce write compare retain state give explain analyse analyze summary factual sourced source
figures verifiable french english contradict contradicts which why exclude each following axis axes
a about above after again against all also am an any are as at be because been before being below
between both but by can could did do does doing down during each few first for from further had has
have having he her here hers him his how i if in into is it its itself just last more most my new no
nor not now of off on once one only or other our ours out over own same she should so some such than
that the their theirs them then there these they this those three through to too two under until up
us very was we were what when where whether while who whom will with would year years you your
"""
_META_STEMS = frozenset(stems(REQUEST_META))
_MIN_STEM = 3
# Placement in a sub-task with room other than the closest: at least this share of the best score.
_NEAR_SHARE = 0.5


def _fold(text: str) -> str:
    # Case- and accent-insensitive comparison ("Orvet" matches "ORVET", "sécurité" matches "securite").
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return without_marks(decomposed)


def mentions_term(text: str, terms: Iterable[str]) -> list[str]:
    """The terms that ``text`` mentions as whole words (case- and accent-insensitive)."""
    folded = _fold(text)
    return [t for t in terms if t.strip() and re.search(rf"(?<!\w){re.escape(_fold(t))}(?!\w)", folded)]


@dataclass(frozen=True)
class Relevance:
    """What one catalogue entry shares with the request."""

    terms: tuple[str, ...] = ()  # request terms it names
    words: tuple[str, ...] = ()  # request stems it contains, terms aside
    # Its text against the request, relative to the corpus (veille.steps.text_relevance); both
    # False when the text was not measured.
    read_worthy: bool = False
    off_topic: bool = False
    text_note: str = ""
    text_names_term: bool = False  # its text (not only its title or summary) names a request term
    measured: bool = False  # its text was measured (else the cap rule is the planner's wish alone)
    # Read worthy, and the plan reads less than half of the documents naming a term: code then
    # overrules the planner's exclusion (veille.steps.plan.make_plan decides).
    overrules_exclusion: bool = False

    @property
    def names_term(self) -> bool:
        return bool(self.terms)

    @property
    def on_topic(self) -> bool:
        return len(self.words) >= ON_TOPIC_WORDS

    @property
    def strong(self) -> bool:
        """Names a term and is on topic: code overrules even an explicit exclusion by the planner."""
        return self.names_term and self.on_topic

    @property
    def shares_vocabulary(self) -> bool:
        return bool(self.terms or self.words)

    def describe(self) -> str:
        """French, for alerts and the re-ask: « cite « Kestrel » ; vocabulaire : débit, latence »."""
        parts = []
        if self.terms:
            parts.append("cite " + ", ".join(f"« {t} »" for t in self.terms))
        if self.words:
            parts.append("vocabulaire de la demande : " + ", ".join(self.words[:5]))
        parts = parts or ["aucun lien lexical avec la demande"]
        return " ; ".join([*parts, self.text_note] if self.text_note else parts)


def _entry_text(entry: CatalogueEntry) -> str:
    return f"{entry.title} {entry.summary or ''}"


@dataclass
class Vocabulary:
    """The request's terms and content stems, and the relevance of each catalogue entry to them."""

    terms: list[str]
    stems: frozenset[str]
    text: TextRelevance | None = None
    overrule: bool = False  # a read-worthy text overrules the planner's exclusion (low coverage)
    _cache: dict[str, Relevance] = field(default_factory=dict, repr=False)

    @classmethod
    def of(
        cls, request_title: str, request: str, terms: Sequence[str], text: TextRelevance | None = None
    ) -> Vocabulary:
        term_stems = set(stems(" ".join(terms)))
        words = {
            s
            for s in stems(f"{request_title}\n{request}")
            if len(s) >= _MIN_STEM and s not in term_stems and s not in _META_STEMS and not s.isdigit()
        }
        return cls(terms=[t for t in terms if t.strip()], stems=frozenset(words), text=text)

    def relevance(self, entry: CatalogueEntry) -> Relevance:
        if entry.id not in self._cache:
            text = _entry_text(entry)
            shared = dict.fromkeys(s for s in stems(text) if s in self.stems)
            measured = self.text
            worthy = bool(measured and measured.relevant(entry.id))
            self._cache[entry.id] = Relevance(
                tuple(mentions_term(text, self.terms)),
                tuple(shared),
                read_worthy=worthy,
                text_names_term=bool(measured and measured.terms.get(entry.id)),
                measured=bool(measured and entry.id in measured.shares),
                overrules_exclusion=worthy and self.overrule,
                off_topic=bool(measured and measured.off_topic(entry.id)),
                text_note=measured.describe(entry.id) if measured else "",
            )
        return self._cache[entry.id]


@dataclass
class Placement:
    """Where code put the documents it had to place: sub-task index per id, and those left out."""

    sub_tasks: list[SubTask]
    placed: dict[str, int] = field(default_factory=dict)  # doc id -> index in sub_tasks
    full: list[str] = field(default_factory=list)  # no sub-task had room (reason ``cap``)


def _idf(catalogue: Sequence[CatalogueEntry]) -> dict[str, float]:
    df = Counter(s for e in catalogue for s in set(stems(_entry_text(e))))
    n = max(1, len(catalogue))
    return {s: math.log(1 + n / c) for s, c in df.items()}


def _profile(st: SubTask, by_id: Mapping[str, CatalogueEntry], idf: Mapping[str, float]) -> dict[str, float]:
    text = " ".join([st.question, *(_entry_text(by_id[i]) for i in st.doc_ids if i in by_id)])
    return weighted_vector(stems(text), idf)


def place_documents(
    sub_tasks: Sequence[SubTask],
    doc_ids: Sequence[str],
    catalogue: Sequence[CatalogueEntry],
    *,
    max_subtasks: int,
    max_docs: int,
) -> Placement:
    """Place each of ``doc_ids`` in its closest sub-task (lexical similarity to the sub-task's
    question and documents), within the caps.

    When the closest is full: its continuation (a sub-task with the same question, created by code
    while under ``max_subtasks``); at ``max_subtasks``, a sub-task with room scoring at least half
    the best; else the document is left out (``full``: reason ``cap``).
    """
    by_id = {e.id: e for e in catalogue}
    idf = _idf(catalogue)
    out = Placement(sub_tasks=[st.model_copy(update={"doc_ids": list(st.doc_ids)}) for st in sub_tasks])
    profiles = [_profile(st, by_id, idf) for st in out.sub_tasks]
    continuation: dict[int, int] = {}  # full sub-task index -> its continuation's index
    for doc_id in doc_ids:
        entry = by_id.get(doc_id)
        if entry is None or not out.sub_tasks or any(doc_id in st.doc_ids for st in out.sub_tasks):
            continue
        vector = weighted_vector(stems(_entry_text(entry)), idf)
        scores = [cosine(vector, p) for p in profiles]
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        closest = ranked[0]
        while len(out.sub_tasks[closest].doc_ids) >= max_docs and closest in continuation:
            closest = continuation[closest]
        target: int | None = closest if len(out.sub_tasks[closest].doc_ids) < max_docs else None
        if target is None and len(out.sub_tasks) < max_subtasks:
            # One sub-task more rather than a document less (seed 001): same question, more documents.
            origin = out.sub_tasks[closest]
            out.sub_tasks.append(
                SubTask(id=f"st-{len(out.sub_tasks) + 1}", question=origin.question, doc_ids=[])
            )
            profiles.append(profiles[closest])
            continuation[closest] = target = len(out.sub_tasks) - 1
        if target is None:
            target = _near_with_room(out.sub_tasks, ranked, scores, max_docs)
        if target is None:
            out.full.append(doc_id)
            continue
        out.sub_tasks[target].doc_ids.append(doc_id)
        out.placed[doc_id] = target
    return out


def _near_with_room(
    sub_tasks: Sequence[SubTask], ranked: Sequence[int], scores: Sequence[float], max_docs: int
) -> int | None:
    """A sub-task with room whose similarity is at least :data:`_NEAR_SHARE` of the best one."""
    floor = scores[ranked[0]] * _NEAR_SHARE
    for index in ranked[1:]:
        if scores[index] > 0 and scores[index] >= floor and len(sub_tasks[index].doc_ids) < max_docs:
            return index
    return None


def needs_placement(reason: str | None, relevance: Relevance) -> bool:
    """Whether a document out of the plan for ``reason`` must be put back (re-ask, then code):
    cut by a cap while it names a term or its text is relevant, not mentioned although it concerns the request, or excluded despite a strong link
    or a read-worthy text while the plan misses most documents naming a term — never one whose text
    is off topic."""
    if relevance.off_topic:
        return False
    # A cap cut it: the planner wanted it, but a planner placing everything wants menus too; with
    # the text measured, put back what names a compared product or reads as relevant, the rest
    # stays out as ``cap``.
    wanted = (
        not relevance.measured or relevance.names_term or relevance.text_names_term or relevance.read_worthy
    )
    return (
        (reason == "cap" and wanted)
        or (reason == "unassigned" and (relevance.names_term or relevance.on_topic or relevance.read_worthy))
        or (reason == "planner_excluded" and (relevance.strong or relevance.overrules_exclusion))
    )


def cover(
    sub_tasks: Sequence[SubTask],
    reasons: Mapping[str, ExclusionReason],
    catalogue: Sequence[CatalogueEntry],
    vocabulary: Vocabulary,
    *,
    max_subtasks: int,
    max_docs: int,
    never: Collection[str] = (),
) -> tuple[list[SubTask], dict[str, ExclusionReason], list[str]]:
    """Code's placement of what the planner left out: (sub-tasks, reasons of what is still out,
    ids placed by code).

    Placed: documents cut by a cap (the planner wanted them); documents the planner did not mention
    that name a term or are on topic (silence is not exclusion); documents it explicitly excluded
    only when they are :attr:`Relevance.strong` (a weaker link may be a homonym or a look-alike:
    "the chapel's restoration" in a backup corpus; the planner was asked again and kept it out,
    and the exclusion stays visible in an alert). Documents no sub-task has room for get ``cap``;
    ``never`` (flagged documents off the request's topic) are not placed.
    """
    candidates = [
        e.id
        for e in catalogue
        if e.id not in never and needs_placement(reasons.get(e.id), vocabulary.relevance(e))
    ]
    placement = place_documents(
        sub_tasks, candidates, catalogue, max_subtasks=max_subtasks, max_docs=max_docs
    )
    left = {i: r for i, r in reasons.items() if i not in placement.placed}
    left.update({i: "cap" for i in placement.full})
    return placement.sub_tasks, left, list(placement.placed)


def drop_off_topic(
    sub_tasks: Sequence[SubTask],
    reasons: Mapping[str, ExclusionReason],
    catalogue: Sequence[CatalogueEntry],
    vocabulary: Vocabulary,
) -> tuple[list[SubTask], dict[str, ExclusionReason], list[str]]:
    """Documents the plan reads whose text is off topic (:attr:`Relevance.off_topic`: a canteen
    menu, a homonym of a compared product), removed from every sub-task with reason ``off_topic``
    whatever the planner said: (sub-tasks, reasons, removed ids). Before :func:`cover`, so the room
    they leave serves the documents that concern the request."""
    used = {i for st in sub_tasks for i in st.doc_ids}
    removed = [e.id for e in catalogue if e.id in used and vocabulary.relevance(e).off_topic]
    gone = set(removed)
    out_reasons: dict[str, ExclusionReason] = {**reasons, **dict.fromkeys(removed, "off_topic")}
    kept = [st.model_copy(update={"doc_ids": [i for i in st.doc_ids if i not in gone]}) for st in sub_tasks]
    return kept, out_reasons, removed


def check_flagged(
    sub_tasks: Sequence[SubTask],
    reasons: Mapping[str, ExclusionReason],
    catalogue: Sequence[CatalogueEntry],
    flagged: Mapping[str, str],
    vocabulary: Vocabulary,
) -> tuple[list[SubTask], dict[str, ExclusionReason], list[str], list[str]]:
    """Flagged documents after planning: (sub-tasks, reasons, removed, kept).

    One sharing no vocabulary with the request is removed from every sub-task (reason
    ``injection``); one that concerns the request stays, its label in the sub-task's ``flags`` so
    its analyst and the sources list show it.
    """
    out_reasons: dict[str, ExclusionReason] = dict(reasons)
    removed: list[str] = []
    for entry in catalogue:
        if entry.id in flagged and not vocabulary.relevance(entry).shares_vocabulary:
            removed.append(entry.id)
            out_reasons[entry.id] = "injection"
    gone = set(removed)
    out: list[SubTask] = []
    for st in sub_tasks:
        ids = [i for i in st.doc_ids if i not in gone]
        flags = {i: flagged[i] for i in ids if i in flagged}
        out.append(st.model_copy(update={"doc_ids": ids, "flags": flags}))
    kept = [i for i in dict.fromkeys(i for st in out for i in st.doc_ids) if i in flagged]
    return out, out_reasons, removed, kept
