"""The request's language as a hard criterion of the grid (issue 36 item 4), for every backend.

The arbiter (veille.arbiter) adds these instructions to its hard checks; a dossier with one of
them is never validated, whatever the critic scored:

- **the prose is in the request's language**: the dossier's sentences, quotations left out, are
  judged together (:func:`veille.language.prose_language`: only past its word minimum and when the
  identifier is confident, precision first);
- **a foreign passage is a marked quotation inside a sentence in the request's language**: a
  sentence holding a quotation marked with another language, « … » (en), has at least
  ``grid.min_quote_frame_words`` words of its own around it (who says it, when) — a quotation
  standing alone as a sentence is a document's words presented as the dossier's;
- **within a bounded share of each section**: the words of such quotations are at most
  ``grid.max_quoted_share`` of each of the five sections' words.

Pure text; imports nothing of veille but the text measures and the language identifier.
"""

from __future__ import annotations

import re

from veille.grid import Grid
from veille.language import prose_language
from veille.textstats import MODEL_SECTIONS, SENTENCE_START_WORDS, count_words, sentences, split_sections

__all__ = ["foreign_quotes", "language_instructions", "unframed_instructions", "unframed_quotes"]

# A quotation marked with its language (veille.language.mark_quotations, the offline writer).
_MARKED_RE = re.compile(r"«([^«»]*)»\s*\(([a-z]{2})\)")
_PLACE = "\u2063"  # one character standing for a marked quotation while sentences are split
_QUOTED_RE = re.compile(r"«[^«»]*»|“[^”]*”|\[\d+\]")  # other quotations (titles), citations
_TITLE_RE = re.compile(r"«[^«»]*»")  # other quotations: a title, words quoted in the request's language
_OWN_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+")


def foreign_quotes(text: str, language: str) -> list[str]:
    """The quotations of ``text`` marked with a language other than ``language``."""
    return [m.group(1).strip() for m in _MARKED_RE.finditer(text) if m.group(2) != language]


def unframed_quotes(line: str, language: str, min_words: int) -> list[str]:
    """The foreign quotations of ``line`` whose sentence has fewer than ``min_words`` words of its
    own (letters only; other quotations such as a title, and citations, are not its own words)."""
    quotes: list[str] = []

    def hold(match: re.Match[str]) -> str:
        if match.group(2) == language:
            return match.group(0)
        quotes.append(match.group(1).strip())
        return _PLACE

    held = _MARKED_RE.sub(hold, line)
    held = _TITLE_RE.sub("«»", held)  # a quoted title's own period (« Node.js 21 is out. ») ends no sentence
    out = []
    index = 0
    for sentence in _SENTENCE_RE.split(held):
        count = sentence.count(_PLACE)
        if not count:
            continue
        own = _OWN_WORD_RE.findall(_QUOTED_RE.sub(" ", sentence.replace(_PLACE, " ")))
        if len(own) < min_words:
            out += quotes[index : index + count]
        index += count
    return out


def _start(text: str) -> str:
    return " ".join(text.split()[:SENTENCE_START_WORDS])


def language_instructions(draft: str, language: str, grid: Grid) -> list[str]:
    """The reviser's instructions for each way ``draft`` (the rendered sections) breaks the
    request's language ``language``; none when it holds."""
    if not language:
        return []
    out = []
    found = prose_language(sentences(draft), expected=language)
    if found:
        out.append(
            f"Langue : le dossier est rédigé en « {found} » et non dans la langue de la demande "
            f"(« {language} ») : réécrivez chaque phrase dans la langue de la demande ; un passage "
            "d'un document en une autre langue ne peut figurer que cité entre « », dans une phrase "
            "qui dit qui l'écrit et quand."
        )
    sections = split_sections(draft)
    for name in MODEL_SECTIONS:
        body = sections.get(name, "")
        total = count_words(body)
        quoted = sum(count_words(q) for q in foreign_quotes(body, language))
        if total and quoted / total > grid.max_quoted_share:
            out.append(
                f"Section « {name} » : {quoted} mots sur {total} sont des citations en une autre langue "
                f"que celle de la demande (au plus {grid.max_quoted_share:.0%}) : résumez ces passages "
                "dans la langue de la demande et ne citez que les mots qui comptent."
            )
    return out + unframed_instructions(draft, language, grid)


def unframed_instructions(text: str, language: str, grid: Grid) -> list[str]:
    """One instruction per foreign quotation of ``text`` standing without a sentence of the
    request's language around it (line by line: it can be traced to the part of the draft holding
    it); none without ``language``."""
    if not language:
        return []
    return [
        f"Citation sans phrase qui l'introduit : « {_start(quote)}… » ; écrivez, dans la langue "
        "de la demande, qui dit ce passage et quand, dans la même phrase que la citation."
        for line in text.splitlines()
        for quote in unframed_quotes(line, language, grid.min_quote_frame_words)
    ]
