"""Converters of binary and markup formats (HTML, PDF, DOCX) to text plus the metadata the file carries.

Used through :mod:`veille.corpus.convert`, which maps any library failure to a ConversionError. Each
converter works under :data:`FORMAT_LIMITS` (pages, uncompressed size, characters) so that a hostile
file costs bounded time and memory.
"""

from __future__ import annotations

import datetime
import gc
import io
import itertools
import logging
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from veille.corpus.dates import docx_date_kept, pdf_date_kept
from veille.corpus.sniff import decode_html

logging.getLogger("pypdf").setLevel(logging.ERROR)  # "EOF marker not found"...: the ingest alert says it

__all__ = ["FORMAT_LIMITS", "FormatLimits", "Parts", "convert_docx", "convert_html", "convert_pdf"]


@dataclass(frozen=True)
class FormatLimits:
    max_pdf_pages: int = 2_000
    max_text_chars: int = 4_000_000  # converted text kept per file
    max_text_bytes: int = 16_000_000  # a text/Markdown/HTML file decoded at most
    max_docx_uncompressed: int = 200_000_000  # zip bombs: the sum of the members' declared sizes


FORMAT_LIMITS = FormatLimits()


class Parts(NamedTuple):
    text: str
    title: str | None
    date: datetime.datetime | datetime.date | None
    author: str | None
    origins: dict[str, str]


@dataclass
class _Meta:
    title: str | None = None
    date: datetime.datetime | datetime.date | None = None
    author: str | None = None
    origins: dict[str, str] = field(default_factory=dict)

    def put(self, name: str, value: Any, origin: str) -> None:
        if isinstance(value, str):
            value = " ".join(value.split())[:1000] or None
            if name == "title" and value is not None and _PLACEHOLDER_TITLE.fullmatch(value):
                value = None  # set by the producing tool, not the author
        if value is not None and getattr(self, name) is None:
            setattr(self, name, value)
            self.origins[name] = origin


# Titles that producing tools write in document properties: a file name ("Binder1.pdf", "Microsoft
# Word - notes.docx") or a template placeholder. The file's own text or name says more.
_PLACEHOLDER_TITLE = re.compile(
    r"(?i)(?:microsoft (?:word|powerpoint) - .*|.*\.(?:pdf|docx?|pptx?|odt|rtf|txt|html?|indd|tmp)|"
    r"untitled(?: document)?|sans titre|document\d*|title|titre)"
)


def _cap(text: str) -> str:
    return text if len(text) <= FORMAT_LIMITS.max_text_chars else text[: FORMAT_LIMITS.max_text_chars]


# ----------------------------------------------------------------------------------------------- HTML
def _html_day(value: str | None) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def convert_html(data: bytes) -> Parts:
    """Main text as Markdown (trafilatura, recall-oriented: local pages are documents, not news pages
    with menus); the charset comes from the BOM or the page's declaration, else is detected
    (:func:`veille.corpus.sniff.decode_html`: trafilatura's own guess made « ╔tķ Ó Paris » of a
    Latin-1 page)."""
    import trafilatura  # imported on first HTML file: ~0.3 s, not paid by Markdown-only corpora

    if len(data) > FORMAT_LIMITS.max_text_bytes:
        raise ValueError(f"HTML de plus de {FORMAT_LIMITS.max_text_bytes} octets")
    page = decode_html(data)
    doc = trafilatura.bare_extraction(
        page,
        with_metadata=True,
        include_comments=False,
        include_tables=True,
        include_formatting=True,  # headings as '#': long pages split into sections
        favor_recall=True,
        output_format="python",
        date_extraction_params={"extensive_search": False, "original_date": True},
    )
    meta = _Meta()
    text = ""
    if doc is not None:
        text = getattr(doc, "text", None) or ""
        meta.put("title", getattr(doc, "title", None), "html <title>")
        meta.put("date", _html_day(getattr(doc, "date", None)), "html metadata")
        meta.put("author", getattr(doc, "author", None), "html metadata")
    if not text.strip():
        text = _html_fallback_text(page)
    return Parts(_cap(text), meta.title, meta.date, meta.author, meta.origins)


_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


def _html_fallback_text(page: str) -> str:
    """Every visible text node (scripts and styles dropped) when trafilatura finds no main text."""
    import lxml.html

    # lxml refuses a decoded string that still declares its encoding (XHTML): already decoded.
    root = lxml.html.document_fromstring(_XML_DECLARATION.sub("", page, count=1))
    for bad in root.xpath("//script|//style|//noscript|//template"):
        bad.drop_tree()
    body = root.find("body")
    node = body if body is not None else root
    lines = (" ".join(part.split()) for part in node.itertext())
    return "\n".join(line for line in lines if line)


# ------------------------------------------------------------------------------------------------ PDF
def convert_pdf(data: bytes) -> Parts:
    """Text of every page (pypdf, layout-free extraction), then the document information dictionary."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        opened: object
        try:
            opened = reader.decrypt("")  # many PDFs are "encrypted" with an empty user password
        except Exception:  # unsupported algorithms raise library-specific errors
            opened = 0
        if not opened:
            raise ValueError("PDF chiffré (un mot de passe est nécessaire)")
    pages = reader.pages
    if len(pages) > FORMAT_LIMITS.max_pdf_pages:
        raise ValueError(f"{len(pages)} pages, au-delà de la limite de {FORMAT_LIMITS.max_pdf_pages}")
    texts: list[str] = []
    size = 0
    for page in pages:
        page_text = page.extract_text() or ""
        texts.append(page_text)
        size += len(page_text)
        if size > FORMAT_LIMITS.max_text_chars:
            break
    meta = _Meta()
    info = reader.metadata
    if info is not None:
        meta.put("title", _pdf_str(info.get("/Title")), "pdf properties")
        meta.put("author", _pdf_str(info.get("/Author")), "pdf properties")
        stamped = _pdf_date(info, "creation_date") or _pdf_date(info, "modification_date")
        ignored = pdf_date_kept(_pdf_str(info.get("/Creator")), _pdf_str(info.get("/Producer")))
        if stamped is not None and ignored is not None:
            meta.origins["date_ignored"] = ignored  # derive_fields tells the reader (a document note)
        else:
            meta.put("date", stamped, "pdf properties")
    return Parts(_cap("\n\n".join(texts)), meta.title, meta.date, meta.author, meta.origins)


def _pdf_str(value: object) -> str | None:
    return str(value) if value is not None else None


def _pdf_date(info: Any, attribute: str) -> datetime.datetime | None:
    try:
        value = getattr(info, attribute)
    except Exception:  # a malformed date string raises ValueError inside pypdf
        return None
    return value if isinstance(value, datetime.datetime) else None


# ----------------------------------------------------------------------------------------------- DOCX
_HEADING_STYLE = re.compile(r"(?:heading|titre|überschrift)\s*(\d)", re.IGNORECASE)

# python-docx keeps a document's parts in reference cycles (package <-> parts <-> relationships), and
# the lxml trees they hold are C memory the garbage collector does not count: between two full
# collections converted DOCX pile up (~170 KB each; a 20,000-document ingest peaked ~200 MiB higher
# in its DOCX batch, docs/benchmarks.md). A full collection every few DOCX bounds that memory.
_DOCX_PER_COLLECTION = 32
_docx_converted = itertools.count(1)


def convert_docx(data: bytes) -> Parts:
    """Paragraphs and tables in document order (python-docx); ``Heading N`` styles become ``#`` lines;
    the core properties give title, author and dates."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        declared = sum(info.file_size for info in archive.infolist())
    if declared > FORMAT_LIMITS.max_docx_uncompressed:
        raise ValueError(f"archive de {declared} octets une fois décompressée, au-delà de la limite")
    import docx

    try:
        return _docx_parts(docx.Document(io.BytesIO(data)))
    finally:
        if next(_docx_converted) % _DOCX_PER_COLLECTION == 0:
            gc.collect()


def _docx_parts(document: Any) -> Parts:
    # Style names by id, read once: Paragraph.style scans every style of the document at each call
    # (90 % of the conversion time on a 20 KB report).
    style_names = {s.style_id: s.name or "" for s in document.styles}
    lines: list[str] = []
    first_heading: str | None = None
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: one line per row, cells separated by ' | '
            for row in block.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                if any(cells):
                    lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
            continue
        text = block.text.strip()
        if not text:
            continue
        level = _heading_level(style_names.get(_style_id(block), ""))
        if level:
            first_heading = first_heading or " ".join(text.split())
            lines.append("#" * level + " " + " ".join(text.split()))
        else:
            lines.append(text)
        lines.append("")
    meta = _Meta()
    props = document.core_properties
    meta.put("title", props.title, "docx properties")
    meta.put("author", props.author, "docx properties")
    ignored = docx_date_kept(props.created, props.modified, props.revision)
    if ignored is not None:
        meta.origins["date_ignored"] = ignored  # derive_fields tells the reader (a document note)
    else:
        meta.put("date", props.created or props.modified, "docx properties")
    meta.put("title", first_heading, "first heading")
    return Parts(_cap("\n".join(lines)), meta.title, meta.date, meta.author, meta.origins)


def _style_id(paragraph: Any) -> str:
    p_pr = paragraph._p.pPr  # the paragraph's XML: its pStyle is the style id (python-docx oxml API)
    style = p_pr.pStyle if p_pr is not None else None
    return str(style.val) if style is not None else ""


def _heading_level(style: str) -> int:
    if style.lower() == "title":
        return 1
    match = _HEADING_STYLE.search(style)
    return min(6, max(1, int(match.group(1)))) if match else 0
