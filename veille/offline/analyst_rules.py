"""Rules of the offline analyst shared with its contradiction finder: what a sentence, a claim, a
subject and an aspect are (docs/offline-engine.md, Analyst)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from typing import Any

from veille.numbers import read_numbers
from veille.offline import lexicon
from veille.offline.figures import extract_figures, figure_unit
from veille.offline.text import fold, stems
from veille.roles.analyst import DocumentText

__all__ = [
    "AnalystTuning",
    "Claim",
    "Sentence",
    "bound_of",
    "doc_names",
    "facets",
    "is_fragment",
    "markup",
    "outside",
    "own_clause",
    "releases",
    "replaces",
    "sentence_names",
    "subjects",
]


@dataclass(frozen=True)
class AnalystTuning:
    """The analyst's thresholds and scores, each explained in weights.toml [read_analyst]."""

    per_doc: int
    per_doc_budget: int
    max_findings: int
    min_words: int
    max_words: int
    duplicate_jaccard: float
    claim_overlap: int
    same_subject_jaccard: float
    same_subject_shared: int
    same_subject_chars: int
    value_tolerance: float
    max_claims: int
    max_open_questions: int
    max_hedge_words: int
    min_score: float
    question_weight: float
    question_cap: int
    detail_cap: int
    future_date: float
    past_date: float
    named_unit: float
    measure: float
    count: float
    scored_figures: int
    figure_bonus: float
    bare_figure: float
    name_weight: float
    name_cap: int
    promotional: float
    setup: float
    window_before: int
    window_after: int

    @classmethod
    def from_data(cls) -> AnalystTuning:
        values: dict[str, Any] = {f.name: lexicon.weight(f"read_analyst.{f.name}") for f in fields(cls)}
        return cls(**{k: int(v) if cls.__annotations__[k] == "int" else v for k, v in values.items()})


# Sentences addressed to a model (prompt injection inside a document): never quoted.
def _cues(group: str) -> str:
    return lexicon.alternation("instruction_cues", group)


_INSTRUCTION_RE = re.compile(
    rf"\b({_cues('ignore')})\b.{{0,40}}\b({_cues('previous')})"
    rf"|\b({_cues('addressee')})\b"
    rf"|\b({_cues('reply')})\b.{{0,30}}\b({_cues('only')})\b",
    re.IGNORECASE,
)


class _Folded:
    """A list-built regex searched on folded text (case, accents and apostrophes ignored)."""

    def __init__(self, *names: str, tail: str = "", head: str = "", extra: str = "") -> None:
        self.names, self.tail, self.head, self.extra = names, tail, head, extra

    @cached_property
    def regex(self) -> re.Pattern[str]:
        alternatives = sorted(
            {re.escape(lexicon.fold_entry(w)) for n in self.names for w in lexicon.entries(n)},
            key=lambda w: (-len(w), w),
        )
        words = rf"(?<![\w-])(?:{'|'.join(alternatives)})(?![\w-])"
        return re.compile(rf"{self.head}(?:{words}{self.extra}){self.tail}")

    def search(self, text: str) -> re.Match[str] | None:
        return self.regex.search(lexicon.fold_entry(text))


_NEAR = r"\W*(?:\w+\W+){0,3}$"  # up to three words between the cue and the figure
# What a document presents as unverified or not settled (a rumour, a flaw without a fix): a later,
# more authoritative document on the same subject settles these; with the weaker open points they
# are the open questions.
_DOUBT_RE = _Folded("doubt")
_HEDGE_RE = _Folded("doubt", "hedge")
# A figure after one of these is a target, a threshold or a need: a requirement, not a claim.
_TARGET_RE = _Folded("target", tail=_NEAR)
# The same kind of words anywhere in a sentence: its bounds are requirements, not a subject's claims.
_REQUIREMENT_RE = _Folded("requirement")
# A figure after one of these is stated as an upper (« en moins de », "up to") or a lower bound
# (« au moins », "at least").
_UPPER_RE = _Folded("bound_upper", tail=_NEAR, extra="|[<≤]")
_LOWER_RE = _Folded("bound_lower", tail=_NEAR, extra="|[>≥]")


# « passe de 0,11 USD à 0,08 USD », "drops from 0.11 USD to 0.08 USD": the first figure is replaced.
_FROM_RE = re.compile(rf"\b(?:{lexicon.alternation('change_markers', 'from')})\s+$", re.IGNORECASE)
_TO_RE = re.compile(
    rf"(?:\s*\([^()\d]{{1,8}}\))?\s+(?:{lexicon.alternation('change_markers', 'to')})\s+(?:\*\*)?\d",
    re.IGNORECASE,
)


def replaces(text: str, figure: str) -> bool:
    """``text`` states ``figure`` as the old value of a change (« de X à Y »), the new one in the same
    unit (or the old one bare); not a range of two things (« un pack de 60 kWh à 7 300 EUR »)."""
    pos = text.find(figure)
    change = _TO_RE.match(text, pos + len(figure)) if pos >= 0 and _FROM_RE.search(text[:pos]) else None
    if not change:
        return False
    following = extract_figures(text[change.end() - 1 :])[:1]
    unit = figure_unit(figure)
    return bool(following) and (not unit or figure_unit(following[0]) == unit)


def bound_of(before: str) -> str | None:
    """How the text before a figure states it: ``"<"``/``">"`` an upper/lower bound, ``""`` a
    measure, None a target or a threshold (nothing to compare)."""
    if _TARGET_RE.search(before):
        return None
    if _UPPER_RE.search(before):
        return "<"
    if _LOWER_RE.search(before):
        return ">"
    return ""


# A sentence that describes the set-up of a document (its context, protocol, scope) rather than a
# finding: « Contexte : … », "Test setup: …".
_SETUP_RE = _Folded("setup", head="^")
# A sentence about several subjects at once (« les trois moteurs »): no single-subject prefix.
_COLLECTIVE_RE = _Folded("collective")
# Marketing words lower a sentence's score (the report's tone must stay neutral): the grid's list.
_PROMO_RE = _Folded("promotional")


@dataclass(frozen=True)
class Claim:
    """A figure a document states about one subject: what it measures (``near``: its own clause's
    words; ``window``: a wider span, qualifying figures included), in which unit."""

    sentence: Sentence
    figure: str
    unit: str
    value: float
    window: frozenset[str]
    bound: str = ""  # "<" an upper bound, ">" a lower bound, "" a measure
    rate: str = ""  # the unit with what it is counted per (« jour/site »), when the text says it
    near: frozenset[str] = frozenset()
    subject: str = ""
    versions: frozenset[str] = frozenset()

    def same_quantity(self, other: Claim, overlap: int) -> bool:
        """Same subject and release, unit counted per the same thing, and quantity: a word of the
        own clause or a qualifying figure in common, and ``overlap`` context words (a shared
        qualifying figure counts for ``overlap``); docs/offline-engine.md, Contradictions."""
        if not self.subject or self.subject != other.subject:
            return False
        if self.unit != other.unit or self.rate != other.rate:
            return False
        if len(self.versions) > 1 or len(other.versions) > 1:
            return False  # the figure's release is not determined: which subject it measures is not said
        if self.versions and other.versions and self.versions != other.versions:
            return False  # two releases of one product are two subjects
        shared = self.window & other.window
        qualified = any(w.startswith("#") for w in shared)  # « à 80 % », « de 20 To » on both sides
        if not (self.near & other.near or qualified):
            return False
        return sum(overlap if w.startswith("#") else 1 for w in shared) >= overlap


# Where a figure's clause ends: what it measures is named inside it.
_CLAUSE_BEFORE = int(lexicon.weight("read_analyst.clause_before"))
_CLAUSE_AFTER = int(lexicon.weight("read_analyst.clause_after"))
_OWN_CLAUSE_RE = re.compile(r"[,;()\[\]]|\s[-–—]\s|\.\s")


@lru_cache(maxsize=1)
def _unit_words() -> frozenset[str]:
    """Words that belong to a figure's unit, not to what it measures: « par », tax mentions (« HT »)."""
    taxes = " ".join(e for lang in lexicon.LANGS for e in lexicon.groups("tax_mentions", lang).get("vat", ()))
    return frozenset({"per", "par", *stems(taxes)})


def own_clause(text: str, figure: str, pos: int, ignored: frozenset[str] | set[str]) -> frozenset[str]:
    """Stems of the figure's own clause next to it: what it measures (« Latence : 12 ms »);
    ``ignored`` (subjects), its unit and tax mentions left out. Two figures are one quantity only
    if these share a word (:meth:`Claim.same_quantity`, the recommendation's rows)."""
    before = _OWN_CLAUSE_RE.split(text[:pos])[-1].split()[-_CLAUSE_BEFORE:]
    after = _OWN_CLAUSE_RE.split(text[pos + len(figure) :])[0].split()[:_CLAUSE_AFTER]
    left_out = set(ignored) | set(stems(figure_unit(figure))) | _unit_words()
    return frozenset(w for w in stems(" ".join(before + after)) if not w[:1].isdigit()) - left_out


@lru_cache(maxsize=int(lexicon.weight("read_cache.releases")))
def releases(text: str, subject: str = "") -> frozenset[str]:
    """The releases ``text`` names (the number reader's versions); with ``subject``, only those
    written right after its name (« Atlas 2.6 », « Atlas version 2.6 »)."""
    found = [r for r in read_numbers(text) if r.role == "version"]
    if subject:
        after = {
            m.end() for m in re.finditer(rf"(?i)\b{re.escape(subject)}\s+(?:(?:version|release)\s+)?", text)
        }
        found = [r for r in found if r.start in after]
    return frozenset(r.text.lstrip("vV") for r in found)


# Markup that a Markdown parse should have removed; a sentence still holding some states no claim.
_MARKUP_RE = re.compile(r"<[A-Za-z/!][^>]*>|\b[\w-]+=[\"']|[{}]|\[\^|!\[")


def markup(text: str) -> bool:
    """``text`` carries markup (an HTML tag or attribute, a style block, a footnote or image mark)."""
    return bool(_MARKUP_RE.search(text))


def outside(bound: Claim, measure: Claim, tolerance: float) -> bool:
    """A measure contradicts a bound only when it falls outside it (« moins de 2 heures », 4 h 15)."""
    if bound.bound == "<":
        return measure.value > bound.value * (1 + tolerance)
    return measure.value < bound.value * (1 - tolerance)


@dataclass
class Sentence:
    doc: DocumentText
    index: int
    text: str
    stems: list[str]
    figures: list[str]
    unit_figures: list[str]
    names: tuple[str, ...]
    score: float = 0.0
    doc_ids: list[str] = field(default_factory=list)


_MIN_NAME = int(lexicon.weight("read_analyst.min_name_letters"))
_NAME = r"[A-ZÀ-Ý][\wÀ-ÿ-]*(?: [A-ZÀ-Ý0-9][\wÀ-ÿ.-]*)?"
_ITEM_SPLIT_RE = re.compile(r",\s*|\s+(?:et|ou|and|or)\s+")
_ENUM_RE = re.compile(rf"{_NAME}(?:, {_NAME})*,? (?:et|ou|and|or) {_NAME}")


def _names(text: str) -> list[str]:
    """Capitalised words that do not start a sentence: the subjects a question or title names."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:;«(»)])\s*|\n", text):
        tokens = re.findall(r"[A-Za-zÀ-ÿ][\wÀ-ÿ-]*", sentence)
        for token in tokens[1:]:
            if len(token) >= _MIN_NAME and token[0].isupper() and not token.isupper() and token not in found:
                found.append(token)
    return found


def subjects(question: str, documents: Sequence[DocumentText]) -> list[str]:
    """What the question compares: its longest enumeration's names (« A, B et C »), else its
    capitalised words; kept only when a document title names them."""
    enumerations = [_ITEM_SPLIT_RE.split(m.group(0)) for m in _ENUM_RE.finditer(question)]
    longest = max(map(len, enumerations), default=0)
    firsts = [i.split()[0] for items in enumerations if len(items) == longest for i in items if i.split()]
    names = dict.fromkeys(w for w in firsts if len(w) >= _MIN_NAME and not w.isupper())
    pool = list(names) or _names(question)
    return [n for n in pool if any(doc_names(d, [n]) for d in documents)]


_OPENING_CHARS = int(lexicon.weight("read_analyst.opening_chars"))


def doc_names(doc: DocumentText, subjects: Sequence[str]) -> tuple[str, ...]:
    """The subjects the title names, else those of the opening paragraph (« Banc d'essai : les trois
    offres »: a comparison says there what it compares)."""
    title = fold(doc.title)
    named = tuple(s for s in subjects if re.search(rf"\b{re.escape(fold(s))}\b", title))
    if named:
        return named
    opening = fold(_opening(doc.body))
    return tuple(s for s in subjects if re.search(rf"\b{re.escape(fold(s))}\b", opening))


def _opening(body: str) -> str:
    """The body's opening characters, headings left out."""
    lines = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return " ".join(lines)[:_OPENING_CHARS]


def sentence_names(text: str, subjects: Sequence[str]) -> tuple[str, ...]:
    """The subjects ``text`` names."""
    folded = fold(text)
    return tuple(s for s in subjects if re.search(rf"\b{re.escape(fold(s))}\b", folded))


def facets(question: str) -> list[str]:
    """Aspects a question asks about: the items of its longest parenthesis, else of the clause
    after ' sur ' (' about ')."""
    groups = re.findall(r"\(([^()]+)\)", question)
    detail = (
        max(groups, key=len) if groups else question.partition(" sur ")[2] or question.partition(" about ")[2]
    )
    detail = detail.rstrip(" ?.")
    # « … pour Atlas, Borea et Cirrus »: the options compared, not an aspect.
    detail = re.sub(r"\s+(?:pour|for)\s+(?:[A-ZÀ-Ý][\wÀ-ÿ.-]*(?:,\s*|\s+(?:et|ou|and|or)\s+)?)+$", "", detail)
    out = []
    for raw in re.split(r",|;| et (?=l[ae's]|les |son |sa |ses |chaque )", detail):
        facet = re.sub(
            r"^(?:et |ou )?(?:l'|le |la |les |un |une |des |du |de |son |sa |ses |leurs? |chaque )",
            "",
            raw.strip(),
        )
        if len(facet) <= 2 or re.match(r"(au|aux|pour|dans|sur|en|avec|selon|par|à)\b", facet):
            continue  # a qualifier of the question ("au regard de…", "pour 40 serveurs…"), not an aspect
        out.append(facet)
    return out


def is_fragment(text: str) -> bool:
    """A list fragment (« et 12 500 EUR »): it starts lower-case or ends on a comma; a first word
    holding a digit or a capital (« p99 », « mTLS ») is a name, not a fragment."""
    if text.rstrip().endswith((":", ";", ",")):
        return True
    first = text.split()[0] if text.split() else ""
    if not first[:1].islower():
        return False
    return not any(c.isdigit() or c.isupper() for c in first)
