"""The injection screen as it was before RE2 (pure Python ``re``, one search per pattern, a regex
tokeniser): the reference the engine (veille/steps/screen_engine.py) must agree with, scan for scan.

Slow on long texts (every pattern tries every position): for tests on short hostile texts only.
"""

from __future__ import annotations

import re

from veille.steps.screen import _BIBLIO_LINE, Scan, Signal, SourcesBlock, _Quoter, shape_of
from veille.steps.screen_engine import fold_chars
from veille.steps.screen_patterns import PATTERNS

__all__ = ["reference_fold", "reference_scan", "reference_tokens"]

_COMPILED = {kind: [re.compile(p) for p in patterns] for kind, patterns in PATTERNS.items()}
_LINE_BREAKS = re.compile(r"[\n\r]+")
_SOURCES_LABEL = re.compile(r"(?:^|\n)\s*(?:#{1,6}\s*)?(?:sources?|references|bibliographie|bibliography)\b")
_TOKEN = re.compile(r"([/\\]?)(?<![\w-])([a-z_-]*+\d[\w-]*)(\.[a-z][a-z0-9]{0,7}\b)?")


def reference_fold(text: str) -> str:
    """Fold line by line in Python (the former ``_fold_lines``)."""
    folded = []
    for line in _LINE_BREAKS.split(fold_chars(text)):
        if line := " ".join(line.split()):
            folded.append(line)
    return "\n".join(folded)


def reference_tokens(folded: str, start: int = 0, end: int | None = None) -> list[str]:
    """Every run holding a digit that is not a path, a file name or a plain number, in text order."""
    return [
        raw
        for before, raw, extension in _TOKEN.findall(folded, start, len(folded) if end is None else end)
        if not (before or extension or raw.replace("-", "").isdigit())
    ]


def _by_shape(tokens: list[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for raw in tokens:
        token = raw.strip("-_")
        shape = shape_of(token)
        if shape is None or len(seen := found.get(shape, ())) >= 2 or token in seen:
            continue
        found[shape] = (*seen, token)
    return found


def reference_scan(text: str) -> Scan:
    folded = reference_fold(text)
    quoter = _Quoter(text)
    signals = []
    for kind, patterns in _COMPILED.items():
        hits = [m for pattern in patterns if (m := pattern.search(folded))]
        if hits:
            first = min(hits, key=lambda m: m.start())
            signals.append(Signal(kind, quoter.quote(first.start(), first.end())))
    sources = []
    for label in _SOURCES_LABEL.finditer(folded):
        block_end = label.end() + len("\n".join(folded[label.end() : label.end() + 600].split("\n")[:6]))
        line_end = folded.find("\n", label.end())
        sources.append(
            SourcesBlock(
                excerpt=quoter.quote(label.start(), len(folded) if line_end < 0 else line_end),
                tokens=tuple(
                    t
                    for ts in _by_shape(reference_tokens(folded, label.end(), block_end)).values()
                    for t in ts
                ),
                bibliography=bool(_BIBLIO_LINE.search("\n" + folded[label.end() : block_end])),
            )
        )
    return Scan(tuple(signals), _by_shape(reference_tokens(folded)), tuple(sources))
