"""Sections of long documents, and the choice of the sections worth reading within a token budget.

:func:`split_sections` cuts a body at its Markdown headings (outside code fences), then cuts any part
still over ``max_tokens`` at paragraph boundaries. :func:`select_sections` is pure: all of a document
while it fits the budget, else the sections most relevant to the question (BM25 via ``bm25s``, the
same lexical relevance as the catalogue shortlist) in reading order, and how much was read.
:func:`text_fingerprint` gives the exact-copy hash and a paragraph sketch for near-duplicates.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veille.tokens import estimate_tokens

__all__ = [
    "DEFAULT_SECTION_TOKENS",
    "SKETCH_SIZE",
    "Reading",
    "Section",
    "Selection",
    "change_digests",
    "heading_paths",
    "paragraphs",
    "read_within_budget",
    "section_digest",
    "section_digests",
    "select_sections",
    "sketch_similarity",
    "split_sections",
    "text_fingerprint",
]

DEFAULT_SECTION_TOKENS = 800
SKETCH_SIZE = 16
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Section:
    n: int
    heading: str | None
    start: int  # character offset in the body
    length: int
    tokens: int

    def text(self, body: str) -> str:
        return body[self.start : self.start + self.length]


def _heading_starts(body: str) -> list[tuple[int, str]]:
    starts: list[tuple[int, str]] = []
    offset, fenced = 0, False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)) is not None:
            starts.append((offset, " ".join(match.group(2).split())[:200]))
        offset += len(line) + 1
    return starts


def _paragraph_cuts(body: str, start: int, end: int, max_tokens: int) -> list[int]:
    """Offsets in [start, end) where a part over ``max_tokens`` is cut (after a blank line)."""
    cuts: list[int] = []
    limit = max_tokens * 4  # characters (veille.tokens: 4 per token)
    part_start = start
    for match in re.finditer(r"\n[ \t]*\n", body[start:end]):
        cut = start + match.end()
        if cut - part_start >= limit:
            cuts.append(cut)
            part_start = cut
    return cuts


def split_sections(body: str, *, max_tokens: int = DEFAULT_SECTION_TOKENS) -> list[Section]:
    """Sections in reading order covering the whole body (heading parts, long ones cut at paragraphs)."""
    if not body:
        return []
    starts = _heading_starts(body)
    bounds: list[tuple[int, str | None]] = [(s, h) for s, h in starts]
    if not bounds or bounds[0][0] > 0:
        bounds.insert(0, (0, None))  # text before the first heading
    sections: list[Section] = []
    for k, (start, heading) in enumerate(bounds):
        end = bounds[k + 1][0] if k + 1 < len(bounds) else len(body)
        edges = [start, *_paragraph_cuts(body, start, end, max_tokens), end]
        for a, b in itertools.pairwise(edges):
            if b > a:
                text = body[a:b]
                sections.append(Section(len(sections), heading, a, b - a, estimate_tokens(text)))
    return sections


@dataclass(frozen=True)
class Selection:
    """Sections chosen (their numbers, reading order), tokens read and the document's total."""

    chosen: tuple[int, ...]
    tokens_read: int
    tokens_total: int

    @property
    def whole(self) -> bool:
        return self.tokens_read >= self.tokens_total


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()
    return [w[:6] for w in _WORD.findall(folded) if len(w) > 2]


def select_sections(texts: Sequence[str], tokens: Sequence[int], question: str, budget: int) -> Selection:
    """The sections (given as their texts and token counts) to read for ``question`` within ``budget``:
    all when they fit; else by BM25 relevance, best first, each one that still fits; reading order kept.
    Never over ``budget``: a section larger than the budget is not chosen (nothing may be)."""
    total = sum(tokens)
    if total <= budget or not texts:
        return Selection(tuple(range(len(texts))), total, total)
    order = _by_relevance(texts, question)
    chosen: list[int] = []
    used = 0
    for i in order:
        if used + tokens[i] <= budget:
            chosen.append(i)
            used += tokens[i]
    return Selection(tuple(sorted(chosen)), used, total)


def _by_relevance(texts: Sequence[str], question: str) -> list[int]:
    """Indices of ``texts``, most relevant to ``question`` first (BM25), reading order on ties."""
    import bm25s  # numpy-backed; imported when a long document is met

    retriever = bm25s.BM25()
    retriever.index([_words(t) or ["_"] for t in texts], show_progress=False)
    scores = retriever.get_scores(_words(question) or ["_"])
    return sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))


def heading_paths(body: str, sections: Sequence[Section]) -> list[tuple[str, ...]]:
    """For each of ``sections`` (:func:`split_sections` of ``body``), the heading lines that enclose
    it, outermost first (« # Titre », « ## Partie »), its own opening heading line excluded: what a
    reader shown that section alone needs to know what its figures are about."""
    levelled: list[tuple[int, int, str]] = []  # (offset, level, heading line)
    for offset, _ in _heading_starts(body):
        line = body[offset:].split("\n", 1)[0].strip()
        match = _HEADING.match(line)
        if match is not None:
            levelled.append((offset, len(match.group(1)), line))
    out: list[tuple[str, ...]] = []
    for section in sections:
        stack: list[tuple[int, str]] = []
        for offset, level, line in levelled:
            if offset >= section.start:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, line))
        if any(offset == section.start for offset, _, _ in levelled):
            level = next(lv for offset, lv, _ in levelled if offset == section.start)
            stack = [(lv, line) for lv, line in stack if lv < level]  # its parents only
        out.append(tuple(line for _, line in stack))
    return out


def section_digest(text: str) -> str:
    """A section's digest: sha256 of its whitespace-separated words (a re-wrapped or re-spaced
    section is the same section; any changed word, figure or heading is another)."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:32]


def paragraphs(body: str, sections: Sequence[Section] | None = None) -> list[tuple[int, Section]]:
    """Each section of ``body`` (:func:`split_sections` unless given) cut at its blank lines outside
    code fences: the pieces an edit is found in (a heading alone is a piece), each with the number of
    its section, numbered in reading order. An appended sentence changes its own paragraph only,
    where the section it joins would be changed whole (issue 40: the update reads what changed)."""
    out: list[tuple[int, Section]] = []
    for section in split_sections(body) if sections is None else sections:
        end = section.start + section.length
        offset, fenced, start = section.start, False, None
        for line in body[section.start : end].split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            if not line.strip() and not fenced:
                if start is not None:
                    out.append((section.n, _piece(body, len(out), section.heading, start, offset)))
                start = None
            elif start is None:
                start = offset
            offset += len(line) + 1
        if start is not None:
            out.append((section.n, _piece(body, len(out), section.heading, start, min(offset, end))))
    return out


def _piece(body: str, n: int, heading: str | None, start: int, end: int) -> Section:
    return Section(n, heading, start, end - start, estimate_tokens(body[start:end]))


def change_digests(body: str) -> list[str]:
    """The digest of each paragraph of ``body`` (:func:`paragraphs`), in reading order: kept at
    ingest for each version of a document, so a later night knows which paragraphs an edit changed
    (veille/steps/edited_sections.py)."""
    return [section_digest(p.text(body)) for _, p in paragraphs(body)]


def section_digests(body: str) -> list[str]:
    """The digest of each section of ``body`` (:func:`split_sections`), in reading order: kept at
    ingest for each version of a document, so a later night knows which sections an edit changed."""
    return [section_digest(s.text(body)) for s in split_sections(body)]


# -------------------------------------------------------------------------------------------- copies
def text_fingerprint(body: str) -> tuple[str, list[int]]:
    """(sha256 of the text's casefolded words: the same text in another layout or file; the
    SKETCH_SIZE smallest 64-bit hashes of its paragraphs of five words or more: a bottom-k sketch whose
    overlap estimates how many paragraphs two documents share). Words are whitespace-separated (str.split
    runs at C speed: a 20 KB text costs well under a millisecond)."""
    folded = body.casefold()
    exact = hashlib.sha256(" ".join(folded.split()).encode()).hexdigest()
    hashes: set[int] = set()
    for paragraph in folded.split("\n\n"):
        words = paragraph.split()
        if len(words) >= 5:
            digest = hashlib.blake2b(" ".join(words).encode(), digest_size=8).digest()
            hashes.add(int.from_bytes(digest, "big"))
    return exact, sorted(hashes)[:SKETCH_SIZE]


def sketch_similarity(a: Sequence[int], b: Sequence[int]) -> float:
    """Estimated Jaccard similarity of two paragraph sets from their bottom-k sketches."""
    if not a or not b:
        return 0.0
    k = min(SKETCH_SIZE, len(set(a) | set(b)))
    union = sorted(set(a) | set(b))[:k]
    both = set(a) & set(b)
    return sum(1 for h in union if h in both) / k


@dataclass(frozen=True)
class Reading:
    """What an analyst reads of one document: the text (whole, or its chosen passages joined by
    ``[…]``), its estimated tokens and the document's, and whether it is the whole document."""

    text: str
    tokens_read: int
    tokens_total: int
    whole: bool


_GAP = "\n\n[…]\n\n"
_GAP_TOKENS = estimate_tokens(_GAP)


def _sentence_pieces(body: str, section: Section, max_tokens: int) -> list[tuple[int, int]]:
    """``section`` as (start, end) spans of whole sentences of at most ``max_tokens`` each, when it
    is over that; a single sentence over it stays one span (too long to be read within a share)."""
    if section.tokens <= max_tokens:
        return [(section.start, section.start + section.length)]
    from veille.offline.sentences import sentence_ends  # its abbreviation lists load on first use

    text = section.text(body)
    limit = max_tokens * 4  # characters (veille.tokens: 4 per token)
    spans: list[tuple[int, int]] = []
    piece_start = last_end = 0
    for end in [*sentence_ends(text), len(text)]:
        if end - piece_start > limit and last_end > piece_start:
            spans.append((piece_start, last_end))
            piece_start = last_end
        last_end = end
    spans.append((piece_start, len(text)))
    return [(section.start + a, section.start + b) for a, b in spans if text[a:b].strip()]


def _read_part(body: str, question: str, share: int) -> Reading:
    """The passages of ``body`` most relevant to ``question`` whose joined text is estimated at
    ``share`` tokens at most: sections, cut at paragraphs, then at sentence ends; never inside a
    sentence, so a sentence longer than the share is left out (the text may be empty)."""
    limit = max(1, min(DEFAULT_SECTION_TOKENS, share))
    spans = [span for s in split_sections(body) for span in _sentence_pieces(body, s, limit)]
    texts = [body[a:b].strip() for a, b in spans]
    # Each passage after the first costs the gap too; ceil(x/4) + ceil(y/4) >= ceil((x+y)/4) makes
    # the joined text's estimate at most the sum of these costs.
    costs = [estimate_tokens(t) + _GAP_TOKENS for t in texts]
    chosen = sorted(select_sections(texts, costs, question, share + _GAP_TOKENS).chosen) if texts else []
    text = _GAP.join(texts[i] for i in chosen)
    return Reading(text, estimate_tokens(text), estimate_tokens(body), whole=False)


def read_within_budget(bodies: Mapping[str, str], question: str, budget: int) -> dict[str, Reading]:
    """Each document whole while all fit ``budget`` tokens; else the budget shared out (shortest
    documents first: a short one takes what it needs, the rest goes to the longer ones) and each long
    document read through its passages most relevant to ``question``. Structural bound: the texts'
    estimated tokens add up to ``budget`` at most, whatever the documents' sizes and shapes. Pure."""
    total = {doc_id: estimate_tokens(body) for doc_id, body in bodies.items()}
    if sum(total.values()) <= budget:
        return {d: Reading(body, total[d], total[d], whole=True) for d, body in bodies.items()}
    out: dict[str, Reading] = {}
    left, pending = budget, sorted(bodies, key=lambda d: (total[d], d))
    while pending:
        doc_id = pending.pop(0)
        share = left // (len(pending) + 1)
        body = bodies[doc_id]
        if total[doc_id] <= share:
            out[doc_id] = Reading(body, total[doc_id], total[doc_id], whole=True)
        else:
            out[doc_id] = _read_part(body, question, share)
        left -= out[doc_id].tokens_read
    return out
