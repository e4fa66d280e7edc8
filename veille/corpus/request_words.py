"""The word lists and weights of the request's reading (``veille/data/request.toml``), read once;
each list and weight carries its reason in the file. A malformed file raises ``ValueError``."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from functools import cache
from typing import Any

from veille.marks import without_marks
from veille.resources import data_file

__all__ = ["cue_pattern", "fold", "pairs", "weight", "words"]

_FILE = "request.toml"


@cache
def _load() -> dict[str, Any]:
    path = data_file(_FILE)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the request's word lists ({exc})") from exc


def fold(text: str) -> str:
    """Lower case, accents off, typographic apostrophe straightened: « Évolué’ » -> "evolue'"."""
    decomposed = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    return without_marks(decomposed).casefold()


@cache
def words(section: str, group: str) -> tuple[str, ...]:
    """The folded entries of ``[section.group]`` (each group needs a ``why``)."""
    table = _load().get(section, {}).get(group)
    path = data_file(_FILE)
    if not isinstance(table, dict) or not str(table.get("why", "")).strip():
        raise ValueError(f"{path}: [{section}.{group}] missing or without a 'why'")
    raw = table.get("words")
    if not isinstance(raw, list) or not all(isinstance(w, str) and w.strip() for w in raw):
        raise ValueError(f"{path}: [{section}.{group}].words must be a list of non-empty strings")
    return tuple(fold(w.strip()) for w in raw)


def pairs(section: str, group: str) -> tuple[tuple[str, str], ...]:
    """Entries written ``open|close`` (« entre|et »)."""
    out = []
    for entry in words(section, group):
        first, sep, second = entry.partition("|")
        if not sep:
            raise ValueError(f"{data_file(_FILE)}: [{section}.{group}] entry {entry!r} needs 'open|close'")
        out.append((first, second))
    return tuple(out)


@cache
def cue_pattern(section: str, group: str) -> re.Pattern[str]:
    """Entries of ``[section.group]`` at a word's start, in folded text (« recommand » matches
    « recommandons »); an entry ending in a full word (« faut-il ») is matched whole."""
    alternatives = sorted(words(section, group), key=lambda w: (-len(w), w))
    body = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in alternatives)
    return re.compile(rf"(?<![\w-])(?:{body})")


@cache
def weight(name: str) -> float:
    """``[weights].name`` (a value with its ``why``)."""
    item = _load().get("weights", {}).get(name)
    if not isinstance(item, dict) or not str(item.get("why", "")).strip():
        raise ValueError(f"{data_file(_FILE)}: [weights].{name} missing or without a 'why'")
    value = item.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"{data_file(_FILE)}: [weights].{name}.value must be a number")
    return float(value)
