"""Corpus format: parsing and validation of documents, ``request.md`` and ``reference/``.

A corpus is a folder with ``request.md``, ``docs/*.md`` (one document per file, YAML front matter
between ``---`` lines, then a non-empty Markdown body) and an optional ``reference/`` folder
(``dossier.md`` + ``facts.yaml``). The format and every error message are described in
docs/corpus-format.md.

Every validation failure raises :class:`CorpusError`, whose message names the file, the field (when
there is one) and what was expected. Nothing here touches the database: see ``veille.store``.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import os
import re
import stat
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from yaml.nodes import MappingNode, ScalarNode

__all__ = [
    "DEFAULT_MAX_DOC_BYTES",
    "ID_PATTERN",
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "SOURCE_TYPE_PATTERN",
    "Contradiction",
    "CorpusError",
    "Document",
    "DocumentFields",
    "Facts",
    "Reference",
    "Request",
    "StrictModeError",
    "derive_terms",
    "load_reference",
    "load_request",
    "parse_document",
    "parse_document_bytes",
    "parse_document_fields",
    "parse_request",
    "read_file",
    "request_path",
    "unknown_reference_ids",
]

DEFAULT_MAX_DOC_BYTES = 1_048_576
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
SOURCE_TYPE_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")
# A front-matter delimiter line: '---' (or YAML's document end '...' to close), trailing blanks allowed.
_CLOSING_LINE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_OPENING_LINE = re.compile(r"---[ \t]*(?:\n|\Z)")

REQUIRED_FIELDS: tuple[str, ...] = ("id", "date", "source_type", "title")
OPTIONAL_FIELDS: tuple[str, ...] = ("summary", "url", "author")
KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + OPTIONAL_FIELDS)

_ID_EXPECTED = "a lowercase id matching [a-z0-9][a-z0-9-]* (letters a-z, digits, hyphens), e.g. doc-03"
_DATE_EXPECTED = "an ISO date YYYY-MM-DD that exists in the calendar, e.g. 2026-07-08"
_SOURCE_TYPE_EXPECTED = "a kebab-case source type, e.g. benchmark-interne or fiche-fournisseur"
_STRING_EXPECTED = "a non-empty string (quote it in YAML if it looks like a number, date or boolean)"


# --------------------------------------------------------------------------------------------- errors
class CorpusError(ValueError):
    """Invalid corpus input. ``str(e)`` reads ``<file>: field '<field>': <problem>; expected <expectation>``."""

    def __init__(self, path: Path | str, field: str | None, expected: str, problem: str) -> None:
        self.path = Path(path)
        self.field = field
        self.expected = expected
        self.problem = problem
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"field '{self.field}': " if self.field else ""
        return f"{self.path}: {where}{self.problem}; expected {self.expected}"

    # Prefect (and multiprocessing) pickle exceptions; the default reduce would call __init__(message).
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.field, self.expected, self.problem))


class StrictModeError(CorpusError):
    """Strict ingestion found invalid documents. Attributes describe the first one (in path order);
    ``errors`` holds all of them and the message names how many others there are."""

    def __init__(self, errors: list[CorpusError]) -> None:
        if not errors:
            raise ValueError("StrictModeError needs at least one error")
        self.errors = list(errors)
        first = errors[0]
        problem = first.problem
        if len(errors) > 1:
            others = ", ".join(str(e.path) for e in errors[1:4]) + (", …" if len(errors) > 4 else "")
            problem = f"{problem} (strict mode; {len(errors) - 1} more invalid file(s): {others})"
        super().__init__(first.path, first.field, first.expected, problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.errors,))


# --------------------------------------------------------------------------------------------- models
class Document(BaseModel):
    """One valid corpus document. ``path`` is relative to the corpus folder when known (``docs/x.md``)."""

    id: str
    date: datetime.date
    source_type: str
    title: str
    summary: str | None = None
    url: str | None = None
    author: str | None = None
    body: str
    path: str
    word_count: int
    content_hash: str  # sha256 of the file's raw bytes
    unknown_fields: list[str] = Field(default_factory=list)  # loaded anyway; reported as a warning


class Request(BaseModel):
    title: str
    terms: list[str] = Field(default_factory=list)
    mandatory_mentions: list[str] = Field(default_factory=list)
    text: str


class Contradiction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    docs: list[str] = Field(min_length=2)
    expected: str
    keywords: list[str] = Field(default_factory=list)


class Facts(BaseModel):
    # extra=forbid: a typo such as 'exlude' must not silently disable a check.
    model_config = ConfigDict(extra="forbid")

    figures: list[str] = Field(default_factory=list)
    groups: list[list[str]] = Field(default_factory=list)
    keep: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)


class Reference(BaseModel):
    dossier: str
    facts: Facts


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


def _load_yaml(text: str, path: Path | str, *, line_offset: int, what: str) -> Any:
    try:
        return yaml.load(text, Loader=_FrontMatterLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        at = f" at line {mark.line + 1 + line_offset}" if mark is not None else ""
        raise CorpusError(path, None, f"{what} in valid YAML", f"invalid YAML{at}: {problem}") from None
    except (ValueError, TypeError) as exc:  # constructor errors PyYAML does not wrap
        raise CorpusError(path, None, f"{what} in valid YAML", f"invalid YAML: {exc}") from None


# -------------------------------------------------------------------------------------------- reading
def read_file(path: Path | str, *, max_bytes: int | None, st: os.stat_result | None = None) -> bytes:
    """Raw bytes of a corpus file. Refuses missing, unreadable (symlink loop...), non-regular and oversized
    files with a CorpusError naming the file. ``st`` is a ``stat`` the caller already made (saves a syscall)."""
    try:
        if st is None:
            st = os.stat(path)  # follows symlinks: a loop raises ELOOP here
    except FileNotFoundError:
        raise CorpusError(path, None, "an existing file", "file not found (dangling link?)") from None
    except OSError as exc:
        reason = "symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise CorpusError(path, None, "a readable regular file", f"cannot read file ({reason})") from None
    if not stat.S_ISREG(st.st_mode):
        raise CorpusError(path, None, "a regular file", "not a regular file (directory, FIFO or device)")
    if max_bytes is not None and st.st_size > max_bytes:
        raise CorpusError(
            path, None, f"a file of at most {max_bytes} bytes", f"file is {st.st_size} bytes, over the limit"
        )
    try:
        with open(path, "rb") as handle:
            raw = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    except OSError as exc:
        raise CorpusError(
            path, None, "a readable regular file", f"cannot read file ({exc.strerror})"
        ) from None
    if max_bytes is not None and len(raw) > max_bytes:  # the file grew between stat and read
        raise CorpusError(path, None, f"a file of at most {max_bytes} bytes", "file is over the limit")
    return raw


def _read_text(path: Path | str, *, max_bytes: int | None) -> tuple[bytes, str]:
    raw = read_file(path, max_bytes=max_bytes)
    return raw, _decode(raw, path)


def _decode(raw: bytes, path: Path | str) -> str:
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise CorpusError(
            path, None, "UTF-8 Markdown text", f"binary content (NUL byte at offset {nul}), not a text file"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CorpusError(
            path,
            None,
            "UTF-8 encoded text (re-save the file as UTF-8)",
            f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line})",
        ) from None
    return text.replace("\r\n", "\n") if "\r" in text else text


def _split_front_matter(text: str, path: Path | str) -> tuple[str, str, int]:
    """(front matter, body, number of the body's first line)."""
    opening = _OPENING_LINE.match(text)
    if opening is None:
        raise CorpusError(
            path,
            None,
            "YAML front matter between two '---' lines at the top of the file",
            "missing front matter: the file does not start with a '---' line",
        )
    closing = _CLOSING_LINE.search(text, opening.end())
    if closing is None:
        raise CorpusError(
            path,
            None,
            "a closing '---' line after the front matter",
            "front matter is not closed",
        )
    front = text[opening.end() : closing.start()]
    body_start = closing.end() + 1
    body_line = text.count("\n", 0, body_start) + 1
    return front, text[body_start:], body_line


def _front_matter_mapping(front: str, path: Path | str) -> dict[Any, Any]:
    fast = _simple_front_matter(front)
    if fast is not None:
        return fast
    data = _load_yaml(front, path, line_offset=1, what="front matter 'key: value' lines")
    if data is None:
        raise CorpusError(
            path, None, "a YAML mapping with id, date, source_type and title", "front matter is empty"
        )
    if not isinstance(data, dict):
        raise CorpusError(
            path,
            None,
            "a YAML mapping of 'key: value' lines",
            f"front matter is a YAML {_yaml_type(data)}, not a mapping",
        )
    return data


def _yaml_type(value: object) -> str:
    names = {list: "list", str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------------- field checks
def _text(data: dict[Any, Any], name: str, path: Path | str, *, required: bool, collapse: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            problem = "is null" if name in data else "missing required field"
            raise CorpusError(path, name, _STRING_EXPECTED, problem)
        return None
    if not isinstance(value, str):
        raise CorpusError(path, name, _STRING_EXPECTED, f"got a YAML {_yaml_type(value)} ({value!r})")
    # Catalogue lines are one line per document: titles and summaries are collapsed to one line.
    cleaned = " ".join(value.split()) if collapse else value.strip()
    if not cleaned:
        if required:
            raise CorpusError(path, name, _STRING_EXPECTED, "is empty")
        return None
    return cleaned


def _check_id(data: dict[Any, Any], path: Path | str) -> str:
    value = _text(data, "id", path, required=True, collapse=False)
    assert value is not None
    if ID_PATTERN.fullmatch(value) is None:
        hint = ""
        if ID_PATTERN.fullmatch(value.lower()) is not None:
            hint = f" (ids are lowercase: write {value.lower()!r})"
        raise CorpusError(path, "id", _ID_EXPECTED, f"got {value!r}{hint}")
    return value


def _check_date(data: dict[Any, Any], path: Path | str) -> datetime.date:
    value = data.get("date")
    if value is None:
        raise CorpusError(
            path, "date", _DATE_EXPECTED, "is null" if "date" in data else "missing required field"
        )
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if not isinstance(value, str):
        raise CorpusError(path, "date", _DATE_EXPECTED, f"got a YAML {_yaml_type(value)} ({value!r})")
    text = value.strip()
    if _DATE_PATTERN.fullmatch(text) is None:
        raise CorpusError(path, "date", _DATE_EXPECTED, f"got {value!r}, not in YYYY-MM-DD form")
    try:
        return datetime.date.fromisoformat(text)
    except ValueError as exc:
        raise CorpusError(path, "date", _DATE_EXPECTED, f"impossible date {value!r} ({exc})") from None


def _check_source_type(data: dict[Any, Any], path: Path | str) -> str:
    value = _text(data, "source_type", path, required=True, collapse=False)
    assert value is not None
    if SOURCE_TYPE_PATTERN.fullmatch(value) is None:
        raise CorpusError(path, "source_type", _SOURCE_TYPE_EXPECTED, f"got {value!r}")
    return value


def _check_url(data: dict[Any, Any], path: Path | str) -> str | None:
    value = _text(data, "url", path, required=False, collapse=False)
    if value is None:
        return None
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise CorpusError(path, "url", "an absolute http(s) URL without spaces", f"got {value!r}")
    return value


# ------------------------------------------------------------------------------------------ documents
def parse_document(
    path: Path, *, max_bytes: int = DEFAULT_MAX_DOC_BYTES, relative_to: Path | None = None
) -> Document:
    """Read and validate one document file. ``Document.path`` is relative to ``relative_to`` if given."""
    raw = read_file(path, max_bytes=max_bytes)
    rel = path.relative_to(relative_to).as_posix() if relative_to is not None else path.as_posix()
    return parse_document_bytes(raw, path, rel=rel)


def parse_document_bytes(raw: bytes, path: Path, *, rel: str | None = None) -> Document:
    """Validate a document already read from ``path``; ``rel`` becomes ``Document.path`` (default: path)."""
    fields = parse_document_fields(raw, path)
    # model_construct: every field was validated by parse_document_fields.
    return Document.model_construct(
        **fields._asdict(), path=rel if rel is not None else Path(path).as_posix()
    )


class DocumentFields(NamedTuple):
    """A validated document without its path: what the batch ingester stores (no pydantic object per
    document: at 100k documents that alone costs seconds)."""

    id: str
    date: datetime.date
    source_type: str
    title: str
    summary: str | None
    url: str | None
    author: str | None
    body: str
    word_count: int
    content_hash: str
    unknown_fields: list[str]


def parse_document_fields(raw: bytes, path: Path | str) -> DocumentFields:
    """Decode and validate a document's raw bytes; ``path`` only serves error messages."""
    text = _decode(raw, path)
    front, body, _ = _split_front_matter(text, path)
    data = _front_matter_mapping(front, path)
    doc_id = _check_id(data, path)
    date = _check_date(data, path)
    source_type = _check_source_type(data, path)
    title = _text(data, "title", path, required=True, collapse=True)
    assert title is not None  # required=True never returns None
    summary = _text(data, "summary", path, required=False, collapse=True)
    url = _check_url(data, path)
    author = _text(data, "author", path, required=False, collapse=True)
    body = body.strip()
    if not body:
        raise CorpusError(
            path, "body", "non-empty Markdown text after the closing '---' line", "document body is empty"
        )
    unknown = [str(k) for k in data if k not in KNOWN_FIELDS]
    if unknown:
        unknown.sort()
    return DocumentFields(
        doc_id,
        date,
        source_type,
        title,
        summary,
        url,
        author,
        body,
        len(body.split()),
        hashlib.sha256(raw).hexdigest(),
        unknown,
    )


# -------------------------------------------------------------------------------------------- request
def _string_list(data: dict[Any, Any], name: str, path: Path) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    expected = "a YAML list of non-empty strings, e.g. [Kestrel, Tamaris]"
    if not isinstance(value, list):
        raise CorpusError(path, name, expected, f"got a YAML {_yaml_type(value)}")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise CorpusError(path, f"{name}[{i}]", expected, f"got {item!r}")
        out.append(item.strip())
    return out


_REQUEST_FIELDS = frozenset({"title", "terms", "mandatory_mentions"})


def parse_request(path: Path) -> tuple[Request, list[str]]:
    """Parse a request file; returns the request and the names of unknown front-matter fields."""
    _, text = _read_text(path, max_bytes=DEFAULT_MAX_DOC_BYTES)
    front, body, _ = _split_front_matter(text, path)
    data = _front_matter_mapping(front, path)
    title = _text(data, "title", path, required=True, collapse=True)
    assert title is not None
    terms = _string_list(data, "terms", path)
    mentions = _string_list(data, "mandatory_mentions", path)
    body = body.strip()
    if not body:
        raise CorpusError(
            path, "body", "the request text after the closing '---' line", "request text is empty"
        )
    unknown = sorted(str(k) for k in data if k not in _REQUEST_FIELDS)
    return Request(title=title, terms=terms, mandatory_mentions=mentions, text=body), unknown


def load_request(corpus_dir: Path) -> Request:
    """The corpus request (``<corpus>/request.md``); CorpusError if the corpus or the file is missing/invalid."""
    return parse_request(request_path(corpus_dir))[0]


def request_path(corpus_dir: Path) -> Path:
    """``<corpus>/request.md``, after checking that the corpus folder and the file exist."""
    _check_corpus_dir(corpus_dir)
    path = corpus_dir / "request.md"
    if not path.is_file():
        raise CorpusError(
            path,
            None,
            "a request.md file at the corpus root (front matter with 'title', then the request text)",
            "request file not found",
        )
    return path


def _check_corpus_dir(corpus_dir: Path) -> None:
    if not corpus_dir.is_dir():
        raise CorpusError(
            corpus_dir,
            None,
            "a corpus folder containing request.md and docs/*.md",
            "corpus folder not found" if not corpus_dir.exists() else "not a folder",
        )


# ------------------------------------------------------------------------------------------ reference
def load_reference(corpus_dir: Path) -> Reference | None:
    """``<corpus>/reference/`` (dossier.md + facts.yaml), or None when the folder does not exist."""
    folder = corpus_dir / "reference"
    if not folder.is_dir():
        return None
    dossier_path = folder / "dossier.md"
    facts_path = folder / "facts.yaml"
    for required in (dossier_path, facts_path):
        if not required.is_file():
            raise CorpusError(
                required, None, "reference/ to hold both dossier.md and facts.yaml", "file not found"
            )
    _, dossier = _read_text(dossier_path, max_bytes=None)
    if not dossier.strip():
        raise CorpusError(dossier_path, None, "the reference dossier in Markdown", "file is empty")
    _, facts_text = _read_text(facts_path, max_bytes=None)
    data = _load_yaml(
        facts_text, facts_path, line_offset=0, what="figures/groups/keep/exclude/contradictions"
    )
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CorpusError(
            facts_path,
            None,
            "a YAML mapping with figures, groups, keep, exclude, contradictions",
            f"got a YAML {_yaml_type(data)}",
        )
    try:
        facts = Facts.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise CorpusError(
            facts_path, field, _facts_expectation(err["type"]), f"{err['msg']} (got {err.get('input')!r})"
        ) from None
    return Reference(dossier=dossier.strip(), facts=facts)


def _facts_expectation(error_type: str) -> str:
    if error_type == "extra_forbidden":
        return "only figures, groups, keep, exclude, contradictions (and id, docs, expected, keywords per contradiction)"
    if error_type == "too_short":
        return "at least two document ids per contradiction"
    return "the facts.yaml layout of docs/corpus-format.md (lists of strings, document ids)"


def unknown_reference_ids(reference: Reference, known_ids: Collection[str]) -> list[str]:
    """Document ids named in facts.yaml (groups, keep, exclude, contradictions) that are not in ``known_ids``."""
    facts = reference.facts
    named: list[str] = [i for group in facts.groups for i in group]
    named += facts.keep + facts.exclude + [i for c in facts.contradictions for i in c.docs]
    known = set(known_ids)
    return sorted({i for i in named if i not in known})


# -------------------------------------------------------------------------------------------- terms
# Words that start sentences or headings in French requests and are not subject terms.
_STOPWORDS = frozenset(
    [
        "a",
        "au",
        "aux",
        "avec",
        "ce",
        "ces",
        "cette",
        "comment",
        "dans",
        "de",
        "des",
        "du",
        "elle",
        "en",
        "est",
        "et",
        "il",
        "ils",
        "la",
        "le",
        "les",
        "leur",
        "leurs",
        "mais",
        "nous",
        "on",
        "ou",
        "où",
        "par",
        "pas",
        "pour",
        "qu",
        "que",
        "quel",
        "quelle",
        "quelles",
        "quels",
        "qui",
        "sa",
        "se",
        "ses",
        "son",
        "sur",
        "un",
        "une",
        "vous",
        "notre",
        "nos",
        "votre",
        "vos",
        "tout",
        "tous",
        "toutes",
        "plus",
        "moins",
        "entre",
        "sans",
        "sous",
        "vers",
        "chez",
        "dont",
        "ainsi",
        "alors",
        "aussi",
        "the",
        "and",
        "for",
        "with",
        "from",
        "what",
        "which",
        "how",
        "our",
        "this",
        "that",
        "demande",
        "veille",
        "dossier",
        "question",
        "objectif",
        "contexte",
        "merci",
    ]
)
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")


def derive_terms(request: Request) -> list[str]:
    """Key terms of the request: ``request.terms`` when given; otherwise the proper nouns and acronyms of
    the title and text (capitalised words not at a sentence start, or seen capitalised mid-sentence,
    plus all-caps words such as RGPD), de-duplicated case-insensitively in order of appearance."""
    if request.terms:
        return list(dict.fromkeys(request.terms))
    found: dict[str, str] = {}
    for chunk in _sentences([request.title, request.text]):
        for position, match in enumerate(_WORD.finditer(chunk)):
            word = match.group().strip("'’-")
            word = re.split(r"['’]", word)[-1] if "'" in word or "’" in word else word  # l'Orvet -> Orvet
            if len(word) < 3 or word.lower() in _STOPWORDS:
                continue
            is_acronym = word.isupper() and any(c.isalpha() for c in word)
            if is_acronym or (word[0].isupper() and position > 0):
                found.setdefault(word.lower(), word)
    # A capitalised word at a sentence start counts only if it also appears mid-sentence (handled above).
    return list(found.values())


def _sentences(texts: Iterable[str]) -> list[str]:
    chunks: list[str] = []
    for text in texts:
        for line in text.splitlines():
            # Markdown markers would otherwise make the first word look mid-sentence.
            line = re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s*", "", line)
            chunks.extend(part for part in re.split(r"(?<=[.!?])\s+", line) if part.strip())
    return chunks
