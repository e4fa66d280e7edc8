"""Reading corpus files and their YAML front matter (between ``---`` lines at the top of a file).

The loader keeps dates as strings and rejects duplicate keys; a fast path reads the common flat
``key: value`` front matter without YAML. The field getters here serve documents and ``request.md``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode

from veille.corpus.errors import CorpusError, quote

__all__ = [
    "EMPTY_FRONT_MATTER",
    "INVALID_YAML",
    "MAX_DEPTH",
    "MAX_FRONT_MATTER_BYTES",
    "MAX_KEYS",
    "MAX_SCALAR_CHARS",
    "check_built_limits",
    "check_size",
    "read_file",
]

# A front-matter delimiter line: '---' (or YAML's document end '...' to close), trailing blanks allowed.
_CLOSING_LINE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_OPENING_LINE = re.compile(r"---[ \t]*(?:\n|\Z)")

_STRING_EXPECTED = (
    "une chaîne non vide (entre guillemets en YAML si elle ressemble à un nombre, une date ou un booléen)"
)
# Problems a caller tells apart (metadata.read_front_matter): compared as constants, never re-typed.
EMPTY_FRONT_MATTER = "front matter vide"
INVALID_YAML = "YAML invalide"


# ----------------------------------------------------------------------------------------------- YAML
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster when present


class _FrontMatterLoader(_BaseLoader):  # type: ignore[misc]
    """Safe loader that keeps dates as strings (we validate them ourselves, with a clear message
    instead of PyYAML's ValueError on 2026-02-30) and rejects duplicate keys (PyYAML keeps the last)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key_node.value!r}",
                        key_node.start_mark,
                    )
                seen.add(key_node.value)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


# Fast path for the common front matter: flat 'key: value' lines whose values YAML would read as plain
# strings, at about half the cost of libyaml (docs/benchmarks.md, Ingestion). Anything else
# (lists, numbers, booleans, nulls, escapes, continuation lines, flow style, duplicates) returns None
# and goes through the YAML loader, so the result is always what _FrontMatterLoader would produce
# (tests/test_corpus_parse.py checks the equivalence on tricky cases and on the bundled corpus).
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*): +(\S.*)")
_PLAIN_FORBIDDEN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Characters the YAML reader rejects or treats as line breaks (\r, NEL, LS, PS), plus the BOM: fall back.
_YAML_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


class _PlainResolver(yaml.resolver.Resolver):
    pass


_PlainResolver.yaml_implicit_resolvers = _FrontMatterLoader.yaml_implicit_resolvers
_RESOLVER = _PlainResolver()
_STR_TAG = "tag:yaml.org,2002:str"


# Implicit resolvers are looked up by first character: a scalar starting with another one is a string.
_RESOLVER_FIRST_CHARS = frozenset(k for k in _PlainResolver.yaml_implicit_resolvers if k)
_KEY_TAGS: dict[str, str] = {}


def _plain_tag(scalar: str) -> str:
    if scalar[0] not in _RESOLVER_FIRST_CHARS and None not in _PlainResolver.yaml_implicit_resolvers:
        return _STR_TAG
    tag: str = _RESOLVER.resolve(ScalarNode, scalar, (True, False))
    return tag


def _key_tag(key: str) -> str:
    tag = _KEY_TAGS.get(key)
    if tag is None:
        tag = _plain_tag(key)
        if len(_KEY_TAGS) < 1024:  # field names repeat across documents; bound the cache anyway
            _KEY_TAGS[key] = tag
    return tag


def _simple_front_matter(front: str) -> dict[str, str] | None:
    data: dict[str, str] = {}
    for line in front.split("\n"):
        if not line.strip(" ") or line.startswith("#"):  # blank (spaces only) or comment line
            continue
        match = _SIMPLE_LINE.fullmatch(line.rstrip(" "))
        if match is None:
            return None
        key, value = match.groups()
        if key in data or _YAML_UNSAFE_CHARS.search(value) or _key_tag(key) != _STR_TAG:
            return None
        first = value[0]
        if first == '"':
            inner = value[1:-1]
            if len(value) < 2 or value[-1] != '"' or '"' in inner or "\\" in inner:
                return None
            data[key] = inner
        elif first == "'":
            inner = value[1:-1]
            if len(value) < 2 or value[-1] != "'" or "'" in inner:
                return None
            data[key] = inner
        else:
            if first in _PLAIN_FORBIDDEN_START or " #" in value or ": " in value or value.endswith(":"):
                return None
            if "\t" in value or _plain_tag(value) != _STR_TAG:
                return None
            data[key] = value
    return data or None


# Hard limits checked on YAML's event stream (an iterative parse) before anything is built: a 50,000-deep
# flow sequence crashes the recursive composer (exit 139) and a 500-byte alias bomb expands to gigabytes.
MAX_FRONT_MATTER_BYTES = 65_536
MAX_DEPTH = 32
MAX_KEYS = 512  # mapping entries in the whole front matter
MAX_SCALAR_CHARS = 20_000
_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_yaml_limits(text: str, path: Path | str, what: str) -> None:
    """Refuse, with one short message, YAML that would cost unbounded time or memory to build:
    over MAX_FRONT_MATTER_BYTES, nested deeper than MAX_DEPTH, with anchors or aliases (a document's
    metadata never needs them; they are the billion-laughs vector), more than MAX_KEYS entries or a scalar
    over MAX_SCALAR_CHARS. Parse errors are left to the loader (it names the line)."""
    expected = f"{what} en YAML valide, dans les limites"
    check_size(text, path, expected)
    depth = keys = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise CorpusError(path, None, expected, "ancres et alias YAML (&nom, *nom) refusés")
            if isinstance(event, _COLLECTION_START):
                depth += 1
                if depth > MAX_DEPTH:
                    raise CorpusError(path, None, expected, f"YAML imbriqué sur plus de {MAX_DEPTH} niveaux")
                keys += isinstance(event, yaml.MappingStartEvent)
            elif isinstance(event, _COLLECTION_END):
                depth -= 1
            elif isinstance(event, yaml.ScalarEvent):
                keys += 1
                if len(event.value) > MAX_SCALAR_CHARS:
                    raise CorpusError(
                        path,
                        None,
                        expected,
                        f"une valeur YAML de {len(event.value)} caractères, au-delà de {MAX_SCALAR_CHARS}",
                    )
            # Scalars count keys and values, and every mapping one more: at most 3 x entries + 1
            # events, so this bound never refuses what the exact count (check_built_limits) accepts.
            if keys > 3 * MAX_KEYS + 1:
                raise CorpusError(path, None, expected, f"plus de {MAX_KEYS} entrées YAML")
    except yaml.YAMLError:
        return  # reported with its line by _load_yaml


def check_size(text: str, path: Path | str, expected: str) -> None:
    """Refuse a front matter over MAX_FRONT_MATTER_BYTES, whichever way it is written (YAML, TOML,
    Pelican lines, plain ``key: value`` lines)."""
    if len(text) > MAX_FRONT_MATTER_BYTES:
        raise CorpusError(
            path,
            None,
            expected,
            f"front matter de {len(text)} caractères, au-delà de {MAX_FRONT_MATTER_BYTES}",
        )


def check_built_limits(data: Any, path: Path | str, expected: str) -> None:
    """Refuse a front matter already built (the flat-line fast path, TOML, Pelican or plain ``key:
    value`` lines: none goes through YAML's event stream) holding more than MAX_KEYS entries (mapping
    entries and list items, at any depth) or a string over MAX_SCALAR_CHARS — the limits the event
    stream enforces on YAML, so a front matter is refused the same whichever reader built it. Its size
    is already bounded (:func:`check_size`), so the walk is too; it is iterative (no recursion)."""
    entries = 0
    pending: list[Any] = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            entries += len(value)
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            entries += len(value)
            pending.extend(value)
        elif isinstance(value, str) and len(value) > MAX_SCALAR_CHARS:
            raise CorpusError(
                path, None, expected, f"une valeur de {len(value)} caractères, au-delà de {MAX_SCALAR_CHARS}"
            )
        if entries > MAX_KEYS:
            raise CorpusError(path, None, expected, f"plus de {MAX_KEYS} entrées de front matter")


def _load_yaml(text: str, path: Path | str, *, line_offset: int, what: str) -> Any:
    _check_yaml_limits(text, path, what)
    try:
        return yaml.load(text, Loader=_FrontMatterLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        at = f" à la ligne {mark.line + 1 + line_offset}" if mark is not None else ""
        raise CorpusError(path, None, f"{what} en YAML valide", f"{INVALID_YAML}{at} : {problem}") from None
    except (
        ValueError,
        TypeError,
        RecursionError,
        OverflowError,
    ) as exc:  # constructor errors PyYAML does not wrap
        raise CorpusError(
            path, None, f"{what} en YAML valide", f"{INVALID_YAML} : {type(exc).__name__} : {str(exc)[:100]}"
        ) from None


# -------------------------------------------------------------------------------------------- reading
def read_file(path: Path | str, *, max_bytes: int | None, st: os.stat_result | None = None) -> bytes:
    """Raw bytes of a corpus file. Refuses missing, unreadable (symlink loop...), non-regular and oversized
    files with a CorpusError naming the file. ``st`` is a ``stat`` the caller already made (saves a syscall)."""
    try:
        if st is None:
            st = os.stat(path)  # follows symlinks: a loop raises ELOOP here
    except FileNotFoundError:
        raise CorpusError(path, None, "un fichier existant", "fichier introuvable (lien cassé ?)") from None
    except OSError as exc:
        reason = "boucle de liens symboliques" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise CorpusError(
            path, None, "un fichier ordinaire lisible", f"fichier illisible ({reason})"
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise CorpusError(
            path, None, "un fichier ordinaire", "pas un fichier ordinaire (dossier, FIFO ou périphérique)"
        )
    if max_bytes is not None and st.st_size > max_bytes:
        raise CorpusError(
            path,
            None,
            f"un fichier d'au plus {max_bytes} octets",
            f"fichier de {st.st_size} octets, au-delà de la limite",
        )
    try:
        with open(path, "rb") as handle:
            raw = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    except OSError as exc:
        raise CorpusError(
            path, None, "un fichier ordinaire lisible", f"fichier illisible ({exc.strerror})"
        ) from None
    if max_bytes is not None and len(raw) > max_bytes:  # the file grew between stat and read
        raise CorpusError(
            path, None, f"un fichier d'au plus {max_bytes} octets", "fichier au-delà de la limite"
        )
    return raw


def _read_text(path: Path | str, *, max_bytes: int | None) -> tuple[bytes, str]:
    raw = read_file(path, max_bytes=max_bytes)
    return raw, _decode(raw, path)


def _decode(raw: bytes, path: Path | str) -> str:
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise CorpusError(
            path,
            None,
            "du texte Markdown en UTF-8",
            f"contenu binaire (octet NUL à la position {nul}), pas un fichier texte",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CorpusError(
            path,
            None,
            "du texte encodé en UTF-8 (réenregistrez le fichier en UTF-8)",
            f"UTF-8 invalide : octet 0x{raw[exc.start]:02x} à la position {exc.start} (ligne {line})",
        ) from None
    return text.replace("\r\n", "\n") if "\r" in text else text


def _split_front_matter(text: str, path: Path | str) -> tuple[str, str, int]:
    """(front matter, body, number of the body's first line)."""
    opening = _OPENING_LINE.match(text)
    if opening is None:
        raise CorpusError(
            path,
            None,
            "un front matter YAML entre deux lignes '---' en tête du fichier",
            "front matter absent : le fichier ne commence pas par une ligne '---'",
        )
    closing = _CLOSING_LINE.search(text, opening.end())
    if closing is None:
        raise CorpusError(
            path,
            None,
            "une ligne '---' qui ferme le front matter",
            "front matter non fermé",
        )
    front = text[opening.end() : closing.start()]
    body_start = closing.end() + 1
    body_line = text.count("\n", 0, body_start) + 1
    return front, text[body_start:], body_line


def _front_matter_mapping(front: str, path: Path | str) -> dict[Any, Any]:
    expected = "un front matter de lignes 'clé: valeur' en YAML valide, dans les limites"
    check_size(front, path, expected)
    fast = _simple_front_matter(front)
    if fast is not None:
        check_built_limits(fast, path, expected)
        return fast
    data = _load_yaml(front, path, line_offset=1, what="un front matter de lignes 'clé: valeur'")
    check_built_limits(data, path, expected)  # a 600-item list passes the event count (scalars)
    if data is None:
        raise CorpusError(
            path, None, "un dictionnaire YAML avec id, date, source_type et title", EMPTY_FRONT_MATTER
        )
    if not isinstance(data, dict):
        raise CorpusError(
            path,
            None,
            "un dictionnaire YAML de lignes 'clé: valeur'",
            f"le front matter est un(e) {_yaml_type(data)} YAML, pas un dictionnaire",
        )
    return data


def _yaml_type(value: object) -> str:
    names = {
        list: "liste",
        str: "chaîne",
        int: "entier",
        float: "nombre",
        bool: "booléen",
        dict: "dictionnaire",
    }
    return names.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------------- field checks
def _text(data: dict[Any, Any], name: str, path: Path | str, *, required: bool, collapse: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            problem = "valeur nulle" if name in data else "champ obligatoire absent"
            raise CorpusError(path, name, _STRING_EXPECTED, problem)
        return None
    if not isinstance(value, str):
        raise CorpusError(path, name, _STRING_EXPECTED, f"reçu : {_yaml_type(value)} YAML ({quote(value)})")
    # Catalogue lines are one line per document: titles and summaries are collapsed to one line.
    cleaned = " ".join(value.split()) if collapse else value.strip()
    if not cleaned:
        if required:
            raise CorpusError(path, name, _STRING_EXPECTED, "valeur vide")
        return None
    return cleaned
