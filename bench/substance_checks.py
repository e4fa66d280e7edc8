"""The checks of bench/substance.py: what a dossier says against what its cited documents say.

Deliberately independent of the pipeline's own verifier (whichever branch builds it): plain text in,
counts out. Figures are read with ``veille.numbers`` (the project's one number reader); everything
else (passages, subjects, citations, headings, dates) is read here from the rendered report.md and
the corpus files, so a defect of the pipeline cannot hide itself from the measure.

- **Passages** of a document: its paragraphs (blank-line separated), each table row and each list
  item on its own, after front matter and comment blocks are removed.
- A **figure** of the dossier is a ``role == "figure"`` reading of a sentence that cites sources
  (« [n] »); headings and uncited sentences are not checked (code-written framing such as « en 3
  volets » cites nothing). It is **unsupported** when no passage of a cited document holds the same
  value with a compatible unit, nor a figure written the same words at its place in the sentence; **misattributed** when it is found, but the subject the sentence
  gives it to (the nearest subject name before it in the sentence, else one just after) is named
  in none of the passages holding it, and no cited document is about that subject alone (its title
  names it and no other subject). A sentence naming no subject makes no attribution.
- A **file-clock date**: a cited source whose date is the day of its file's modification time
  (UTC) while the document itself has no date field.
- A **heading** is **cut** when it ends with « … » or « ... » or on a word no phrase ends on (a
  conjunction, preposition or article: « Ce qu'il fait et »), and **carries an id** when it holds
  ``st-<digit>``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from veille.numbers import Reading, compatible, read_numbers

__all__ = [
    "DATE_KEYS",
    "FigureCheck",
    "ReportSource",
    "check_figures",
    "cited_sentences",
    "document_body",
    "document_title",
    "file_clock_dates",
    "has_date_field",
    "heading_problems",
    "ledger_entries",
    "passages",
    "report_sources",
]

DATE_KEYS = ("date", "published", "publishdate", "pubdate", "created")
_CITE = re.compile(r"\[(\d+)\]")
_COMMENTS = re.compile(r"<!--.*?-->|\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}", re.S)
_SOURCE_LINE = re.compile(r"^- \[(\d+)\] \*\*([^*]+)\*\*(.*)$")
_ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")  # a table's |---|---| line
_ITEM = re.compile(r"\s*([-*+] |\d+[.)] )")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-ÖØ-Þ«\"“(\[\d])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")  # Markdown backslash escapes: « 99\.99 » reads 99.99


@dataclass(frozen=True)
class ReportSource:
    number: int
    doc_id: str
    date: str | None  # the YYYY-MM-DD the Sources list shows, if any


@dataclass
class FigureCheck:
    """Figures of one dossier: how many were checked, and the sentences of those that failed."""

    checked: int = 0
    unsupported: list[str] = field(default_factory=list)
    misattributed: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------- documents
def _split_front_matter(text: str) -> tuple[dict[str, object], str]:
    text = text.lstrip("\ufeff")
    for fence, load in (("---", yaml.safe_load), ("+++", tomllib.loads)):
        if text.startswith(fence + "\n"):
            end = text.find("\n" + fence, len(fence))
            if end != -1:
                try:
                    data = load(text[len(fence) + 1 : end]) or {}
                except Exception:  # unreadable front matter: no field at all, the body is what follows
                    data = {}
                body = text[end + len(fence) + 1 :]
                return (data if isinstance(data, dict) else {}), body
    return {}, text


def document_body(text: str) -> str:
    """The text after any front matter, without comment blocks."""
    return _COMMENTS.sub("", _split_front_matter(text)[1])


def document_title(text: str) -> str:
    """The front matter's title, else the first heading, else ''."""
    meta, body = _split_front_matter(text)
    if isinstance(meta.get("title"), str):
        return str(meta["title"])
    heading = re.search(r"^#+\s+(.+)$", body, re.M)
    return heading.group(1).strip() if heading else ""


def has_date_field(text: str) -> bool:
    """Whether the document states its own date in its front matter (any of :data:`DATE_KEYS`, any
    case) or in a Pelican header (``Date:`` among the first lines)."""
    meta, _ = _split_front_matter(text)
    if any(str(k).lower() in DATE_KEYS and v not in (None, "") for k, v in meta.items()):
        return True
    head = [line for line in text.lstrip("\ufeff").split("\n\n", 1)[0].splitlines() if line.strip()]
    if not head or not all(re.match(r"[A-Za-z][\w -]*:", line) for line in head):
        return False
    return any(re.match(r"date\s*:\s*\S", line, re.I) for line in head)


def passages(body: str, with_header: bool = True) -> list[str]:
    """Paragraphs, table rows and list items of ``body`` (see the module docstring); a table row
    carries its table's header line when ``with_header`` (a column names the measure)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", body):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if all(line.lstrip().startswith("|") for line in lines):  # a table: each row with its header
            rows = [line.strip() for line in lines if not _RULE.match(line)]
            out.extend(rows[:1] + [f"{rows[0]} {row}" if with_header else row for row in rows[1:]])
        elif any(_ITEM.match(line) for line in lines):
            out.extend(line.strip() for line in lines)  # each item (or line beside items) on its own
        else:
            out.append(" ".join(line.strip() for line in lines))
    return out


# ---------------------------------------------------------------------------------------- report
def report_sources(report: str) -> list[ReportSource]:
    """The numbered sources of a rendered report (its « ## Sources » list)."""
    _, _, tail = report.partition("\n## Sources")
    out = []
    for line in tail.splitlines():
        if match := _SOURCE_LINE.match(line.strip()):
            day = _ISO_DAY.search(match.group(3))
            out.append(
                ReportSource(int(match.group(1)), match.group(2).strip(), day.group(1) if day else None)
            )
    return out


def cited_sentences(report: str) -> list[tuple[str, list[int]]]:
    """Each sentence of the report's body (before « ## Sources », headings left out) that cites
    sources, with the numbers it cites: its own, else those of its list item or table row."""
    body = _ESCAPE.sub(r"\1", report.split("\n## Sources", 1)[0])
    out: list[tuple[str, list[int]]] = []
    text = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    for unit in passages(text, with_header=False):
        unit_numbers = [int(n) for n in _CITE.findall(unit)]
        if not unit_numbers:
            continue
        # An item or a table row cites for all its sentences (its markers close it); a paragraph's
        # sentence cites only what it carries (code-written framing sentences cite nothing).
        inherited = unit_numbers if _ITEM.match(unit) or unit.startswith("|") else []
        for sentence in _SENTENCE_END.split(unit):
            numbers = [int(n) for n in _CITE.findall(sentence)] or inherited
            if numbers:
                out.append((sentence, numbers))
    return out


def ledger_entries(report: str, section: str) -> list[tuple[list[int], list[int]]]:
    """(retained, rejected) source numbers of each entry of the ledger ``section`` of ``report``
    (« retenu : [2] ; écarté : [10][11] »); an entry written otherwise has all its numbers retained."""
    match = re.search(rf"^## {re.escape(section)}\s*$(.*?)(?=^## |\Z)", report, re.M | re.S)
    out = []
    for item in passages(match.group(1)) if match else []:
        kept = re.search(r"retenu\s*:\s*((?:\[\d+\])+)", item)
        dropped = re.search(r"écarté\s*:\s*((?:\[\d+\])+)", item)
        if kept and dropped:
            out.append(
                (
                    [int(n) for n in _CITE.findall(kept.group(1))],
                    [int(n) for n in _CITE.findall(dropped.group(1))],
                )
            )
        elif numbers := [int(n) for n in _CITE.findall(item)]:
            out.append((numbers, []))
    return out


# A phrase does not end on these: a heading that does was cut without saying so (« Ce qu'il fait et »).
_DANGLING = frozenset(
    [
        "et",
        "ou",
        "de",
        "des",
        "du",
        "d",
        "la",
        "le",
        "les",
        "l",
        "un",
        "une",
        "à",
        "au",
        "aux",
        "pour",
        "sur",
        "par",
        "avec",
        "dans",
        "en",
        "que",
        "qui",
        "ni",
        "and",
        "or",
        "of",
        "the",
        "a",
        "an",
        "to",
        "for",
        "on",
        "with",
        "in",
        "by",
    ]
)


def _dangling(heading: str) -> bool:
    words = re.findall(r"[\w']+", heading.lower())
    return bool(words) and words[-1].split("'")[-1] in _DANGLING


def heading_problems(report: str) -> tuple[list[str], list[str]]:
    """The headings of ``report`` that are cut (« … », or ending on a word no phrase ends on), and
    those that carry an internal id."""
    headings = [line.strip() for line in report.splitlines() if line.lstrip().startswith("#")]
    cut = [h for h in headings if h.rstrip().endswith(("…", "...")) or _dangling(h)]
    ids = [h for h in headings if re.search(r"\bst-\d", h)]
    return cut, ids


def file_clock_dates(sources: Iterable[ReportSource], files: Mapping[str, Path]) -> list[str]:
    """Ids of cited documents dated by their file's clock: the date shown is the UTC day of the
    file's modification time and the document has no date field of its own."""
    out = []
    for source in sources:
        path = files.get(source.doc_id)
        if path is None or source.date is None:
            continue
        mtime_day = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).date().isoformat()
        if source.date == mtime_day and not has_date_field(path.read_text(encoding="utf-8")):
            out.append(source.doc_id)
    return sorted(set(out))


# --------------------------------------------------------------------------------------- figures
def _alias_pattern(alias: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(alias)}(?![\w-])")


def _named(text: str, subjects: Mapping[str, Sequence[str]]) -> list[tuple[int, str]]:
    """(position, subject) of every subject alias occurring in ``text``."""
    return sorted(
        (m.start(), name)
        for name, aliases in subjects.items()
        for alias in aliases
        for m in _alias_pattern(alias).finditer(text)
    )


_AFTER = 30  # characters: « 35 ms pour Qdrant » gives 35 ms to Qdrant; a name further on is another clause's


def _subject_of(figure: Reading, named: Sequence[tuple[int, str]]) -> str | None:
    before = [name for pos, name in named if pos < figure.start]
    if before:
        return before[-1]
    after = [name for pos, name in named if figure.end <= pos <= figure.end + _AFTER]
    return after[0] if after else None


def _written(r: Reading) -> tuple[float, ...]:
    """The numbers as written, before unit and multiplier (« 12 ms » → 12, not 0.012 s)."""
    digits = re.match(r"[-\u2212\u2013]?[\d\s\u00a0\u202f\u2009.,'’]*\d", r.text)
    if digits is None or (r.unit is None and r.multiplier == 1):
        return r.values
    bare = [x for x in read_numbers(digits.group(0).strip()) if x.role == "figure"]
    return bare[0].values if bare else r.values


def _same_figure(a: Reading, b: Reading) -> bool:
    """``b`` (of a document) is the figure ``a`` (of the dossier): same value with a compatible unit.
    ``b`` may have any role: « 17 » of « Aug. 17, 2016 » is a date's day there, but the dossier
    quoting « 17, 2016 » does not invent it."""
    if b.role == "citation" or not compatible(a.unit, b.unit):
        return False
    both = a.unit is not None and b.unit is not None  # same unit: compare in base units
    xs, ys = (a.values, b.values) if both else (_written(a), _written(b))
    return any(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x in xs for y in ys)


def _verbatim(passage: str, sentence: str) -> list[tuple[int, int]]:
    """Spans of ``sentence`` where a figure of ``passage`` occurs as written (« 5 h 10 »): the
    same words, whatever the two contexts make the number reader read (« 5 h 10 retenu » alone
    reads 5 h and 10 « retenu »)."""
    spans = []
    for r in read_numbers(passage):
        if r.role == "figure" and len(r.text) > 1:
            pattern = rf"(?<![\d.,]){re.escape(r.text)}(?![\d]|[.,]\d)"
            spans += [(m.start(), m.end()) for m in re.finditer(pattern, sentence)]
    return spans


def _holds(passage: str, figure: Reading, sentence: str = "") -> bool:
    if any(_same_figure(figure, r) for r in read_numbers(passage)):
        return True
    return any(a < figure.end and figure.start < b for a, b in _verbatim(passage, sentence))


def check_figures(
    report: str,
    cited_docs: Mapping[int, tuple[str, str]],
    subjects: Mapping[str, Sequence[str]],
) -> FigureCheck:
    """Every figure of a cited sentence of ``report`` against the documents it cites.

    ``cited_docs`` maps a source number to that document's (title, body); ``subjects`` maps each
    subject to the names a sentence may give it by (see the module docstring for the rules)."""
    result = FigureCheck()
    for sentence, numbers in cited_sentences(report):
        figures = [r for r in read_numbers(sentence) if r.role == "figure"]
        if not figures:
            continue
        docs = [cited_docs[n] for n in numbers if n in cited_docs]
        named = _named(sentence, subjects)
        for figure in figures:
            result.checked += 1
            holding = [
                (title, p) for title, body in docs for p in passages(body) if _holds(p, figure, sentence)
            ]
            if not holding:
                result.unsupported.append(sentence.strip())
                continue
            subject = _subject_of(figure, named)
            if subject is None:
                continue
            aliases = [_alias_pattern(a) for a in subjects[subject]]
            if any(a.search(p) for _, p in holding for a in aliases):
                continue
            alone = any({name for _, name in _named(title, subjects)} == {subject} for title, _ in holding)
            if not alone:
                result.misattributed.append(sentence.strip())
    return result
