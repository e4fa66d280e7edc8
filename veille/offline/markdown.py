"""Report-shape helpers of the offline writer, critic and reviser, measured with
:mod:`veille.textstats` (the arbiter's own), so a draft they call compliant is compliant for it too."""

from __future__ import annotations

import re
from collections.abc import Callable

from veille.offline import sentences as sentences_module
from veille.textstats import MODEL_SECTIONS, count_words, sentences, split_sections, words

__all__ = [
    "MODEL_SECTIONS",
    "bullets",
    "count_words",
    "ends_with_citation",
    "fit_clauses",
    "sentence_words",
    "sentences",
    "split_sections",
]

_BULLET_RE = re.compile(r"^\s*[-*+]\s+(?P<text>.*)$")
_CITE_TAIL_RE = re.compile(r"(\[\d+\])[\s.]*$")  # the arbiter's "bullet ends with its sources" test
_CITES_RE = re.compile(r"\[(\d+)\]")


def sentence_words(sentence: str) -> int:
    return len(words(sentence))


def bullets(section: str) -> list[str]:
    """Texts of the bullets of a section (continuation lines joined; a blank line or heading ends one)."""
    out: list[str] = []
    open_bullet = False
    for line in section.splitlines():
        match = _BULLET_RE.match(line)
        if match:
            out.append(match.group("text").strip())
            open_bullet = True
        elif not line.strip() or line.lstrip().startswith("#"):
            open_bullet = False
        elif open_bullet:
            out[-1] = f"{out[-1]} {line.strip()}"
    return out


def ends_with_citation(bullet: str) -> bool:
    return _CITE_TAIL_RE.search(bullet) is not None


def fit_clauses(
    sentence: str, max_words: int, count: Callable[[str], int] = sentence_words
) -> list[str] | None:
    """:func:`veille.offline.sentences.fit_clauses` with the arbiter's word count."""
    return sentences_module.fit_clauses(sentence, max_words, count)


def cited(text: str) -> list[int]:
    return list(dict.fromkeys(int(n) for n in _CITES_RE.findall(text)))
