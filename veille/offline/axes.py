"""Axes of analysis from the request's wording, whatever its shape (offline planner): a list,
headings, or an enumeration in a sentence (docs/offline-engine.md, "Planner", 1). Generic rules
only: French and English function words (veille/data/lang), no word of any corpus."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from veille.offline import lexicon
from veille.offline.text import fold

__all__ = ["Axis", "parse_axes"]


@dataclass
class Axis:
    label: str
    facets: list[str]
    text: str
    merged: bool = False  # two axes folded into one sub-task (more axes than max_subtasks)
    detail: str = field(default="")  # what the question spells out after the label


_BULLET_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?P<text>.+)$")
_HEADING_RE = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
# Words after which an enumeration of axes starts (the last one in its clause counts).
_CUE_RE = re.compile(rf"(?:(?<=\s)|^)(?:{lexicon.alternation('axis_cues')})\s+|:\s+", re.IGNORECASE)
# A clause that ends the enumeration (gerund, relative or subordinate clause).
_STOP_RE = re.compile(
    rf"^(?:(?:tout\s+)?en\s+\w+ant\b|(?:{lexicon.alternation('clause_stops')})\b)", re.IGNORECASE
)
_JOINS = "|".join(lexicon.alternation(n) for n in ("coordination", "sequence", "axis_leading"))
_LEADING_RE = re.compile(rf"^(?:(?:(?:{_JOINS})\s+)|l['’]\s*)+", re.IGNORECASE)
_CONJ_RE = re.compile(rf"\s+(?:{lexicon.alternation('coordination')})\s+", re.IGNORECASE)
_MAX_ITEM_WORDS = lexicon.weight("plan_axes.max_item_words")
_MAX_QUESTION_WORDS = lexicon.weight("plan_axes.max_question_words")
_MIN_ITEMS = lexicon.weight("plan_axes.min_sentence_items")


def _clean(text: str) -> str:
    return re.sub(r"[*_`]", "", text).strip().rstrip(".;:").strip()


def _names_at(piece: str, end: bool) -> bool:
    words = piece.split()
    word = (words[-1] if end else words[0]).strip("«»\"'()") if words else ""
    return word[:1].isupper()


def _facets(detail: str) -> list[str]:
    """The detail's facets, cut at commas and semicolons outside parentheses, except a comma
    between two names: in « stabilité de Atlas, Borea et Cirrus sur la charge » it belongs to
    the enumeration of names, and cutting there would give « Borea et Cirrus sur la charge » as a
    facet of its own (a cut phrase in a sub-task's question and heading)."""
    facets: list[str] = []
    for piece in _pieces(detail):
        if facets and _names_at(facets[-1], end=True) and _names_at(piece, end=False):
            facets[-1] = f"{facets[-1]}, {piece}"
        else:
            facets.append(piece)
    return facets


def _bullet_axes(request: str) -> list[Axis]:
    """Top-level Markdown bullets, as axes (label before ':' and facets after)."""
    axes: list[Axis] = []
    for raw in request.splitlines():
        if raw[:1].isspace():
            continue  # nested bullets refine their parent; they are not axes
        match = _BULLET_RE.match(raw.strip())
        if not match:
            continue
        text = _clean(match.group("text"))
        label, sep, rest = text.partition(" : ")
        if not sep:
            label, sep, rest = text.partition(": ")
        facets = _facets(rest) if sep else []
        axes.append(Axis(label=label.strip() if sep else text, facets=facets, text=text, detail=rest.strip()))
    return axes


def _heading_axes(request: str) -> list[Axis]:
    """One axis per Markdown heading; the paragraph under it gives the facets."""
    sections: list[tuple[str, list[str]]] = []
    for raw in request.splitlines():
        match = _HEADING_RE.match(raw.strip())
        if match:
            sections.append((_clean(match.group("text")), []))
        elif sections and raw.strip():
            sections[-1][1].append(raw.strip())
    axes = []
    for label, lines in sections:
        paragraph = " ".join(lines)
        # Only the paragraph's first sentence describes the axis; later ones may be general advice.
        detail = _clean(re.split(r"(?<=[.!?])\s+", paragraph, maxsplit=1)[0])
        facets = _facets(detail)
        axes.append(
            Axis(label=label, facets=facets, text=f"{label} : {detail}" if detail else label, detail=detail)
        )
    return axes


def _pieces(sentence: str) -> list[str]:
    """The sentence cut at commas and semicolons outside parentheses."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in sentence:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if ch in ",;" and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    out.append("".join(current).strip())
    return [p for p in out if p]


def _enumeration(sentence: str) -> list[str]:
    """Items of the enumeration of ``sentence`` that follows a cue word, or [] if there is none."""
    pieces = _pieces(sentence.strip().rstrip(".!?"))
    for start, piece in enumerate(pieces):
        cues = list(_CUE_RE.finditer(piece))
        if not cues or len(pieces) - start < 2:
            continue
        first = piece[cues[-1].end() :].strip()
        items = [first] if first else []
        for nxt in pieces[start + 1 :]:
            if _STOP_RE.match(nxt):
                break
            items.append(nxt)
        # "A, B, C et D": the last piece holds two items, unless the items are themselves pairs
        # ("sécurité et conformité, exploitation et pérennité": every piece has its own "et").
        if items and not any(_CONJ_RE.search(i) for i in items[:-1]):
            last = _CONJ_RE.split(items[-1])
            if len(last) == 2:
                items[-1:] = last
        items = [_LEADING_RE.sub("", _clean(i)).strip() for i in items]
        items = [i for i in items if i and len(i.split()) <= _MAX_ITEM_WORDS]
        if len(items) >= _MIN_ITEMS:
            return items
    return []


# Indirect questions (« me demander si …, ce que …, où … et comment … »): each one an axis.
_ASK = f"(?:{lexicon.alternation('indirect_questions')})"
_OPENING = "|".join(lexicon.alternation(n) for n in ("coordination", "sequence"))
_ASK_START_RE = re.compile(rf"^(?:(?:{_OPENING})\s+)?{_ASK}\b", re.IGNORECASE)
_ASK_INSIDE_RE = re.compile(rf"\b{_ASK}\b", re.IGNORECASE)
_CHAINING = "|".join(
    (lexicon.alternation("coordination", "additive"), lexicon.alternation("sequence", "next"))
)
_ASK_JOIN_RE = re.compile(rf"\s+(?:{_CHAINING})\s+(?={_ASK}\b)", re.IGNORECASE)
_ASIDE_RE = re.compile(r"\s+[—–]\s+[^—–]*?(?:\s+[—–]\s+|$)")  # « — le DPO attend … — »


def _question_enumeration(sentence: str) -> list[str]:
    """The indirect questions a sentence lists (three or more), else []: « le comité demandera si
    on entend bien, ce que ça coûte, où partent les données et comment l'exploiter »."""
    text = _ASIDE_RE.sub(" ", sentence.strip().rstrip(".!?")).strip()
    pieces = [q for p in _pieces(text) for q in _split_questions(p)]
    items: list[str] = []
    for n, piece in enumerate(pieces):
        if _ASK_START_RE.match(piece):
            items.append(piece)
        elif n == 0 and (first := _ASK_INSIDE_RE.search(piece)) and first.start() > 0:
            items.append(piece[first.start() :])  # « Le comité va me demander si … »
        elif items:
            items[-1] = f"{items[-1]}, {piece}"  # the question goes on (« …, avec quels partenaires … »)
    items = [_LEADING_RE.sub("", _clean(i)).strip() for i in items]
    items = [i for i in items if i and len(i.split()) <= _MAX_QUESTION_WORDS]
    return items if len(items) >= _MIN_ITEMS else []


def _split_questions(piece: str) -> list[str]:
    """« où en sont X et comment Y » is two questions; « si c'est lent et si c'est cher » one, asked
    twice the same way."""
    parts = [p for p in _ASK_JOIN_RE.split(piece) if p.strip()]
    out = parts[:1]
    for part in parts[1:]:
        before, here = _ASK_INSIDE_RE.search(out[-1]), _ASK_INSIDE_RE.search(part)
        if before and here and fold(before.group(0)) == fold(here.group(0)):
            out[-1] = f"{out[-1]} et {part}"
        else:
            out.append(part)
    return out


_SEQUENCE_RE = re.compile(rf"(?<![\w'’-])(?:{lexicon.alternation('sequence')})(?![\w'’-])", re.IGNORECASE)


def _sequence_enumeration(sentence: str) -> list[str]:
    """The points a sentence orders with sequence adverbs, from its first one (« en traitant d'abord
    les performances (…), ensuite le coût (…), puis la fiabilité et enfin la réglementation »),
    three or more, else []."""
    marks = list(_SEQUENCE_RE.finditer(sentence))
    if len(marks) < _MIN_ITEMS or not _FIRST_RE.fullmatch(marks[0].group(0)):
        return []
    ends = [m.start() for m in marks[1:]] + [len(sentence)]
    items = [sentence[m.end() : end] for m, end in zip(marks, ends, strict=True)]
    items = [_CONJ_TAIL_RE.sub("", _LEADING_RE.sub("", _clean(i.strip(" ,;")))).strip() for i in items]
    if any(not i or len(i.split()) > _MAX_ITEM_WORDS for i in items):
        return []
    return items


_FIRST_RE = re.compile(lexicon.alternation("sequence", "first"), re.IGNORECASE)
_CONJ_TAIL_RE = re.compile(rf"(?:,|\s+(?:{lexicon.alternation('coordination')}))\s*$", re.IGNORECASE)


def _is_term_list(items: Sequence[str], terms: Sequence[str]) -> bool:
    """True when most items are request terms or single capitalised words (the products compared),
    or when any item is a request term: an aspect is never a product's name alone."""
    folded_terms = {fold(t) for t in terms}
    names = sum(1 for i in items if len(i.split()) == 1 and i[:1].isupper())
    return any(fold(i) in folded_terms for i in items) or names * 2 > len(items)


def _sentences(request: str) -> list[str]:
    """The request's sentences; a paragraph never runs into the next one, even when it ends
    without punctuation (« Objet : … », « Bonjour, »)."""
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", request):
        text = " ".join(line.strip() for line in paragraph.splitlines() if line.strip())
        if text and text[-1] not in ".!?":
            text += "."  # « Objet : … », « Bonjour, »: the paragraph ends the sentence
        out.extend(s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip())
    return out


def _sentence_axes(request: str, terms: Sequence[str], sequences: bool) -> list[Axis]:
    best: list[str] = []
    for sentence in _sentences(request):
        # Ties go to the first shape: sequence adverbs say where each point starts.
        shapes = (_sequence_enumeration(sentence) if sequences else [], _question_enumeration(sentence))
        items = max((*shapes, _enumeration(sentence)), key=len)
        if items and not _is_term_list(items, terms) and len(items) > len(best):
            best = items
    return [Axis(label=i[:1].upper() + i[1:], facets=[], text=i) for i in best]


def parse_axes(request: str, terms: Sequence[str] = (), *, sequences: bool = False) -> list[Axis]:
    """The request's axes, first shape found (docs/offline-engine.md); [] when it states none.

    ``sequences``: points ordered by sequence adverbs count too (« d'abord A, ensuite B, puis C et
    enfin D »). The request's reading (veille.corpus.request_reading) reads them; the offline
    planner does not yet: its placement by closeness (issue 37, item 2) puts an off-topic homonym
    and one side of a contradiction apart in the axes it then gets (tests/test_corpora_plan.py,
    pompes-chaleur)."""
    if bullets := _bullet_axes(request):
        return bullets  # even one bullet: the request asks for that axis only
    for axes in (_heading_axes(request), _sentence_axes(request, terms, sequences)):
        if len(axes) >= 2:
            return axes
    return []
