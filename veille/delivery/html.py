"""report.html: the shipped report as one self-contained page (no script, no remote resource).

Built from the report's blocks (veille.delivery.blocks) and the code-built SourceRef list with
Jinja2 autoescape: every string of a model or a document is text, never markup. The only links are
citations to their bibliography entry (``#src-n``, for numbers the bibliography has) and a source's
``url`` when it is http(s) — written by code (front matter, collect, grounding chunks), never taken
from the text. The Nouveautés come first for a returning reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from veille.delivery.blocks import Segment, news_section, parse_report, segments
from veille.delivery.evidence import evidence_views, item_key
from veille.dossier import Dossier
from veille.plaintext import md_unescape
from veille.roles.writer import SourceRef

__all__ = ["REPORT_HTML_FILE", "ReportHeader", "render_report_html", "safe_url"]

REPORT_HTML_FILE = "report.html"


@dataclass(frozen=True)
class ReportHeader:
    """What a reader sees first: when, complete or partial (and why), cost, sources read."""

    run_id: str
    date: str
    complete: bool
    reasons: tuple[str, ...]
    cost: str
    sources: str


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL with a host, else None (no javascript:, data:…)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url.strip()


def _join_segments(parts: Sequence[Segment]) -> Markup:
    out = []
    for s in parts:
        if s.number is None:  # report.md's escapes undone: the page shows the text, no "\\#" nor "\\["
            out.append(escape(md_unescape(s.text)))
        else:  # the only markup: a link to the entry, built from an int
            out.append(Markup('<a class="cite" href="#src-%d">[%d]</a>') % (s.number, s.number))
    return Markup("").join(out)


@lru_cache(maxsize=1)
def _template() -> Any:
    env = Environment(
        loader=PackageLoader("veille", "data/templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["join_segments"] = _join_segments
    return env.get_template("report.html.j2")


def _source_view(s: SourceRef) -> dict[str, Any]:
    if s.kind == "web":
        label = s.domain or "web"
        parts = [p for p in (s.title if s.title != label else "", f"page web consultée le {s.date}") if p]
    else:
        label, parts = s.id, [p for p in (s.title, s.date, s.source_type) if p]
    return {"number": s.number, "label": label, "parts": parts, "url": safe_url(s.url), "flag": s.flag}


def render_report_html(
    markdown: str,
    sources: Sequence[SourceRef],
    header: ReportHeader,
    dossier: Dossier | None = None,
    anchors: Mapping[str, str] | None = None,
) -> str:
    """The page for report.md ``markdown`` and its bibliography ``sources``; ``dossier``: the
    reviewed structure, whose evidence is shown under its key points and ledger entries.
    ``anchors``: axis heading -> its sub-task id, the heading's HTML ``id`` (internal ids live
    there, never in text)."""
    evidence = evidence_views(dossier, sources)
    anchors = anchors or {}
    title, sections = parse_report(markdown)
    news = news_section(sections)
    if news is not None:  # first for a returning reader
        sections = [news, *(s for s in sections if s is not news)]
    known = frozenset(s.number for s in sources)
    views = []
    for section in sections:
        blocks: list[dict[str, Any]] = []
        for block in section.blocks:
            parts = segments(block.text, known)
            if block.kind == "item":
                if not blocks or blocks[-1]["kind"] != "items":
                    blocks.append({"kind": "items", "items": []})
                blocks[-1]["items"].append(
                    {"segments": parts, "evidence": evidence.get(item_key(block.text), [])}
                )
            else:
                anchor = anchors.get(md_unescape(block.text)) if block.kind == "h3" else None
                blocks.append({"kind": block.kind, "segments": parts, "anchor": anchor})
        views.append({"title": section.title, "blocks": blocks})
    head = {
        "run_id": header.run_id,
        "date": header.date,
        "status": "Dossier complet" if header.complete else "Dossier partiel",
        "status_class": "complete" if header.complete else "partial",
        "reasons": header.reasons,
        "cost": header.cost,
        "sources": header.sources,
    }
    page = _template().render(
        title=title or "Dossier de veille",
        header=head,
        sections=views,
        sources=[_source_view(s) for s in sorted(sources, key=lambda s: s.number)],
    )
    return str(page)
