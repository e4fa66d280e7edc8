"""Plain text into sentences, and a long sentence into shorter ones, never inside a figure, an
abbreviation, a version, an address or a file name.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (closing quotes and brackets included) followed
by a space and a capital, a digit or an opening quote. A period does not end one after an
abbreviation of the language files (``e.g.``, « M. », « p. ex. », ``Dr.``; veille/data/lang) or an
initial (« J. Martin »). ``72.23``, ``v1.2.3``, ``config.yaml`` and ``example.com/a.b`` hold no
space after their periods, so they are never cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from veille.offline import lexicon
from veille.offline.reading import UNREADABLE

__all__ = ["fit_clauses", "fit_sentence", "fit_text", "is_whole", "sentence_ends", "split_plain"]

_END_RE = re.compile(r"[.!?…]+[\"'»”’)\]]*(?=\s)")
_STARTS_RE = re.compile(r"\s+[«\"“‘(\[¿¡*_A-ZÀ-ÖØ-Þ0-9]")
_INITIAL_RE = re.compile(r"(?:^|[\s(«\"])[A-ZÀ-ÖØ-Þ]\.$")
_URL_RE = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_LETTER_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_WORD_COUNT_RE = re.compile(r"\w+(?:['’\-]\w+)*")


@cache
def _abbreviations() -> tuple[frozenset[str], frozenset[str]]:
    """(abbreviations matched with their case, abbreviations matched in any case): an entry
    written in lower case (``e.g.``, « cf. ») is one in any case, a capitalised one (« M. »,
    ``No.``) only so (« 5 m. » ends a sentence)."""
    entries = lexicon.entries("abbreviations")
    return frozenset(entries), frozenset(e for e in entries if e == e.lower())


def _ends_with_abbreviation(before: str) -> bool:
    exact, any_case = _abbreviations()
    lowered = before.lower()
    for entry in exact:
        if before.endswith(entry) or (entry in any_case and lowered.endswith(entry)):
            start = len(before) - len(entry)
            if start == 0 or not before[start - 1].isalnum():
                return True
    return bool(_INITIAL_RE.search(before))


def split_plain(text: str) -> list[str]:
    """Sentences of one block of plain text; a sentence holding unreadable markup is dropped."""
    text = re.sub(r"\s+", " ", text).strip()
    out: list[str] = []
    start = 0
    for match in _END_RE.finditer(text):
        if not _STARTS_RE.match(text, match.end()):
            continue
        if match.group(0) == "." and _ends_with_abbreviation(text[start : match.end()]):
            continue
        out.append(text[start : match.end()].strip())
        start = match.end()
    out.append(text[start:].strip())
    return [s for s in out if s and UNREADABLE not in s]


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence end of ``text`` as it is (line breaks kept), by
    :func:`split_plain`'s rules: a cut there never falls inside a sentence. The abbreviation check
    looks at the 40 characters before the period; an entry starting that window counts as an
    abbreviation (one missed end rather than one false cut)."""
    ends: list[int] = []
    for match in _END_RE.finditer(text):
        if not _STARTS_RE.match(text, match.end()):
            continue
        window = text[max(0, match.end() - 40) : match.end()]
        if match.group(0) == "." and _ends_with_abbreviation(window):
            continue
        ends.append(match.end())
    return ends


def is_whole(sentence: str, item: bool = False) -> bool:
    """``sentence`` is not the piece of a sentence its source interrupted (a list item that goes on
    in the next one, prose resumed after a code block, a sentence whose example was code): it
    neither starts in lower case with a function word (« were also accepted… », "to build…") nor
    ends with a function word or an abbreviation that announces more (``e.g.``, « cf. »). A list
    ``item`` may start in lower case (« - la latence reste sous 5 ms »)."""
    tokens = sentence.split()
    if len(_LETTER_WORD_RE.findall(_URL_RE.sub(" ", sentence))) < 2:
        return False  # an address or a label alone is not a sentence
    stop = lexicon.words("stop")
    first, last = tokens[0], tokens[-1]
    if not item and first[:1].islower() and lexicon.fold_entry(first.strip(",;:")) in stop:
        return False
    if lexicon.fold_entry(last.rstrip(",;:")) in stop and not last.endswith((".", "!", "?", "…")):
        return False
    closing = {
        *lexicon.groups("abbreviations", "en").get("closing", ()),
        *lexicon.groups("abbreviations", "fr").get("closing", ()),
    }
    return not (
        sentence.endswith(".") and not sentence.endswith(tuple(closing)) and _ends_with_abbreviation(sentence)
    )


def sentence_words(sentence: str) -> int:
    return len(_WORD_COUNT_RE.findall(sentence))


@cache
def _cuts() -> tuple[tuple[str, int], ...]:
    """Where a long sentence may be cut, best first: strong punctuation, colon, comma, clause
    conjunctions, prepositions (priority = the group's rank)."""
    order = ("strong", "colon", "comma", "clause_conjunctions", "prepositions")
    out: list[tuple[str, int]] = []
    for priority, group in enumerate(order):
        for lang in ("common", *lexicon.LANGS):
            for entry in lexicon.groups("sentence_cuts", lang).get(group, ()):
                out.append((f"{entry} " if priority < 3 else f" {entry} ", priority))
    return tuple(out)


def _figure_word(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


def _safe_gap(before: str, after: str) -> bool:
    """A cut between the words ``before`` and ``after`` leaves two readable parts: not between a
    figure and its unit or its range (« 72.23 | seconds », « 3 200 | et 4 100 »), not after a
    function word (« entre | 8 », "of | the"), not inside a quote."""
    key = lexicon.fold_entry(before.strip("«»\"'()[],;:"))
    if _figure_word(before) or _figure_word(after):
        return False
    if key in lexicon.words("stop") or key in lexicon.words("figure_leads"):
        return False
    return not before.endswith(("«", "(")) and not after.startswith(("»", ")"))


def _cut_points(text: str) -> list[tuple[int, int, int]]:
    """(priority, start, end) of separators outside parentheses, quotes and citation brackets."""
    out = []
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([«":
            depth += 1
        elif ch in ")]»":
            depth = max(0, depth - 1)
        if depth:
            continue
        for sep, priority in _cuts():
            if not text.startswith(sep, i):
                continue
            stop = i + len(sep)
            if _ends_with_abbreviation(text[:i].rstrip(",")):
                continue  # "such as e.g., …": the left part would end on an abbreviation
            if (
                priority >= 2
                and _figure_word(text[:i].rsplit(" ", 1)[-1])
                and _figure_word(text[stop:].split(" ", 1)[0])
            ):
                continue  # « entre 8 et 11 EUR », « 3, 4 ou 5 »: one range, not two clauses
            out.append((priority, i, stop))
    return out


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def fit_sentence(
    sentence: str, max_words: int, count: Callable[[str], int] = sentence_words, min_part: int | None = None
) -> list[str]:
    """Split ``sentence`` into sentences of at most ``max_words`` words, cutting at a semicolon,
    colon, comma or conjunction near the middle (each part at least ``min_part`` words). Parts
    keep their words verbatim; each ends with a period. Without such a separator the cut falls
    between two words that are neither a figure, its unit, nor a function word; a sentence
    without any such gap is returned whole."""
    min_part = int(lexicon.weight("reading.min_part_words")) if min_part is None else min_part
    text = sentence.strip()
    if count(text) <= max_words:
        return [text]
    end = text[-1] if text[-1] in ".!?…" else "."
    body = text.rstrip(".!?… ")
    total = count(body)
    best: tuple[float, int, int] | None = None
    weight = lexicon.weight("reading.cut_priority_cost")
    for priority, start, stop in _cut_points(body):
        left, right = body[:start], body[stop:]
        n_left, n_right = count(left), count(right)
        if n_left < min_part or n_right < min_part:
            continue
        cost = abs(n_left - total / 2) / max(total, 1) + weight * priority  # balanced, then strong
        if best is None or cost < best[0]:
            best = (cost, start, stop)
    if best is None:
        tokens = body.split(" ")
        gaps = [
            n
            for n in range(min_part, len(tokens) - min_part + 1)
            if _safe_gap(tokens[n - 1], tokens[n]) and count(" ".join(tokens[:n])) >= min_part
        ]
        if not gaps:
            return [text]
        half = min(gaps, key=lambda n: (abs(n - len(tokens) / 2), n))
        left, right = " ".join(tokens[:half]), " ".join(tokens[half:])
    else:
        _, start, stop = best
        left, right = body[:start], body[stop:]
        sep = body[start:stop].strip()
        if sep not in {";", ":", ","}:
            right = f"{sep} {right}"  # keep the conjunction ("Et…", "Mais…") so no word is lost
    left = left.rstrip(" ,;:") + "."
    right = _capitalise(right.strip()) + end
    return [*fit_sentence(left, max_words, count, min_part), *fit_sentence(right, max_words, count, min_part)]


def _clause_cuts(text: str) -> list[tuple[int, int]]:
    """(start, end) of the semicolons of ``text`` outside brackets and quotes: the one mark that
    joins two independent clauses. A comma before a conjunction does not: the conjunction may join
    a verbless phrase (« …, mais impossible de … », "…, but not …"), a piece of a sentence."""
    return [(start, stop) for priority, start, stop in _cut_points(text) if priority == 0]


def fit_clauses(
    sentence: str, max_words: int, count: Callable[[str], int] = sentence_words
) -> list[str] | None:
    """``sentence`` as sentences of at most ``max_words`` words cut only between clauses (at a
    semicolon), each part a sentence of its own; None when
    it cannot be cut so: the caller leaves it out rather than quote a piece of it."""
    text = sentence.strip()
    if count(text) <= max_words:
        return [text]
    end = text[-1] if text[-1] in ".!?…" else "."
    body = text.rstrip(".!?… ")
    min_part = int(lexicon.weight("reading.min_part_words"))
    options = [
        (abs(count(body[:a]) - count(body) / 2), a, b)
        for a, b in _clause_cuts(body)
        if count(body[:a]) >= min_part and count(body[b:]) >= min_part
    ]
    if not options:
        return None
    _, start, stop = min(options)
    left = fit_clauses(body[:start].rstrip(" ,;") + ".", max_words, count)
    right = fit_clauses(_capitalise(body[stop:].strip()) + end, max_words, count)
    return None if left is None or right is None else [*left, *right]


def fit_text(text: str, max_words: int, count: Callable[[str], int] = sentence_words) -> str:
    """Every sentence of ``text`` within ``max_words`` words, each ending with a period (the
    writer's and reviser's paragraphs)."""
    parts = [p for s in split_plain(text) for p in fit_sentence(s, max_words, count)]
    return " ".join(p if p.endswith((".", "!", "?", "…")) else p + "." for p in parts)
