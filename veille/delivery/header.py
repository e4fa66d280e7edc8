"""The facts at the top of report.html and of a delivery: date, complete or partial (why), cost, sources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date

from veille.delivery.html import ReportHeader, render_report_html
from veille.dossier import Dossier
from veille.journal import CallRecord
from veille.roles.writer import SourceRef
from veille.run.folder import RunInfo, run_date
from veille.run.summary import model_calls
from veille.steps.news import french_date

__all__ = ["report_header", "report_page"]


def _cost(records: Iterable[CallRecord]) -> str:
    """The dossier's calls, counted as the console counts them (logical calls, not attempts); the
    grading runs after this header is written and is counted apart there."""
    dossier = model_calls(records, grading=False)
    if dossier.cost_usd is None:
        return f"inconnu (un appel au moins sans tarif ; {dossier.calls} appel(s) au modèle pour le dossier)"
    return f"{dossier.cost_usd:.4f} $ ({dossier.calls} appel(s) au modèle pour le dossier)"


def report_header(
    info: RunInfo,
    records: Iterable[CallRecord],
    *,
    documents_read: int,
    sources_cited: int,
    failed_axes: Sequence[str] = (),
) -> ReportHeader:
    """``failed_axes``: the titles of the axes whose analysis failed, as the dossier names its axes
    (``veille.steps.headings.failed_axis_titles``)."""
    reasons: list[str] = []
    if failed_axes:
        reasons.append(
            f"{len(failed_axes)} volet(s) sur {info.subtasks_total} en échec : " + " ; ".join(failed_axes)
        )
    if info.status == "failed" and not failed_axes:
        reasons.append("exécution en échec : le dossier ne couvre que ce qui a abouti")
    return ReportHeader(
        run_id=info.run_id + (f" (tentative {info.attempt})" if info.attempt and info.attempt > 1 else ""),
        date=french_date(date.fromisoformat(run_date(info.run_id))),
        complete=info.status == "completed" and not failed_axes,
        reasons=tuple(reasons),
        cost=_cost(records),
        sources=f"{documents_read} document(s) lu(s), {sources_cited} source(s) citée(s)",
    )


def report_page(
    info: RunInfo,
    records: Iterable[CallRecord],
    markdown: str,
    sources: Sequence[SourceRef],
    *,
    documents_read: int,
    failed_axes: Sequence[str] = (),
    dossier: Dossier | None = None,
    anchors: Mapping[str, str] | None = None,
) -> str:
    """report.html for a run: its header facts, then the dossier (``dossier``: the reviewed
    structure, for the evidence under its items; ``anchors``: axis heading -> id)."""
    header = report_header(
        info, records, documents_read=documents_read, sources_cited=len(sources), failed_axes=failed_axes
    )
    return render_report_html(markdown, sources, header, dossier, anchors)
