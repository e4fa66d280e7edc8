"""Task: the review loop, critic → arbiter → reviser, bounded and stopping on a valid draft (seed 000)."""

from __future__ import annotations

from pathlib import Path

from prefect.cache_policies import NO_CACHE

from veille.grid import Grid
from veille.roles.base import Asker
from veille.steps.review import ReviewOutcome, review_loop
from veille.steps.sections import SectionCache
from veille.steps.write import WrittenDraft
from veille.tasks.datatask import task

__all__ = ["review"]


# NO_CACHE: its input includes the live client; the critic's and reviser's asks are cached themselves.
@task(name="review", cache_policy=NO_CACHE)
def review(
    client: Asker,
    written: WrittenDraft,
    grid: Grid,
    request: str,
    max_rounds: int,
    sections_path: Path | None = None,
) -> ReviewOutcome:
    """No task retries: critic and reviser failures are turned into alerts inside the loop. A
    validated dossier's sections are kept by the digest of their inputs (``sections_path``) for
    the nights to come; one not validated is not kept."""
    outcome = review_loop(
        client,
        written.dossier,
        grid=grid,
        sources=written.sources,
        request=request,
        max_rounds=max_rounds,
        axes=written.writer_input.axes,
        contradictions=len(written.writer_input.contradictions),
        bounds=written.writer_input.bounds,
        kept=written.kept_axes,
        context=written.verify,
        coverage=written.coverage,
    )
    if sections_path is not None and outcome.validated and written.digests:
        SectionCache(sections_path).store(
            outcome.final_dossier,
            written.sources,
            written.digests,
            written.conclusions_key,
            written.writer_input.axes,
        )
    return outcome
