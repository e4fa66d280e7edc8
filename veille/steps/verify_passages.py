"""Where a figure stands in a text, and to which subject that place gives it (issue 36, item 1).

Documents and dossier items are read the same way, by code: each figure (:func:`veille.numbers.read_numbers`,
role ``figure``) sits in nested units — its clause (the sentence cut at ``;``, ``, `` and words of contrast,
``veille/data/verify.toml``), its sentence, its block (a paragraph, a list item or a table row), for a table
row the header cell of its column, then the heading it stands under. The **subjects** of a figure are the
options (what the request compares) named in the smallest of those units that names any: « Kestrel
1 180 tokens/s contre 950 pour Tamaris » gives 950 to Tamaris, « | Qdrant | 35 ms | » gives 35 ms to Qdrant.
A figure whose units name no option belongs to the document's subject when its title names one option
alone, else to nobody.

Pure functions over strings; no I/O.
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import pairwise
from typing import Any

from pydantic import BaseModel

from veille.numbers import Reading, Unit, compatible, read_numbers
from veille.numberunits import duration_seconds
from veille.resources import data_file

__all__ = [
    "DocumentIndex",
    "Located",
    "SourceText",
    "figures",
    "option_mentions",
    "same_figure",
    "settings_value",
    "subjects_at",
]


class SourceText(BaseModel):
    """A numbered source with its text: what the verifier reads (a web page has none)."""

    number: int
    id: str
    title: str
    date: str
    text: str


@cache
def _settings() -> dict[str, Any]:
    with data_file("verify.toml").open("rb") as handle:
        return tomllib.load(handle)


def settings_value(section: str, key: str) -> Any:
    """A value of ``veille/data/verify.toml`` (each entry carries its reason)."""
    return _settings()[section][key]["value"]


@cache
def _fold_char(char: str) -> str:
    # Remembered per character (a text's alphabet is small): the verifier folds every cited document
    # at each write and review round, ~1,700 texts a warm night (issue 40 item 1).
    base = unicodedata.normalize("NFKD", char.casefold())
    kept = [c for c in base if not unicodedata.combining(c)]
    return kept[0] if kept else " "


def _fold(text: str) -> str:
    """Lower case without accents, one character for one (offsets stay those of ``text``)."""
    return "".join(map(_fold_char, text))


@cache
def _option_pattern(options: tuple[str, ...]) -> re.Pattern[str] | None:
    names = sorted({_fold(o.strip()) for o in options if o.strip()}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<![\w])(" + "|".join(re.escape(n) for n in names) + r")(?![\w])")


def option_mentions(text: str, options: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, option as the request writes it) of each mention of an option in ``text``."""
    pattern = _option_pattern(tuple(options))
    if pattern is None:
        return []
    by_fold = {_fold(o.strip()): o.strip() for o in options if o.strip()}
    return [(m.start(), m.end(), by_fold[m.group(1)]) for m in pattern.finditer(_fold(text))]


_PER_RE = re.compile(r"[ \u00a0\u202f]+(?:par|per|a|an)[ \u00a0\u202f]+([^\W\d_]+)")


def _rate(text: str, reading: Reading) -> Reading:
    """A counted rate in one spelling: « 1 400 tokens/s », « 1 400 tokens par seconde » and
    "1,400 tokens per second" are all ``token/1`` (per so many seconds), as a writer may reword it."""
    unit = reading.unit
    if unit is None or unit.kind != "count":
        return reading
    head, slash, per = unit.name.partition("/")
    if not slash and (match := _PER_RE.match(text, reading.end)) is not None:
        per = match.group(1)
    seconds = duration_seconds(per) if per else None
    if seconds is None:
        return reading
    return replace(reading, unit=Unit("count", f"{head}/{format(seconds.normalize(), 'f')}"))


def figures(text: str) -> list[Reading]:
    """The figures of ``text`` (years, dates, versions, ids and citation markers are no figures),
    counted rates in one spelling."""
    return [_rate(text, r) for r in read_numbers(text) if r.role == "figure"]


def _close(a: float, b: float) -> bool:
    tolerance = float(settings_value("figures", "relative_tolerance"))
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1.0)


def same_figure(claimed: Reading, found: Reading) -> bool:
    """``found`` (a document's) is the figure ``claimed`` (a dossier's): same value in base units
    (both ends of a range), units compatible (:func:`veille.numbers.compatible`)."""
    if not compatible(claimed.unit, found.unit):
        return False
    mine = [claimed.values]
    if claimed.alternative is not None and claimed.high is None:
        mine.append((claimed.alternative,))
    theirs = [found.values]
    if found.alternative is not None and found.high is None:
        theirs.append((found.alternative,))
    return any(
        len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
        for a in mine
        for b in theirs
    )


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[«\"(\[A-ZÀ-ÖØ-Þ0-9])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")


@cache
def _clause_re() -> re.Pattern[str]:
    separators = [str(s) for s in settings_value("clauses", "separators")]
    return re.compile(
        "|".join(re.escape(s) for s in sorted(separators, key=len, reverse=True)), re.IGNORECASE
    )


def _cut(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    spans, last = [], start
    for match in pattern.finditer(text, start, end):
        spans.append((last, match.start()))
        last = match.end()
    spans.append((last, end))
    return [(a, b) for a, b in spans if b > a]


def _inside(spans: Sequence[tuple[int, int]], position: int) -> tuple[int, int] | None:
    """The span of ``spans`` (sorted, disjoint) holding ``position`` (a bisection: long documents)."""
    i = bisect_right(spans, (position, float("inf"))) - 1
    return spans[i] if i >= 0 and spans[i][0] <= position < spans[i][1] else None


@dataclass
class _Block:
    start: int
    end: int
    row: bool = False
    cells: list[tuple[int, int]] = field(default_factory=list)
    header: list[tuple[int, int]] = field(default_factory=list)  # the header row's cells of its table
    heading: tuple[int, int] | None = None  # the heading it stands under
    table: tuple[int, int] | None = None  # a table's header row: the whole table's span
    sentences: list[tuple[int, int]] = field(default_factory=list)  # cut once (see _sentences)
    clauses: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)  # per sentence


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    bars = [start + i for i, c in enumerate(text[start:end]) if c == "|"]
    return [(a + 1, b) for a, b in pairwise(bars)]


def _blocks(text: str) -> list[_Block]:
    """Paragraphs, list items and table rows of ``text`` (offsets in it), each with its heading."""
    blocks: list[_Block] = []
    heading: tuple[int, int] | None = None
    header: list[tuple[int, int]] = []
    paragraph: list[tuple[int, int]] = []

    def flush() -> None:
        if paragraph:
            blocks.append(_Block(paragraph[0][0], paragraph[-1][1], heading=heading))
            paragraph.clear()

    position = 0
    for line in text.splitlines(keepends=True):
        start, end = position, position + len(line.rstrip("\r\n"))
        position += len(line)
        stripped = line.strip()
        if not stripped.startswith("|"):
            header = []
        if not stripped:
            flush()
        elif _HEADING.match(line):
            flush()
            heading = (start, end)
        elif stripped.startswith("|"):
            flush()
            if set(stripped) <= set("|-: "):
                continue  # the separator row
            cells = _cells(text, start, end)
            header = header or cells  # the first row is the header: its cells are the header
            blocks.append(_Block(start, end, row=True, cells=cells, header=header, heading=heading))
        elif _LIST_ITEM.match(line):
            flush()
            blocks.append(_Block(start, end, heading=heading))
        else:
            paragraph.append((start, end))
    flush()
    for block in blocks:  # a header states the condition of every row (« rappel à 10 »)
        if block.row and block.cells is block.header:
            rows = [b for b in blocks if b.row and b.header is block.cells]
            block.table = (block.start, max(b.end for b in rows))
    return blocks


@dataclass(frozen=True)
class Located:
    """A figure of a document: the reading, the options its place gives it to, the passage shown."""

    reading: Reading
    subjects: frozenset[str]
    passage: tuple[int, int]
    source: int = 0  # the document's source number


def _sentences(text: str, block: _Block) -> list[tuple[int, int]]:
    if not block.sentences:
        block.sentences = _cut(text, block.start, block.end, _SENTENCE_END) or [(block.start, block.end)]
    return block.sentences


def _units(text: str, block: _Block, position: int) -> list[tuple[int, int]]:
    """The units holding ``position``, smallest first (clause, sentence, block or cell, row, column
    header, heading)."""
    if block.row:
        cell = _inside(block.cells, position)
        units = [cell] if cell else []
        units.append(block.table or (block.start, block.end))
        if cell and block.header and block.header is not block.cells:
            column = block.cells.index(cell)
            if column < len(block.header):
                units.append(block.header[column])
    else:
        sentence = _inside(_sentences(text, block), position) or (block.start, block.end)
        if sentence not in block.clauses:
            block.clauses[sentence] = _cut(text, sentence[0], sentence[1], _clause_re())
        clause = _inside(block.clauses[sentence], position)
        units = [u for u in (clause, sentence, (block.start, block.end)) if u]
    if block.heading:
        units.append(block.heading)
    return units


def subjects_at(
    text: str, mentions: Sequence[tuple[int, int, str]], units: Sequence[tuple[int, int]]
) -> frozenset[str]:
    """The options named in the smallest of ``units`` that names any (none: empty); ``mentions``
    sorted by position (as :func:`option_mentions` returns them)."""
    for a, b in units:
        named = set()
        i = bisect_left(mentions, (a, -1, ""))  # mentions are sorted: only those from ``a`` on
        while i < len(mentions) and mentions[i][0] < b:
            if mentions[i][1] <= b:
                named.add(mentions[i][2])
            i += 1
        if named:
            return frozenset(named)
    return frozenset()


def _passage(text: str, block: _Block, position: int) -> tuple[int, int]:
    """What a reader is shown: the block, or its sentence when the block is long."""
    if block.row or block.end - block.start <= int(settings_value("figures", "max_passage_chars")):
        return block.start, block.end
    return _inside(_sentences(text, block), position) or (block.start, block.end)


def _bucket(value: float) -> float:
    """A value to as many significant digits as the tolerance allows: a bucket is at least as wide
    as the tolerance, so a value within it of another falls in its bucket or a neighbour's."""
    digits = max(1, int(-math.log10(float(settings_value("figures", "relative_tolerance")))))
    return float(f"{value:.{digits}g}")


_LINE_WRAP = re.compile(r"(?<=\S)\n(?=[^\W\d_])")  # a line break inside a sentence, before a word


class DocumentIndex:
    """A document's figures, each with its subjects and passage, read once."""

    def __init__(self, source: SourceText, options: Sequence[str]) -> None:
        self.source = source
        text = source.text
        mentions = option_mentions(text, options)
        titled = {o for _, _, o in option_mentions(source.title, options)}
        # The document is about one option alone when its title names it and no other.
        self.own_subject = frozenset(titled) if len(titled) == 1 else frozenset()
        blocks = _blocks(text)
        starts = [b.start for b in blocks]
        self.figures: list[Located] = []
        self._by_value: dict[float, list[Located]] | None = None
        # A paragraph wrapped over lines reads as one line (« roughly 11\nweeks »): same offsets.
        for reading in figures(_LINE_WRAP.sub(" ", text)):
            at = bisect_right(starts, reading.start) - 1
            block = blocks[at] if at >= 0 and reading.start < blocks[at].end else None
            if block is None:
                continue
            named = subjects_at(text, mentions, _units(text, block, reading.start))
            passage = _passage(text, block, reading.start)
            self.figures.append(Located(reading, named or self.own_subject, passage, source.number))
        self.sentences = [
            s for b in blocks for s in (_sentences(text, b) if not b.row else [(b.start, b.end)])
        ]

    def find(self, claimed: Reading, subjects: frozenset[str]) -> tuple[list[Located], list[Located]]:
        """(occurrences of ``claimed`` given to every one of ``subjects``, all its occurrences)."""
        if self._by_value is None:  # figures by their first value (and its other reading)
            self._by_value = {}
            for f in self.figures:
                for v in {f.reading.value, f.reading.alternative}:
                    if v is not None:
                        self._by_value.setdefault(_bucket(v), []).append(f)
        values = [v for v in (claimed.value, claimed.alternative) if v is not None]
        tolerance = float(settings_value("figures", "relative_tolerance"))
        keys = {_bucket(v * (1 + d)) for v in values for d in (-tolerance, 0.0, tolerance)}
        near = {id(f): f for k in keys for f in self._by_value.get(k, [])}
        found = [f for f in near.values() if same_figure(claimed, f.reading)]
        found.sort(key=lambda f: f.reading.start)
        return [f for f in found if subjects <= f.subjects], found

    def text(self, span: tuple[int, int]) -> str:
        return " ".join(self.source.text[span[0] : span[1]].split())
