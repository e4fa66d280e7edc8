"""Report-shape helpers shared by the offline writer, critic and reviser.

Words, sentences and sections are measured with :mod:`veille.textstats` (the arbiter's own measures),
so a draft the offline writer or reviser calls compliant is compliant for the arbiter too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from veille.textstats import MODEL_SECTIONS, count_words, sentences, split_sections, words

__all__ = [
    "BULLET_RE",
    "CITE_TAIL_RE",
    "MODEL_SECTIONS",
    "bullets",
    "count_words",
    "ends_with_citation",
    "fit_sentence",
    "sentence_words",
    "sentences",
    "split_sections",
]

BULLET_RE = re.compile(r"^\s*[-*+]\s+(?P<text>.*)$")
CITE_TAIL_RE = re.compile(r"(\[\d+\])[\s.]*$")  # the arbiter's "bullet ends with its sources" test
_CITES_RE = re.compile(r"\[(\d+)\]")


def sentence_words(sentence: str) -> int:
    return len(words(sentence))


def bullets(section: str) -> list[str]:
    """Texts of the bullets of a section (continuation lines joined; a blank line or a heading ends
    a bullet)."""
    out: list[str] = []
    open_bullet = False
    for line in section.splitlines():
        match = BULLET_RE.match(line)
        if match:
            out.append(match.group("text").strip())
            open_bullet = True
        elif not line.strip() or line.lstrip().startswith("#"):
            open_bullet = False
        elif open_bullet:
            out[-1] = f"{out[-1]} {line.strip()}"
    return out


def ends_with_citation(bullet: str) -> bool:
    return CITE_TAIL_RE.search(bullet) is not None


# Where a long sentence may be cut, best first: strong punctuation, then commas, then conjunctions.
_CUTS: tuple[tuple[str, int], ...] = (
    (" ; ", 0),
    (" : ", 1),
    (", ", 2),
    (" et ", 3),
    (" mais ", 3),
    (" car ", 3),
    (" donc ", 3),
    (" puis ", 3),
    (" alors que ", 3),
    (" tandis que ", 3),
    (" avec ", 4),
    (" pour ", 4),
    (" sur ", 4),
    (" dans ", 4),
)


_ENDS_WITH_DIGIT_RE = re.compile(r"\d$")
# Words that lead into a figure or a range (« entre 8 et 11 », "from 2 to 4"): no cut right after.
_BEFORE_A_FIGURE = frozenset({"et", "à", "ou", "entre", "de", "des", "and", "to", "or", "between", "from"})


def _inside_figure(before: str, after: str) -> bool:
    """A cut between the words ``before`` and ``after`` would split a figure or a range."""
    if before[-1:].isdigit() and (after[:1].isdigit() or after in _BEFORE_A_FIGURE):
        return True
    return before in _BEFORE_A_FIGURE and after[:1].isdigit()


def _cut_points(text: str) -> list[tuple[int, int, int]]:
    """(priority, start, end) of separators outside parentheses and citation brackets."""
    out = []
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([«":
            depth += 1
        elif ch in ")]»":
            depth = max(0, depth - 1)
        if depth:
            continue
        for sep, priority in _CUTS:
            if text.startswith(sep, i):
                after = text[i + len(sep) : i + len(sep) + 1]
                if priority >= 2 and _ENDS_WITH_DIGIT_RE.search(text[:i]) and after.isdigit():
                    continue  # « entre 8 et 11 EUR », « 3, 4 ou 5 »: one range, not two clauses
                out.append((priority, i, i + len(sep)))
    return out


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def fit_sentence(
    sentence: str, max_words: int, count: Callable[[str], int] = sentence_words, min_part: int = 3
) -> list[str]:
    """Split ``sentence`` into sentences of at most ``max_words`` words, cutting at a semicolon,
    colon, comma or conjunction near the middle (each part at least ``min_part`` words). Parts
    keep their words verbatim; each ends with a period. A sentence without any cut point is
    cut between words."""
    text = sentence.strip()
    if count(text) <= max_words:
        return [text]
    end = text[-1] if text[-1] in ".!?…" else "."
    body = text.rstrip(".!?… ")
    total = count(body)
    best: tuple[float, int, int] | None = None
    for priority, start, stop in _cut_points(body):
        left, right = body[:start], body[stop:]
        n_left, n_right = count(left), count(right)
        if n_left < min_part or n_right < min_part:
            continue
        # Prefer balanced parts, then strong separators.
        cost = abs(n_left - total / 2) / max(total, 1) + 0.08 * priority
        if best is None or cost < best[0]:
            best = (cost, start, stop)
    if best is None:
        tokens = body.split()
        half = max(1, len(tokens) // 2)
        # Not inside a figure or a range (« 8 | 500 », « 8 500 | et 11 000 », « entre | 8 »).
        gaps = [n for n in range(1, len(tokens)) if not _inside_figure(tokens[n - 1], tokens[n])]
        half = min(gaps, key=lambda n: abs(n - half)) if gaps else half
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


def cited(text: str) -> list[int]:
    return list(dict.fromkeys(int(n) for n in _CITES_RE.findall(text)))
