"""Task: number the sources (code) and have the writer turn the findings into the draft (seed 004)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import exponential_backoff
from pydantic import BaseModel, Field

from tasks.clients import retry_transient
from veille.alerts import Alert
from veille.analysis import Analysis, ModelClientLike, number_findings
from veille.corpus import Request
from veille.grid import Grid
from veille.review import write_draft
from veille.roles.writer import SourceRef, WriterInput
from veille.sourcemeta import source_metadata

__all__ = ["WrittenDraft", "write_report"]


class WrittenDraft(BaseModel):
    draft: str
    sources: list[SourceRef]
    writer_input: WriterInput
    alerts: list[Alert] = Field(default_factory=list)


@task(
    name="write-report",
    cache_policy=NO_CACHE,  # cheap to redo, and the model response cache already spares unchanged calls
    retries=2,
    retry_delay_seconds=exponential_backoff(backoff_factor=2),
    retry_condition_fn=retry_transient,
)
def write_report(
    client: ModelClientLike, analyses: Sequence[Analysis], request: Request, grid: Grid, db_path: Path
) -> WrittenDraft:
    """Sources numbered in order of first citation across branches; the writer sees numbers only."""
    cited = [i for a in analyses for f in a.findings.findings for i in f.doc_ids]
    cited += [i for a in analyses for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)]
    metadata = source_metadata(db_path, cited)
    data, sources = number_findings(
        analyses,
        metadata,
        request_title=request.title,
        request=request.text,
        mandatory_mentions=grid.mandatory_mentions,
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
    )
    draft, alerts = write_draft(client, data)
    return WrittenDraft(draft=draft, sources=sources, writer_input=data, alerts=alerts)
