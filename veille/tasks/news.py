"""Task: what changed since the previous completed run of this corpus (issue 13)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from prefect.cache_policies import NO_CACHE

from veille.alerts import alert
from veille.settings import Settings
from veille.steps.news import Changes, compare_snapshots, previous_dossier
from veille.tasks.datatask import task
from veille.warehouse.errors import WarehouseError
from veille.warehouse.previous import previous_run

__all__ = ["what_changed"]


@task(name="what-changed", cache_policy=NO_CACHE)  # a few small warehouse reads
def what_changed(settings: Settings, run_id: str, snapshot: Sequence[tuple[str, str]]) -> Changes:
    """Tonight's document snapshot against the last completed run's (warehouse); the first run on
    a corpus has no previous one."""
    try:
        previous = previous_run(settings.parquet_dir, str(settings.corpus_dir), run_id)
    except WarehouseError as exc:  # the news must not cost the night its dossier
        problem = alert(
            "news",
            "news.previous_unreadable",
            f"dossier précédent illisible dans l'entrepôt, section Nouveautés écrite comme un premier dossier : {exc}",
            severity="warning",
        )
        return replace(compare_snapshots(None, snapshot), alerts=(problem,))
    if previous is None:
        return compare_snapshots(None, snapshot)
    dossier = previous_dossier(
        previous.run_id,
        previous.started_at.date(),
        previous.documents,
        previous.markdown,
        previous.sources,
        previous.plan,
    )
    return compare_snapshots(dossier, snapshot)
