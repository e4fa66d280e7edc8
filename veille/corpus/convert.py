"""Any document file a team has, as text: Markdown, plain text, HTML, PDF and DOCX.

The stable entry points are :func:`convert_bytes` (bytes with a file name and, when known, a media type:
what the collector has) and :func:`convert_file` (a path). Both return a :class:`Converted`: the text
(Markdown for Markdown, HTML and DOCX headings; plain text otherwise), the metadata the file itself
carries (title, date, author) and, for each of them, where it came from (``origins``). A file that
cannot be converted raises :class:`ConversionError`, whose message names the file and stays short.

Libraries (compared on real files, docs/corpus-format.md « Formats »): pypdf for PDF (pure Python, BSD,
the fastest of pypdf / pdfminer.six / markitdown on the files tried, and the only one that kept Arabic
in reading order), python-docx for DOCX (MIT; gives the core properties — title, author, dates — and
heading styles; markitdown's mammoth path failed on the Word files tried), trafilatura for HTML (already
used by the collector: main text, ``<title>`` and dates). Markdown front matter is *split* here and
*parsed* by :mod:`veille.corpus.frontmatter` under hard limits.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from veille.corpus.formats import FORMAT_LIMITS, convert_docx, convert_html, convert_pdf
from veille.corpus.sniff import binary_reason

__all__ = [
    "FORMATS",
    "MEDIA_TYPES",
    "ConversionError",
    "Converted",
    "convert_bytes",
    "convert_file",
    "detect_format",
    "plain_title",
    "split_front_matter",
]

# File extension (lowercase, with the dot) -> format name.
FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
MEDIA_TYPES: dict[str, str] = {
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}
_MAX_MESSAGE = 100  # characters of a library's message quoted in an error
_TEXT_EXPECTED = {
    "markdown": "du texte Markdown en UTF-8",
    "text": "du texte en UTF-8",
    "html": "une page HTML (texte)",
}


class ConversionError(ValueError):
    """The file could not be converted; ``str(e)`` reads ``<name> : <problem>`` (French, like CorpusError) and is bounded."""

    expected_failure = True  # bad input, not a bug (veille/ops/logfilter.py)

    def __init__(self, name: str, problem: str, expected: str = "un fichier de document lisible") -> None:
        self.name = name
        self.problem = problem
        self.expected = expected
        super().__init__(f"{name} : {problem}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.name, self.problem, self.expected))


@dataclass(frozen=True)
class Converted:
    """A converted file. ``origins`` maps ``title``/``date``/``author`` to where the value was found
    (e.g. ``"pdf properties"``, ``"html <title>"``, ``"first heading"``); ``front_matter`` is the raw
    block of a Markdown file (``front_matter_kind``: ``"yaml"``, ``"toml"`` or ``"pelican"``), not parsed."""

    text: str
    format: str
    title: str | None = None
    date: datetime.datetime | datetime.date | None = None
    author: str | None = None
    origins: dict[str, str] = field(default_factory=dict)
    front_matter: str | None = None
    front_matter_kind: str | None = None
    front_matter_line: int = 1  # line number of the body's first line in the file (error messages)


def detect_format(name: str, media_type: str | None = None) -> str | None:
    """The format of a file from its media type (parameters ignored), else its extension (any case)."""
    if media_type:
        found = MEDIA_TYPES.get(media_type.split(";", 1)[0].strip().lower())
        if found is not None:
            return found
    return FORMATS.get(os.path.splitext(name)[1].lower())


def convert_file(path: Path | str, *, max_bytes: int | None = None) -> Converted:
    """Read and convert one file (format from its extension). Raises ConversionError, or OSError."""
    with open(path, "rb") as handle:
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise ConversionError(str(path), f"fichier de plus de {max_bytes} octets, au-delà de la limite")
    return convert_bytes(data, name=str(path))


def convert_bytes(data: bytes, *, name: str, media_type: str | None = None) -> Converted:
    """Convert a document's bytes; ``name`` gives the format when ``media_type`` does not, and names
    the file in errors. Never raises anything but ConversionError for bad content."""
    fmt = detect_format(name, media_type)
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise ConversionError(name, f"format non pris en charge (formats lus : {known})")
    if fmt in ("markdown", "text", "html") and (binary := binary_reason(data)) is not None:
        # Whatever the extension: random bytes named .html were read as garbled text.
        raise ConversionError(name, binary, _TEXT_EXPECTED[fmt])
    try:
        if fmt in ("markdown", "text"):
            return _convert_text(data, name, fmt)
        parts = {"html": convert_html, "pdf": convert_pdf, "docx": convert_docx}[fmt](data)
    except ConversionError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise ConversionError(
            name, f"fichier {fmt} trop complexe à convertir ({type(exc).__name__})"
        ) from None
    except Exception as exc:  # any library failure on bad bytes is this file's problem
        raise ConversionError(name, f"fichier {fmt.upper()} illisible ({_short(exc)})") from None
    text = clean_text(parts.text)
    if not text.strip():
        hint = " (pages numérisées sans couche texte ?)" if fmt == "pdf" else ""
        raise ConversionError(name, f"aucun texte trouvé dans ce fichier {fmt.upper()}{hint}")
    return Converted(text, fmt, parts.title, parts.date, parts.author, parts.origins)


def _short(exc: BaseException) -> str:
    message = " ".join(str(exc).split()) or type(exc).__name__
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


# ---------------------------------------------------------------------------------- text and Markdown
_NUL_OR_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(text: str) -> str:
    """Newlines normalised, control characters (NUL, ESC...) removed, at most one blank line in a row."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _NUL_OR_CONTROL.sub("", text)
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip("\n")


def _decode(data: bytes, name: str) -> str:
    if len(data) > FORMAT_LIMITS.max_text_bytes:
        raise ConversionError(name, f"texte de plus de {FORMAT_LIMITS.max_text_bytes} octets")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ConversionError(name, "texte UTF-16 invalide", "du texte en UTF-8 ou UTF-16") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConversionError(
            name,
            f"UTF-8 invalide : octet 0x{data[exc.start]:02x} à la position {exc.start} (ligne {line})",
            "du texte encodé en UTF-8 (réenregistrez le fichier en UTF-8)",
        ) from None


def _convert_text(data: bytes, name: str, fmt: str) -> Converted:
    text = _decode(data, name)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    front, kind, body, line = (None, None, text, 1)
    if fmt == "markdown":
        front, kind, body, line = split_front_matter(text)
        body = strip_template_tags(strip_comment_blocks(body))
    title, origins = None, {}
    heading = _first_heading(body) if fmt == "markdown" else None
    if heading:
        title, origins = heading, {"title": "first heading"}
    return Converted(clean_text(body), fmt, title, None, None, origins, front, kind, front_matter_line=line)


_YAML_OPEN = re.compile(r"---[ \t]*\n")
_YAML_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_TOML_OPEN = re.compile(r"\+\+\+[ \t]*\n")
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*$", re.MULTILINE)
# Pelican / MultiMarkdown metadata: 'Key: value' lines from the first line up to a blank line. Only
# recognised when a Title or Date key is among them, so prose starting with "Note: ..." stays prose.
_PELICAN_LINE = re.compile(r"[A-Za-z][A-Za-z0-9_ -]{0,40}:[ \t]*\S.*|[ \t]+\S.*")
_PELICAN_KEYS = re.compile(r"^(?:title|date)[ \t]*:", re.IGNORECASE | re.MULTILINE)


def split_front_matter(text: str) -> tuple[str | None, str | None, str, int]:
    """(front matter or None, kind, body, line number of the body's first line). Kinds: ``"yaml"``
    (``---`` … ``---``/``...``), ``"toml"`` (``+++`` … ``+++``, Hugo), ``"pelican"`` (``Key: value``
    lines up to a blank line). An opening line without a closing one gives kind ``"unclosed"`` (the
    document layer refuses it: the rest of the file would become text) and the whole text as body."""
    for opening, closing, kind in ((_YAML_OPEN, _YAML_CLOSE, "yaml"), (_TOML_OPEN, _TOML_CLOSE, "toml")):
        start = opening.match(text)
        if start is None:
            continue
        end = closing.search(text, start.end())
        if end is None:
            return None, "unclosed", text, 1
        body_start = min(len(text), end.end() + 1)
        return text[start.end() : end.start()], kind, text[body_start:], text.count("\n", 0, body_start) + 1
    head, sep, rest = text.partition("\n\n")
    lines = head.split("\n")
    if (
        sep
        and len(lines) <= 64
        and _PELICAN_LINE.fullmatch(lines[0])
        and not lines[0].startswith((" ", "\t"))
        and all(_PELICAN_LINE.fullmatch(line) for line in lines)
        and _PELICAN_KEYS.search(head)
    ):
        return head, "pelican", rest, head.count("\n") + 3
    return None, None, text, 1


# HTML comments, Liquid/Jinja comment blocks and MDX comments (licence headers, template notes): never document text.
_COMMENT_BLOCKS = re.compile(
    r"(?<!`)(?:<!--.*?(?:-->|\Z)|\{%-?\s*comment\s*-?%\}.*?(?:\{%-?\s*endcomment\s*-?%\}|\Z)"
    r"|\{#.*?#\}|\{/\*.*?\*/\})",  # not right after a backtick: code spans that show the syntax stay
    re.DOTALL,
)


def strip_comment_blocks(body: str) -> str:
    """The body without ``<!-- … -->``, ``{% comment %}…{% endcomment %}``, ``{# … #}`` and
    ``{/* … */}`` blocks."""
    if "<!--" not in body and "{%" not in body and "{#" not in body and "{/*" not in body:
        return body
    return _COMMENT_BLOCKS.sub("", body)


# Template tags of static-site generators, never document text: Hugo shortcodes (``{{< img … >}}``,
# ``{{% note %}}`` … ``{{% /note %}}``; the escaped ``{{</* … */>}}`` form that shows one is kept) and
# Liquid/Jinja tags (``{% highlight ruby %}``, ``{% include x.html %}``, Pelican's liquid_tags). Paired
# tags lose their delimiters, the text between them stays. Fenced code blocks and code spans (right
# after a backtick) are left as written: documentation shows the syntax there.
_TEMPLATE_TAG = re.compile(
    r"(?<!`)(?:\{\{<(?!\s*/\*)[^{}\n]{0,1000}?>\}\}|\{\{%(?!\s*/\*)[^{}\n]{0,1000}?%\}\}"
    r"|\{%-?[^{}\n]{0,1000}?-?%\})"
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)


def strip_template_tags(body: str) -> str:
    """The body without Hugo shortcodes and Liquid/Jinja tags outside code (comment above); a line
    that held only tags is dropped."""
    if "{{<" not in body and "{{%" not in body and "{%" not in body:
        return body
    out: list[str] = []
    done = 0
    for fence in _FENCE.finditer(body):
        out.append(_strip_tags(body[done : fence.start()]))
        out.append(fence.group(0))
        done = fence.end()
    out.append(_strip_tags(body[done:]))
    return "".join(out)


def _strip_tags(text: str) -> str:
    lines = text.split("\n")
    kept = []
    for line in lines:
        stripped = _TEMPLATE_TAG.sub("", line)
        if stripped != line and not stripped.strip():
            continue  # the line held only tags
        kept.append(stripped)
    return "\n".join(kept)


_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_SETEXT_HEADING = re.compile(r"^(\S[^\n]*)\n {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


def _first_heading(body: str) -> str | None:
    head = body[:20_000]  # the title is near the top; bounded regex work on huge bodies
    found = [m for m in (_ATX_HEADING.search(head), _SETEXT_HEADING.search(head)) if m is not None]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    return plain_title(first.group(1))


_MD_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_EMPHASIS = re.compile(r"[*_`]+")


def plain_title(value: str) -> str | None:
    """A heading as plain text: links and images give their text, emphasis marks dropped."""
    text = _MD_EMPHASIS.sub("", _MD_IMAGE_OR_LINK.sub(r"\1", value))
    return " ".join(text.split()) or None
