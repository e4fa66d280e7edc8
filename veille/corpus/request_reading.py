"""The request read once into a structure every backend uses (issue 37, item 1): its axes, the
options it compares, its period, its language and what it asks for (docs/pipeline.md, "The request
read once").

Code reads the request's text (:func:`read_request`); a model planner may propose axes with their
search terms, options and a period (:class:`RequestProposal`), and each proposal is kept only
where the text supports it: an axis shares most of its words with the request, an option is named
by the request and occurs in the corpus, a search term occurs in the corpus, a period's years are
written in the request. Offline there is no proposal: code reads the request alone. ``origin``
says, per field (and per axis and option), where it came from.

The result depends on the request, the corpus's text and the proposal only, never on the order of
the corpus's documents.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from veille.corpus.errors import CorpusError
from veille.corpus.frontmatter import _front_matter_mapping, _split_front_matter
from veille.corpus.request_options import corpus_spelling, read_options
from veille.corpus.request_period import read_period
from veille.corpus.request_words import cue_pattern, fold, weight, words
from veille.language import request_language
from veille.offline import lexicon
from veille.offline.axes import parse_axes

__all__ = [
    "Axis",
    "ProposedAxis",
    "RequestKind",
    "RequestProposal",
    "RequestReading",
    "read_kind",
    "read_request",
]

# What the request asks for: a choice gets a recommendation; an inventory one entry per item
# found; an evolution what changed when; a survey (none of these) the state of the question.
RequestKind = Literal["choice", "inventory", "evolution", "survey"]


@dataclass(frozen=True)
class Axis:
    key: str  # stable anchor id, e.g. "axe-1" (never shown as text in headings)
    title: str  # a whole phrase of the request (never cut), shown as the heading
    terms: tuple[str, ...]  # words/phrases that identify passages about this axis


@dataclass(frozen=True)
class RequestReading:
    axes: tuple[Axis, ...]
    options: tuple[str, ...]  # products/services compared, as written in the corpus (any case)
    period_start: datetime.date | None
    period_end: datetime.date | None
    language: str  # ISO 639-1 of the request, e.g. "fr"
    kind: RequestKind
    origin: Mapping[str, str]  # per field: "request" | "planner" | "corpus"


@dataclass(frozen=True)
class ProposedAxis:
    """An axis a model planner proposes: a title and its search terms in the corpus's languages."""

    title: str
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestProposal:
    """What a model planner proposes about the request; checked by :func:`read_request`."""

    axes: tuple[ProposedAxis, ...] = ()
    options: tuple[str, ...] = ()
    period_start: datetime.date | None = None
    period_end: datetime.date | None = None


_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(?P<text>.+?)\s*#*\s*$")


def _front(request_text: str) -> tuple[str, list[str], str]:
    """(title, terms, body) of a request file's text; a text without front matter is all body."""
    try:
        front, body, _ = _split_front_matter(request_text, Path("request.md"))
        data = _front_matter_mapping(front, Path("request.md"))
    except CorpusError:
        return "", [], request_text
    title = data.get("title")
    terms = data.get("terms")
    return (
        " ".join(title.split()) if isinstance(title, str) else "",
        [t.strip() for t in terms if isinstance(t, str) and t.strip()] if isinstance(terms, list) else [],
        body,
    )


def _stop() -> frozenset[str]:
    return lexicon.words("stop") | frozenset(words("languages", "names"))


def _content_words(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lower-cased words of ``text`` that say a subject: three letters or more, no function word."""
    stop = _stop()
    out = []
    for match in _WORD_RE.finditer(text):
        word = re.split(r"['’]", match.group())[-1].strip("-")
        if len(word) >= 3 and fold(word) not in stop and fold(word) not in skip:
            out.append(word.lower())
    return list(dict.fromkeys(out))


def _keys(text: str) -> set[str]:
    size = int(weight("key_chars"))
    return {fold(w)[:size] for w in _content_words(text)}


def _headings(body: str) -> set[str]:
    return {
        fold(m.group("text")).strip(" *_`.:;") for line in body.splitlines() if (m := _HEADING_RE.match(line))
    }


def _request_axes(body: str, names: Sequence[str], skip: frozenset[str]) -> list[tuple[str, list[str]]]:
    """(title, terms) of each axis the request states: list items, numbered questions, headings,
    an enumeration in a sentence (veille.offline.axes). A heading is its own title (the paragraph
    under it adds terms); an item or question is whole."""
    headings = _headings(body)
    out = []
    for axis in parse_axes(body, names, sequences=True):
        heading = fold(axis.label).strip(" .:;") in headings
        title = (axis.label if heading else axis.text).strip()
        title = title[:1].upper() + title[1:]
        out.append((title, _content_words(f"{title} {axis.detail}", skip)))
    return out


def _supported(title: str, request_keys: set[str]) -> bool:
    keys = _keys(title)
    return bool(keys) and len(keys & request_keys) >= weight("proposal_support") * len(keys)


def _in_corpus(term: str, folded_corpus: Sequence[str]) -> bool:
    key = fold(term).strip()
    pattern = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
    return bool(key) and any(pattern.search(t) for t in folded_corpus)


def _axes(
    body: str,
    names: Sequence[str],
    proposal: RequestProposal | None,
    folded_corpus: Sequence[str],
    skip: frozenset[str],
    origin: dict[str, str],
) -> tuple[Axis, ...]:
    read = _request_axes(body, names, skip)
    found: list[tuple[str, list[str], str]] = [(t, terms, "request") for t, terms in read]
    request_keys = _keys(body)
    for proposed in proposal.axes if proposal else ():
        if not _supported(proposed.title, request_keys):
            continue  # the model's own axis: the request does not ask for it
        searched = [t.strip() for t in proposed.terms if t.strip() and _in_corpus(t, folded_corpus)]
        keys = _keys(proposed.title)
        overlaps = [len(keys & _keys(" ".join([t, *terms]))) for t, terms, _ in found]
        if overlaps and max(overlaps) > 0:
            at = overlaps.index(max(overlaps))  # the request's axis it names: gains its search terms
            title, terms, where = found[at]
            found[at] = (title, [*terms, *searched], where)
        else:
            found.append(
                (proposed.title.strip(), [*_content_words(proposed.title, skip), *searched], "planner")
            )
    axes = []
    for n, (title, terms, where) in enumerate(found, start=1):
        axis = Axis(key=f"axe-{n}", title=title, terms=tuple(dict.fromkeys(terms)))
        origin[axis.key] = where
        axes.append(axis)
    origin["axes"] = "request" if any(w == "request" for _, _, w in found) or not found else "planner"
    return tuple(axes)


def _options(
    body: str,
    title: str,
    terms: Sequence[str],
    corpus_texts: Sequence[str],
    proposal: RequestProposal | None,
    origin: dict[str, str],
) -> tuple[str, ...]:
    options = read_options(body, terms, corpus_texts, title)
    for option in options:
        origin[f"option:{option}"] = "request"  # named by the request, written as the corpus writes it
    request = fold(f"{title}\n{body}")
    folded = [fold(t) for t in corpus_texts]
    known = {fold(o) for o in options}
    for proposed in proposal.options if proposal else ():
        key = fold(proposed).strip()
        if not key or key in known or not _in_corpus(key, [request]) or not _in_corpus(key, folded):
            continue  # an option the request does not name, or the corpus never mentions: refused
        spelled = _spelling(proposed, corpus_texts)
        options.append(spelled)
        known.add(key)
        origin[f"option:{spelled}"] = "planner"
    origin["options"] = (
        "planner" if options and all(origin[f"option:{o}"] == "planner" for o in options) else "request"
    )
    return tuple(options)


def _spelling(term: str, corpus_texts: Sequence[str]) -> str:
    """``term`` as the corpus writes it most often."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(term.strip())}(?![\w-])", re.IGNORECASE)
    found: dict[str, int] = {}
    for text in corpus_texts:
        for match in pattern.finditer(text):
            found[match.group()] = found.get(match.group(), 0) + 1
    return corpus_spelling(Counter(found)) if found else term.strip()


def read_kind(request_text: str, options: Sequence[str] = ()) -> RequestKind:
    """What the request asks for: a choice (its words, or options offered as alternatives « A, B
    ou C ? »), else an inventory, else an evolution (their words, veille/data/request.toml), else
    two options or more compared (« compare », "versus") is a choice; otherwise a survey."""
    text = fold(request_text)
    if cue_pattern("kind", "choice").search(text) or _alternatives(text, options):
        return "choice"
    if cue_pattern("kind", "inventory").search(text):
        return "inventory"
    if cue_pattern("kind", "evolution").search(text):
        return "evolution"
    return "choice" if len(options) >= 2 and cue_pattern("kind", "comparison").search(text) else "survey"


def _alternatives(folded: str, options: Sequence[str]) -> bool:
    """Two options joined by an alternative word (« Qdrant ou Milvus », \"A, B or C\")."""
    if len(options) < 2:
        return False
    names = "|".join(re.escape(fold(o)) for o in sorted(options, key=len, reverse=True))
    joins = "|".join(re.escape(w) for w in words("options", "alternatives"))
    pattern = rf"(?<![\w-])(?:{names})(?:\s*,\s*(?:{names}))*\s*,?\s+(?:{joins})\.?\s+(?:{names})(?![\w-])"
    return re.search(pattern, folded) is not None


def read_request(
    request_text: str,
    corpus_texts: Sequence[str],
    proposal: RequestProposal | None = None,
    *,
    title: str = "",
    terms: Sequence[str] = (),
    dates: Sequence[str] = (),
) -> RequestReading:
    """The request's reading. ``request_text``: request.md's text, front matter or not (or its body
    with ``title`` and ``terms`` given); ``corpus_texts``: the documents' text, in any order;
    ``dates``: the documents' dates (« en 2025 » is a period only for a year the corpus has left)."""
    front_title, front_terms, body = _front(request_text)
    title = title or front_title
    terms = list(dict.fromkeys([*terms, *front_terms]))
    origin: dict[str, str] = {}
    options = _options(body, title, terms, corpus_texts, proposal, origin)
    skip = frozenset(fold(o) for o in options)
    folded = [fold(t) for t in corpus_texts]
    axes = _axes(body, [*terms, *options], proposal, folded, skip, origin)
    start, end = read_period(f"{title}\n{body}", dates)
    origin["period"] = "request"
    if start is None and end is None and proposal is not None:
        start, end = _proposed_period(proposal, f"{title}\n{body}")
        if start is not None or end is not None:
            origin["period"] = "planner"
    origin["language"] = origin["kind"] = "request"
    return RequestReading(
        axes=axes,
        options=options,
        period_start=start,
        period_end=end,
        language=request_language(title, body),
        kind=read_kind(f"{title}\n{body}", options),
        origin=origin,
    )


def _proposed_period(
    proposal: RequestProposal, text: str
) -> tuple[datetime.date | None, datetime.date | None]:
    """The planner's period, when every year it names is written in the request."""
    dates = [d for d in (proposal.period_start, proposal.period_end) if d is not None]
    if dates and all(re.search(rf"(?<!\d){d.year}(?!\d)", text) for d in dates):
        if proposal.period_start and proposal.period_end and proposal.period_start > proposal.period_end:
            return None, None
        return proposal.period_start, proposal.period_end
    return None, None
