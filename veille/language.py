"""The language of a text, with py3langid (a character n-gram naive Bayes model, BSD; 4.5 MB with
numpy, microseconds per sentence), shared by the offline engine and the model seam.

Chosen over lingua-language-detector (``bench/language_id.py``): on the 1,035 sentences of the
test corpora's documents, each labelled with its document's language, restricted to the same seven
languages, py3langid misread 10 in 0.14 s CPU (+ 1.2 s to load its model) and lingua 24 in 0.58 s
CPU (+ 2.9 s to load), for a 96 MB wheel against 4.5 MB. The identifier is restricted to the
languages of ``identified_languages`` (veille/data/lang/common.toml): a wider set makes short
texts misread. Its thresholds are ``[language]`` of veille/data/lang/weights.toml.

Here rather than in ``veille.offline``: the seam (``veille.models``) checks the language of model
answers and must not import the engine (import-linter contract ``seam-and-engine-apart``), so this
module reads its two data tables itself and imports nothing of veille but resources and the
model's loader (veille/language_model.py).

:func:`language` names one text's language (``""`` when too short or unsure). :func:`prose_language`
judges a model answer: its free text (every string of three words or more), quotations left out
(« … », “ … ”, "…" — a quoted document passage keeps its language), named only when it is long
enough to tell and confidently not the expected language. Precision before recall: a French answer
re-asked for nothing costs a call and an alert; a short English label missed costs nothing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache
from typing import Any

from veille.resources import data_file

__all__ = [
    "REPORT_LANGUAGE",
    "language",
    "likely_language",
    "load_model",
    "mark_quotations",
    "model_saved",
    "prose_language",
    "prose_strings",
    "quote_foreign",
    "request_language",
]

# The dossier's default language: prompts and alerts are French, and a report follows its request's
# language when it can be told (an English request gets an English report: tests/corpora/*-en).
REPORT_LANGUAGE = "fr"

_LETTER_WORD_RE = re.compile(r"[^\W\d_]{2,}")
# Quoted passages (a document's words keep their language), code, addresses and citation marks.
_QUOTED_RE = re.compile(r"«[^»]*»(?:\s*\([a-z]{2}\))?|“[^”]*”|\"[^\"]*\"|`[^`]*`|\bhttps?://\S+|\[[^\]]*\]")


@cache
def _table(name: str, section: str) -> dict[str, Any]:
    path = data_file("lang") / f"{name}.toml"
    try:
        with path.open("rb") as handle:
            table = tomllib.load(handle).get(section)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read [{section}] ({exc})") from exc
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [{section}] missing or not a table")
    return table


def _weight(key: str) -> float:
    item = _table("weights", "language").get(key)
    value = item.get("value") if isinstance(item, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"{data_file('lang') / 'weights.toml'}: [language].{key} needs a numeric value")
    return float(value)


def _languages() -> list[str]:
    groups = _table("common", "identified_languages").values()
    codes = {
        code for group in groups if isinstance(group, dict) for code in str(group.get("words", "")).split()
    }
    if not codes:
        raise ValueError(f"{data_file('lang') / 'common.toml'}: [identified_languages] names no language")
    return sorted(codes)


@cache
def _identifier() -> Any:
    # Loaded on first use, so a run that reads no language pays nothing, and once per process; the
    # model's decompression is paid once per installed tree (veille/language_model.py, issue 40).
    from veille.language_model import load_identifier

    return load_identifier(_languages())


def model_saved() -> bool:
    """Whether the identifier's decompressed model is in the tree's cache (a night has loaded it)."""
    from veille.language_model import identifier_saved

    return identifier_saved(_languages())


def load_model() -> None:
    """Load the identifier now (once per process, as on first use): for a caller with idle time
    before the texts come (``veille run`` waiting for its Prefect API, veille/flows/warmup.py)."""
    _identifier()


@lru_cache(maxsize=8192)
def language(text: str) -> str:
    """ISO 639-1 code of the language ``text`` is written in, or ``""`` when it cannot be told."""
    if len(_LETTER_WORD_RE.findall(text)) < _weight("min_words"):
        return ""
    code, probability = _identifier().classify(text)
    return str(code) if probability >= _weight("min_confidence") else ""


@lru_cache(maxsize=8192)
def likely_language(text: str) -> tuple[str, float]:
    """The language ``text`` is most likely written in and its probability, whatever the
    confidence (``("", 0.0)`` when too short to tell): what a text not confidently in one language
    most resembles."""
    if len(_LETTER_WORD_RE.findall(text)) < _weight("min_words"):
        return "", 0.0
    code, probability = _identifier().classify(text)
    return str(code), float(probability)


def request_language(*texts: str) -> str:
    """The language a dossier is written in: its request's (title and text), French when it cannot
    be told (a request of a few words)."""
    return language(" ".join(texts)) or REPORT_LANGUAGE


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def prose_strings(answer: Any) -> list[str]:
    """The free text of a model answer (a pydantic model or its JSON data): every string holding
    three words or more once quotations are left out — ids, numbers and enum values are not prose."""
    data = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer
    out = []
    for text in _strings(data):
        bare = " ".join(_QUOTED_RE.sub(" ", text).split())
        if len(_LETTER_WORD_RE.findall(bare)) >= 3:
            out.append(bare)
    return out


def prose_language(texts: Iterable[str], expected: str = REPORT_LANGUAGE) -> str:
    """The language the prose ``texts`` is written in when it is told with confidence and is not
    ``expected``; ``""`` otherwise (expected, mixed, too short to tell). The texts are judged
    together (one sentence of English in a French answer is a quotation, not an English answer),
    and only past ``[language].min_prose_words`` words."""
    bare = [" ".join(_QUOTED_RE.sub(" ", t).split()) for t in texts]
    joined = " ".join(t if t.endswith((".", "!", "?", ":", ";")) else t + "." for t in bare if t)
    if len(_LETTER_WORD_RE.findall(joined)) < _weight("min_prose_words"):
        return ""
    code = language(joined)
    return code if code and code != expected else ""


# The pieces of a text, in order and covering it: a quotation already marked (« … » (en)), a sentence
# (up to . ! ? … followed by a space or the end: "1.8 GB/s" is one sentence), or a stray character.
_PIECE_RE = re.compile(r"«[^»]*»(?:\s*\([a-z]{2}\))?[.!?…]*|(?:[^.!?…«]|[.!?…](?=[^\s.!?…]))+[.!?…]*|[\s\S]")
_END = (".", "!", "?", "…")


def _sentences(text: str) -> list[str]:
    return _PIECE_RE.findall(text)


def _mark(sentence: str, foreign: set[str]) -> str:
    body = sentence.strip()
    if not body or body.startswith("«"):
        return sentence
    code = language(body)
    if code not in foreign:
        return sentence
    lead = sentence[: len(sentence) - len(sentence.lstrip())]
    end = body[-1] if body.endswith(_END) else ""
    core = body.rstrip("".join(_END)).rstrip() if end else body
    return f"{lead}« {core} » ({code}){end}{sentence[len(sentence.rstrip()) :]}"


def quote_foreign(text: str, request: str) -> str:
    """``text`` (one item code shows) with each sentence identified with confidence in neither
    ``request``'s language nor French marked as a quotation, « … » (en): :func:`mark_quotations` for
    an item whose dossier's own language is the request's (code takes up a document's words)."""
    foreign = set(_languages()) - {request, REPORT_LANGUAGE}
    return "".join(_mark(s, foreign) for s in _sentences(text))


def mark_quotations(texts: Iterable[str], request: str) -> list[str]:
    """``texts`` (a dossier's items) with each sentence written in neither the request's language
    nor the dossier's own shown as a quotation marked with its language, « … » (en): a document's
    words kept verbatim by a model or by code, never presented as the dossier's own sentences.

    The dossier's own language is what its prose as a whole is written in (quotations left out):
    an answer kept in another language (alerted by the seam) is not turned into quotations. French
    (:data:`REPORT_LANGUAGE`) is never marked: it is the language code writes its own sentences in
    whatever the request (placeholders, the dossier rendered by code, the offline engine's prose),
    so a French sentence may be code's, never provably a quotation. A sentence is marked only when
    identified with confidence (:func:`language`); one already quoted is left as it is."""
    items = list(texts)
    joined = " ".join(t if t.rstrip().endswith(_END) else t + "." for t in items if t.strip())
    own = language(" ".join(_QUOTED_RE.sub(" ", joined).split()))
    foreign = set(_languages()) - {request, own, REPORT_LANGUAGE}
    out = []
    for text in items:
        if not any(c.isalpha() for c in text):
            out.append(text)
            continue
        out.append("".join(_mark(s, foreign) for s in _sentences(text)))
    return out
