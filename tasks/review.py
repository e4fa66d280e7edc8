"""Task: the review loop, critic → arbiter → reviser, bounded and stopping on a valid draft (seed 000)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prefect import task
from prefect.cache_policies import NO_CACHE

from veille.dossier import Dossier
from veille.grid import Grid
from veille.roles.base import Asker
from veille.roles.writer import SourceRef
from veille.steps.review import ReviewOutcome, review_loop

__all__ = ["review"]


# NO_CACHE: its input includes the live client; the response cache spares unchanged calls.
@task(name="review", cache_policy=NO_CACHE)
def review(
    client: Asker,
    draft: Dossier,
    grid: Grid,
    sources: Sequence[SourceRef],
    request: str,
    max_rounds: int,
    axes: Mapping[str, str],
    contradictions: int = 0,
) -> ReviewOutcome:
    """No task retries: critic and reviser failures are turned into alerts inside the loop."""
    return review_loop(
        client,
        draft,
        grid=grid,
        sources=sources,
        request=request,
        max_rounds=max_rounds,
        axes=axes,
        contradictions=contradictions,
    )
