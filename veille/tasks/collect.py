"""Task: collect the watched feeds and pages into the corpus (thin wrapper over veille.collect)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from prefect.cache_policies import NO_CACHE
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger

from veille.settings import Settings
from veille.tasks.datatask import task

if TYPE_CHECKING:
    from veille.collect import CollectReport

__all__ = ["collect"]


def _logger() -> logging.Logger | logging.LoggerAdapter[logging.Logger]:
    try:
        return get_run_logger()
    except MissingContextError:  # called through .fn() outside a run (tests)
        return logging.getLogger(__name__)


# NO_CACHE: it reads the web and writes the corpus; a cached result would skip a night's news.
# No retries: a failing source is already an alert, and the next night fetches again.
@task(name="collect", cache_policy=NO_CACHE)
def collect(settings: Settings) -> CollectReport:
    """Fetch ``<corpus>/sources.toml``'s sources into ``<corpus>/docs`` (one alert per failing source)."""
    from veille.collect import collect_night  # only a corpus with sources.toml pays for its imports

    report = collect_night(settings.corpus_dir, max_doc_bytes=settings.max_doc_bytes)
    log = _logger()
    log.info("collect: %s", report.note())
    for alert in report.alerts:
        level = {"info": logging.INFO, "warning": logging.WARNING}.get(alert.severity, logging.ERROR)
        log.log(level, "%s: %s", alert.code, alert.message)
    return report
