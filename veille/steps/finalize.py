"""The shipped report (seed 004): the reviewed structure rendered, failed axes named, the news
section placed, citations renumbered by first appearance, ``## Sources`` built by code."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from veille.citations import bibliography, invalid_citations, renumber_citations, strip_citations
from veille.dossier import KEY_POINTS_SECTION, NEWS_SECTION, CitedText, Dossier, render_body
from veille.roles.writer import SourceRef
from veille.steps.news import Changes, render_news
from veille.store.readers import source_metadata
from veille.textstats import SOURCES_HEADING

__all__ = [
    "MISSING_AXIS",
    "FinalReport",
    "assemble_report",
    "document_refs",
    "finalize_report",
    "name_missing_axes",
    "restate_source_count",
]

MISSING_AXIS = "Axe non couvert (analyse en échec) : "


def name_missing_axes(dossier: Dossier, missing_axes: Sequence[str]) -> Dossier:
    """Every failed axis named under "Ce qui reste incertain" (added by code when the model did not)."""
    present = " ".join(u.text for u in dossier.uncertainties)
    added = [CitedText(text=f"{MISSING_AXIS}{axis}") for axis in missing_axes if axis not in present]
    if not added:
        return dossier
    return dossier.model_copy(update={"uncertainties": [*dossier.uncertainties, *added]})


def assemble_report(title: str, body: str, sources: Sequence[SourceRef]) -> str:
    """``# title``, the rendered sections, then the code-built ``## Sources``."""
    text = body.strip()
    sources_text = bibliography(sources) if sources else "Aucune source citée."
    return f"# {' '.join(title.split())}\n\n{text}\n\n## {SOURCES_HEADING}\n\n{sources_text}\n"


@dataclass(frozen=True)
class FinalReport:
    """The shipped report: failed axes named, citations renumbered, Sources appended."""

    markdown: str  # the whole report.md
    body: str  # the rendered sections as shipped (no title, no Sources)
    sources: list[SourceRef]  # renumbered, cited ones only
    removed_orphans: list[int]  # orphan numbers stripped by code (an alert is due when non-empty)


_SOURCE_COUNT_RE = re.compile(r"\b(à partir de )(\d+)( sources?\b)")


def restate_source_count(body: str, listed: int) -> str:
    """« à partir de N sources » says how many sources the ``## Sources`` list holds: the writer
    counted before review and renumbering, which may drop uncited ones."""
    noun = "source" if listed <= 1 else "sources"
    return _SOURCE_COUNT_RE.sub(lambda m: f"{m.group(1)}{listed} {noun}", body)


def _news_after_synthesis(body: str) -> str:
    """Move the trailing ``## Nouveautés`` section between the synthesis and the key points."""
    start = body.rfind(f"\n\n## {NEWS_SECTION}")
    if start < 0:
        return body
    news, rest = body[start:].strip("\n"), body[:start].rstrip("\n")
    cut = rest.find(f"\n\n## {KEY_POINTS_SECTION}\n")
    if cut < 0:
        return f"{rest}\n\n{news}\n"
    return f"{rest[:cut]}\n\n{news}{rest[cut:]}\n"


def document_refs(db_path: Path, ids: Sequence[str]) -> dict[str, SourceRef]:
    """SourceRef (number 0: numbered where they are cited) of the valid documents among ``ids``."""
    return {
        i: SourceRef(
            number=0,
            id=m.id,
            title=m.title,
            date=m.date,
            source_type=m.source_type,
            url=m.url,
            date_origin=m.date_origin,
        )
        for i, m in source_metadata(db_path, ids).items()
    }


def finalize_report(
    title: str,
    dossier: Dossier,
    sources: Sequence[SourceRef],
    axes: Mapping[str, str],
    missing_axes: Sequence[str] = (),
    changes: Changes | None = None,
    metadata: Mapping[str, SourceRef] | None = None,
) -> FinalReport:
    """Render the reviewed structure, name failed axes, renumber by first appearance, append the
    bibliography. Zero tolerance for orphans (none survive sanitising; stripped here anyway).

    ``changes``: what changed since the previous dossier; its ``## Nouveautés`` section goes after
    the synthesis, citing the new and changed documents (``metadata``: their SourceRef, for those
    no analyst cited)."""
    body = render_body(name_missing_axes(dossier, missing_axes), axes)
    if changes is not None:
        # Numbered at the end, shown after the synthesis: the five sections keep the numbers they
        # have without it (a report and its grades stay comparable night to night), and the
        # documents cited only here come last.
        news, sources = render_news(changes, dossier, sources, metadata or {})
        body = body.rstrip("\n") + "\n\n" + news + "\n"
    orphans = invalid_citations(body, sources)
    if orphans:
        body = strip_citations(body, orphans)
    body, kept_sources = renumber_citations(body, sources)
    body = restate_source_count(body, len(kept_sources))
    if changes is not None:
        body = _news_after_synthesis(body)
    return FinalReport(assemble_report(title, body, kept_sources), body, kept_sources, orphans)
