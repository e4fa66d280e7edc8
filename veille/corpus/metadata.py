"""Front matter as real sites write it, read under limits: YAML (Jekyll, Docusaurus, Obsidian, Hugo),
TOML (Hugo ``+++``) and Pelican ``Key: value`` headers; values cleaned for the catalogue.

:func:`read_front_matter` gives a mapping with lowercase keys and the notes a reader should see
(one line each, aggregated by the ingestion). YAML goes through the limited loader of
:mod:`veille.corpus.frontmatter`; a block YAML refuses but that reads as plain ``key: value`` lines
(an unquoted title holding ``": "``, normal in Jekyll and Pelican posts) is read that way, with a note.
:func:`clean_value` removes control and format characters (bidirectional, zero-width, tag characters:
:mod:`veille.corpus.invisible`) and caps the length.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path
from typing import Any

from veille.corpus.errors import CorpusError, quote
from veille.corpus.frontmatter import (
    EMPTY_FRONT_MATTER,
    INVALID_YAML,
    MAX_DEPTH,
    _front_matter_mapping,
    _load_yaml,
    _yaml_type,
    check_built_limits,
    check_size,
)
from veille.corpus.invisible import INVISIBLE

__all__ = ["DATE_EXPECTED", "FIELD_CAPS", "clean_value", "parse_date", "read_front_matter"]

FIELD_CAPS = {"title": 300, "summary": 1000, "author": 300, "id": 120, "source_type": 60, "url": 2000}
DATE_EXPECTED = (
    "une date ISO AAAA-MM-JJ qui existe au calendrier, ou une date-heure ISO "
    "(p. ex. 2026-07-08, 2025-01-27 20:45:32 +0530, 2025-01-27T20:45:32Z)"
)


def clean_value(value: str, name: str) -> tuple[str, bool]:
    """(the value on one line, without invisible characters and capped for ``name``; whether anything
    was removed or cut — line breaks and tabs are whitespace, collapsed without a word)."""
    spaced = " ".join(value.split())
    text = " ".join(INVISIBLE.sub("", spaced).split())
    cap = FIELD_CAPS.get(name, 1000)
    cut = len(text) > cap
    if cut:
        text = text[: cap - 1].rstrip() + "…"
    return text, cut or text != spaced


# ------------------------------------------------------------------------------------------------ dates
_TIME_ZONE = re.compile(r"([+-])(\d{2}):?(\d{2})$")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_date(value: object, path: Path | str) -> datetime.date:
    """A front-matter date: a date, or a date-time whose calendar day is the author's (its own time
    zone, as written). Raises CorpusError naming the field otherwise."""
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if not isinstance(value, str):
        raise CorpusError(path, "date", DATE_EXPECTED, f"reçu : {_yaml_type(value)} YAML ({quote(value)})")
    text = value.strip()
    if _ISO_DAY.match(text) is None or len(text) > 40:
        raise CorpusError(path, "date", DATE_EXPECTED, f"reçu : {quote(value)}, pas de la forme AAAA-MM-JJ")
    try:
        day = datetime.date.fromisoformat(text[:10])
    except ValueError as exc:
        raise CorpusError(path, "date", DATE_EXPECTED, f"date impossible {quote(value)} ({exc})") from None
    if len(text) == 10:
        return day
    iso = _TIME_ZONE.sub(r"\1\2:\3", text.replace(" ", "T", 1).replace(" ", ""))
    try:
        return datetime.datetime.fromisoformat(iso.replace("z", "Z")).date()
    except ValueError:
        raise CorpusError(
            path, "date", DATE_EXPECTED, f"reçu : {quote(value)}, pas une date-heure ISO"
        ) from None


# ------------------------------------------------------------------------------------------ front matter
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_ -]{0,60}?)[ \t]*:(?:[ \t]+(.*))?")
_LIST_ITEM = re.compile(r"[ \t]+-[ \t]+(.*)")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _key_value_lines(front: str, *, continuation: bool) -> dict[str, Any] | None:
    """``key: value`` lines split at the first colon (values are plain text, quotes removed); ``  - x``
    lines after an empty value make a list; with ``continuation``, other indented lines extend the value
    (Pelican). None when a line is neither."""
    data: dict[str, Any] = {}
    last: str | None = None
    for line in front.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _LIST_ITEM.fullmatch(line)
        if item is not None and last is not None and isinstance(data[last], list):
            data[last].append(_unquote(item.group(1)))
            continue
        if line[0] in " \t":
            if continuation and last is not None and isinstance(data[last], str):
                data[last] = f"{data[last]} {line.strip()}"
                continue
            return None
        match = _KEY_LINE.fullmatch(line.rstrip())
        if match is None:
            return None
        last = match.group(1).strip().lower()
        if last in data:
            return None  # a duplicate key is an error, whichever reading
        value = match.group(2)
        if value and value[0] in "[{" and not continuation:
            # A flow list beside an unquoted colon elsewhere (Jekyll's `categories: [a, b]`): this line
            # alone is YAML; read it so, under the same limits. Unreadable alone: the YAML error stands.
            flow = _flow_value(value)
            if flow is None:
                return None
            data[last] = flow
            continue
        if value and value[0] in "[{&*!|>":
            return None  # YAML syntax meant as such (flow collection, anchor, tag, block scalar)
        if value and value[0] in "'\"" and not value.rstrip().endswith(value[0]):
            return None  # an unterminated quoted string: the YAML error is the right message
        data[last] = _unquote(value) if value else []
    for key, value in data.items():
        if value == []:
            data[key] = None
    return data


def _flow_value(value: str) -> list[Any] | dict[Any, Any] | None:
    """A one-line YAML flow collection through the limited loader; None when YAML refuses it."""
    try:
        loaded = _load_yaml(f"v: {value}", "<front matter>", line_offset=0, what="un front matter")
    except CorpusError:
        return None
    flow = loaded.get("v") if isinstance(loaded, dict) else None
    return flow if isinstance(flow, list | dict) else None


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _toml(front: str, path: Path | str) -> dict[str, Any]:
    expected = _WITHIN["toml"]
    check_size(front, path, expected)
    if _bracket_depth(front) > MAX_DEPTH:
        raise CorpusError(path, None, expected, f"TOML imbriqué sur plus de {MAX_DEPTH} niveaux")
    try:
        return tomllib.loads(front)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise CorpusError(path, None, expected, f"TOML invalide : {str(exc)[:100]}") from None


_WITHIN = {
    "yaml": "un front matter de lignes 'clé: valeur' en YAML valide, dans les limites",
    "toml": "un front matter TOML (Hugo) entre deux lignes '+++', dans les limites",
    "pelican": "des lignes d'en-tête 'Clé: valeur' (Pelican) dans les limites",
}


def read_front_matter(
    front: str | None, kind: str | None, path: Path | str
) -> tuple[dict[str, Any], list[str]]:
    """The front matter as a mapping with lowercase string keys, and notes (each one short line).
    Raises CorpusError for a front matter that is refused (limits, not a mapping, unreadable)."""
    if front is None or not front.strip():
        return {}, []
    notes: list[str] = []
    # The documented limits hold whichever way the front matter is written (YAML checks its own).
    within = _WITHIN.get(kind or "yaml", _WITHIN["yaml"])
    check_size(front, path, within)
    if kind == "toml":
        data: Any = _toml(front, path)
    elif kind == "pelican":
        data = _key_value_lines(front, continuation=True) or {}
    else:
        try:
            data = _front_matter_mapping(front, path)
        except CorpusError as exc:
            if exc.problem == EMPTY_FRONT_MATTER:  # only comments: no metadata, derived instead
                return {}, []
            if not exc.problem.startswith(INVALID_YAML):
                raise  # limits and non-mappings are refused as they are
            fallback = _key_value_lines(front, continuation=False)
            if fallback is None:
                raise
            data = fallback
            notes.append(f"front matter lu comme de simples lignes 'clé: valeur' ({exc.problem})")
    if not isinstance(data, dict):
        raise CorpusError(path, None, "des lignes 'clé: valeur'", "le front matter n'est pas un dictionnaire")
    check_built_limits(data, path, within)
    lowered: dict[str, Any] = {}
    for key, value in data.items():
        lowered.setdefault(str(key).strip().lower()[:100], value)
    return lowered, notes
