"""Task: number the sources (code) and have the writer turn the findings into the draft (seed 004)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect.cache_policies import NO_CACHE

from veille.corpus.request import Request
from veille.corpus.request_reading import RequestReading
from veille.grid import Grid
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.settings import Settings
from veille.steps.analyse import Analysis
from veille.steps.finalize import FinalReport, document_refs, finalize_report
from veille.steps.news import Changes
from veille.steps.research import WebResearch
from veille.steps.review import ReviewOutcome
from veille.steps.sections import SECTIONS_FILE, SectionCache
from veille.steps.write import WrittenDraft, write_sourced_draft
from veille.tasks.clients import MODEL_TASK_RETRIES
from veille.tasks.datatask import task

__all__ = ["WrittenDraft", "finish_report", "sections_path", "write_report"]


def sections_path(settings: Settings) -> Path | None:
    """Where validated sections are kept across nights (veille.steps.sections), or None without
    the response cache (every call asked again, as asked). Every backend: the offline writer too
    is asked for the changed axes only and updates the previous conclusions
    (veille.offline.writer_update)."""
    if not settings.use_cache:
        return None
    return settings.cache_dir / SECTIONS_FILE


@task(
    name="write-report",
    cache_policy=NO_CACHE,  # cheap to redo, and the model response cache already spares unchanged calls
    **MODEL_TASK_RETRIES,
)
def write_report(
    client: Asker,
    analyses: Sequence[Analysis],
    request: Request,
    grid: Grid,
    db_path: Path,
    web: Sequence[WebResearch] = (),
    bounds: Bounds | None = None,
    sections_path: Path | None = None,
    writer_key: str = "",
    reading: RequestReading | None = None,
    memo: Path | None = None,
) -> WrittenDraft:
    """Sources (documents and web pages) numbered in order of first citation across branches; the
    writer sees numbers only; ``bounds``: code's on what it writes (Settings); ``sections_path``:
    the sections kept across nights (veille.steps.sections), None to write every axis; ``reading``:
    the request read once (its options and what it asks for shape the sections); ``memo``: where
    the verifier's results are kept across nights (veille.steps.verify_memo), None: not kept."""
    sections = SectionCache(sections_path) if sections_path is not None else None
    return write_sourced_draft(
        client, analyses, request, grid, db_path, web, bounds, sections, writer_key,
        reading=reading, memo=memo,
    )  # fmt: skip


def finish_report(
    title: str,
    written: WrittenDraft,
    reviewed: ReviewOutcome,
    missing_axes: Sequence[str],
    changes: Changes | None = None,
    db_path: Path | None = None,
) -> FinalReport:
    """The reviewed structure rendered with the sources the writer step numbered (no model call);
    with ``changes``, the ``## Nouveautés`` section citing the new and changed documents."""
    touched = list(changes.touched) if changes is not None else []
    metadata = document_refs(db_path, touched) if touched and db_path is not None else {}
    return finalize_report(
        title,
        reviewed.final_dossier,
        written.sources,
        written.writer_input.axes,
        missing_axes,
        changes=changes,
        metadata=metadata,
    )
