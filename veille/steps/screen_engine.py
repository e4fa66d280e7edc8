"""The injection screen's text engine: folding, and matching in one linear pass per text.

Python's ``re`` backtracks and tries every position of a text for each pattern: on a 19 KB document the
phrase patterns cost ~15 ms when they all run, the id-token expression ~1 ms (bench/screen_scale.py). RE2
(google-re2, Google's linear-time engine) runs a whole set of patterns as one automaton over the text, so
the screen does:

- one RE2 search of every phrase pattern at once; only when it finds something (rare), one search per
  kind for the position of its first match — the same leftmost-first span Python's ``re`` gives, since
  the patterns use no construct where RE2 and ``re`` differ on folded (ASCII, one space) text;
- one RE2 pass for the runs holding a letter and a digit (the only runs that can be ids), with what
  surrounds each checked in Python: a handful per document instead of the ~300 number runs of a page.

``tests/test_screen_engine.py`` checks both against the former pure-``re`` screen on hostile text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import re2

from veille.steps.screen_patterns import PATTERNS

__all__ = ["first_matches", "fold", "fold_chars", "fold_lines", "id_tokens", "sources_labels"]

# Typographic look-alikes folded to ASCII before the rest is dropped: apostrophes, then dashes.
_LOOK_ALIKES = (("’‘`´", "'"), ("—–‒―", "-"))
_LINE_BREAKS = re.compile(r"[\n\r]+")

_OPTIONS = re2.Options()
# RE2's default budget, stated: it bounds each automaton's memory (~80 MB for the ten here at worst). Past it,
# on adversarial text only, RE2 logs "DFA out of memory" to stderr and finishes with its NFA: slower, still
# linear and exact (`bench/screen_scale.py --hostile`: 3.2 MB of trigger words, 4.6 s CPU, the former screen 3.5 s).
_OPTIONS.max_mem = 8 << 20


def _compile(pattern: str) -> Any:  # re2 ships no type information
    return re2.compile(pattern.encode("ascii"), _OPTIONS)


_ANY_PHRASE = _compile("|".join(f"(?:{p})" for patterns in PATTERNS.values() for p in patterns))
_BY_KIND = {kind: _compile("|".join(f"(?:{p})" for p in patterns)) for kind, patterns in PATTERNS.items()}
# A run of word characters and hyphens holding a digit, with a letter before its first digit (all letters
# there lowercase: a run starting "H1" is no id token) or after it.
_ID_RUN = _compile(r"[a-z_-]*[a-z][a-z_-]*\d[\w-]*|[_-]*\d[\w-]*[a-zA-Z][\w-]*")
# A "Sources" / "Références" label (heading or "Sources :").
_SOURCES_LABEL = _compile(r"(?:^|\n)\s*(?:#{1,6}\s*)?(?:sources?|references|bibliographie|bibliography)\b")
# A file extension after a token (``doc-12.md``): the token is a file name, not an id in prose.
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,7}\b")
# The reference tokeniser (every run holding a digit, with its path prefix and extension), used only around
# a run preceded by "." — whether a previous token's extension swallowed it depends on the whole line.
_TOKEN = re.compile(r"([/\\]?)(?<![\w-])([a-z_-]*+\d[\w-]*)(\.[a-z][a-z0-9]{0,7}\b)?")
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def fold_chars(text: str) -> str:
    """Lowercase ASCII: accents and every other non-ASCII character (invisible ones included) dropped.

    The patterns are ASCII, so nothing they look for is lost; NFKD first turns "é" into "e" and a
    no-break space into a space.
    """
    for variants, ascii_char in _LOOK_ALIKES:
        for char in variants:  # str.replace is far faster than str.translate on long texts
            text = text.replace(char, ascii_char)
    return unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()


def fold_lines(text: str) -> tuple[str, list[int]]:
    """:func:`fold`, with, for each folded line, the index of the original line (split on line breaks) it
    comes from (to quote the original text)."""
    folded: list[str] = []
    origin: list[int] = []
    for index, line in enumerate(_LINE_BREAKS.split(fold_chars(text))):
        line = " ".join(line.split())
        if line:
            folded.append(line)
            origin.append(index)
    return "\n".join(folded), origin


def fold(text: str) -> str:
    """:func:`fold_chars`, one space between words, one line break between non-blank lines.

    The per-line work runs in C (``map`` of built-in methods): no Python code per line.
    """
    lines = fold_chars(text).replace("\r", "\n").split("\n")
    return "\n".join(filter(None, map(" ".join, map(str.split, lines))))


def first_matches(folded: bytes) -> dict[str, tuple[int, int]]:
    """Kind -> span of the kind's first match in ``folded`` (ASCII), for the kinds that match, in
    :data:`PATTERNS` order. Ties at one position go to the pattern listed first, as a search per pattern
    keeping the earliest would."""
    if _ANY_PHRASE.search(folded) is None:
        return {}
    return {kind: m.span() for kind, regex in _BY_KIND.items() if (m := regex.search(folded)) is not None}


def sources_labels(folded: bytes) -> list[tuple[int, int]]:
    """Spans of the "Sources" labels of ``folded`` (ASCII), in text order."""
    return [m.span() for m in _SOURCES_LABEL.finditer(folded)]


def _line_tokens(text: str, start: int, run_start: int) -> tuple[int, dict[int, str | None]]:
    """The reference tokeniser over the line holding ``run_start`` (from ``start`` at the earliest): where
    the line ends, and each token's start -> the token, or None when it is part of a path or a file name."""
    line_end = text.find("\n", run_start)
    line_end = len(text) if line_end < 0 else line_end
    found: dict[int, str | None] = {}
    for match in _TOKEN.finditer(text, max(start, text.rfind("\n", 0, run_start) + 1), line_end):
        before, raw, extension = match.groups()
        found[match.start(2)] = None if before or extension else raw
    return line_end, found


def id_tokens(text: str, data: bytes, start: int = 0) -> list[str]:
    """The runs of ``text[start:]`` holding a letter and a digit that stand in prose (not after "/" or
    "\\", not followed by a file extension), in text order; ``data`` is ``text`` encoded (ASCII).

    The same tokens, in the same order, as the reference tokeniser's runs that have a letter.
    """
    found = []
    line: tuple[int, dict[int, str | None]] = (-1, {})  # end and tokens of the last line read
    for match in _ID_RUN.finditer(data, max(0, start - 1)):  # from start - 1: a run may begin at start
        run_start, run_end = match.span()
        if run_start < start:  # the char before start matched: start is inside a run
            continue
        before = text[run_start - 1] if run_start else " "
        if before in _RUN_CHARS:  # inside a run, not its start
            continue
        if run_start > start and (before == "/" or before == "\\"):  # a path
            continue
        if before == ".":  # maybe the extension of the token before it: read the line as the reference does
            if run_start >= line[0]:  # once per line (runs come in text order): linear in the text
                line = _line_tokens(text, start, run_start)
            if (token := line[1].get(run_start)) is not None:
                found.append(token)
            continue
        if _EXTENSION.match(text, run_end) is None:
            found.append(text[run_start:run_end])
    return found
