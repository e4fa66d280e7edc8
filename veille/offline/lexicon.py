"""Word lists and weights of the offline engine, read once from veille/data/lang (never from code);
format and lists: docs/offline-engine.md, Reading. A malformed file raises :class:`LexiconError`."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

from veille.resources import data_file

__all__ = [
    "LANGS",
    "LexiconError",
    "alternation",
    "entries",
    "fold_entry",
    "groups",
    "pattern",
    "weight",
    "words",
]

LANGS: tuple[str, ...] = ("fr", "en")
# ``common.toml`` holds the language-neutral lists (symbols, SI units, punctuation).
_FILES: tuple[str, ...] = ("common", *LANGS)


class LexiconError(ValueError):
    """A word list or weight file is missing or malformed (the message names the file and field)."""


def _path(name: str) -> Path:
    return data_file("lang") / f"{name}.toml"


@cache
def _load(name: str) -> dict[str, Any]:
    path = _path(name)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise LexiconError(
            f"{path}: missing (the offline engine's word lists ship in veille/data/lang)"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise LexiconError(f"{path}: not valid TOML ({exc})") from exc


def _group_entries(path: Path, field: str, group: Any) -> tuple[str, ...]:
    if not isinstance(group, dict):
        raise LexiconError(f"{path}: [{field}] must be a table with 'why' and 'words'")
    why = group.get("why")
    if not isinstance(why, str) or not why.strip():
        raise LexiconError(f"{path}: [{field}] needs a 'why' naming the class of documents it serves")
    raw = group.get("words")
    if isinstance(raw, str):
        return tuple(raw.split())
    if isinstance(raw, list) and all(isinstance(w, str) and w.strip() for w in raw):
        return tuple(w.strip() for w in raw)
    raise LexiconError(f"{path}: [{field}].words must be a string of words or a list of non-empty strings")


@cache
def groups(name: str, lang: str) -> dict[str, tuple[str, ...]]:
    """Group -> entries (as written) of the list ``name`` in language ``lang``; {} when absent."""
    if lang not in _FILES:
        raise LexiconError(f"language {lang!r}: expected one of {', '.join(_FILES)}")
    table = _load(lang).get(name, {})
    if not isinstance(table, dict):
        raise LexiconError(f"{_path(lang)}: [{name}] must be a table of groups")
    return {group: _group_entries(_path(lang), f"{name}.{group}", body) for group, body in table.items()}


@cache
def entries(name: str, lang: str | None = None) -> tuple[str, ...]:
    """Entries of the list ``name`` as written, in file order, duplicates removed (every file when
    ``lang`` is None)."""
    langs = _FILES if lang is None else (lang,)
    out = [w for code in langs for group in groups(name, code).values() for w in group]
    return tuple(dict.fromkeys(out))


def fold_entry(word: str) -> str:
    """Lower case, accents stripped, typographic apostrophe straightened (entries compare folded)."""
    decomposed = unicodedata.normalize("NFKD", word.replace("\u2019", "'"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


@cache
def words(name: str, lang: str | None = None) -> frozenset[str]:
    """Folded entries of the list ``name`` (every file when ``lang`` is None)."""
    return frozenset(fold_entry(w) for w in entries(name, lang))


@cache
def pattern(name: str, lang: str | None = None) -> re.Pattern[str]:
    """A case-insensitive regex of the entries of ``name`` as whole words or phrases, longest first."""
    alternatives = sorted({re.escape(w) for w in entries(name, lang)}, key=lambda w: (-len(w), w))
    if not alternatives:
        raise LexiconError(f"list {name!r}: no entries in {lang or ', '.join(_FILES)}")
    return re.compile(rf"(?<![\w-])(?:{'|'.join(alternatives)})(?![\w-])", re.IGNORECASE)


@cache
def weight(name: str) -> float:
    """The named weight ``name`` (``section.key``) of ``weights.toml``."""
    section, _, key = name.partition(".")
    path = _path("weights")
    table = _load("weights").get(section)
    item = table.get(key) if isinstance(table, dict) else None
    if not isinstance(item, dict):
        raise LexiconError(f'{path}: [{section}].{key} missing (expected {{ value = …, why = "…" }})')
    value, why = item.get("value"), item.get("why")
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise LexiconError(f"{path}: [{section}].{key}.value must be a number")
    if not isinstance(why, str) or not why.strip():
        raise LexiconError(f"{path}: [{section}].{key}.why must say why this value")
    return float(value)


@cache
def alternation(name: str, *only: str) -> str:
    """A regex alternation of the entries of ``name`` (of its groups ``only``), every file, longest
    first, a space matching any white space; the caller adds the boundaries."""
    found = {
        w
        for code in _FILES
        for group, items in groups(name, code).items()
        if not only or group in only
        for w in items
    }
    if not found:
        raise LexiconError(f"list {name!r}: no entries in {', '.join(_FILES)}")
    ordered = sorted(found, key=lambda w: (-len(w), w))
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)
