"""Tasks: corpus ingestion into DuckDB and the catalogue (thin wrappers over veille.store)."""

from __future__ import annotations

import logging

from prefect.cache_policies import NO_CACHE
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger

from veille.alertlines import log_alerts
from veille.settings import Settings
from veille.store.ingest import IngestReport, ingest_corpus
from veille.store.readers import Catalogue, read_catalogue
from veille.tasks.datatask import task

__all__ = ["catalogue", "ingest"]


def _logger() -> logging.Logger | logging.LoggerAdapter[logging.Logger]:
    try:
        return get_run_logger()
    except MissingContextError:  # called through .fn() outside a run (tests)
        return logging.getLogger(__name__)


# NO_CACHE: both tasks read or change state outside their inputs (files, the database); a cached
# result would hide an edited corpus.
@task(name="ingest", cache_policy=NO_CACHE)
def ingest(settings: Settings) -> IngestReport:
    """Incremental ingestion of ``settings.corpus_dir`` into ``settings.database`` (one transaction)."""
    # Said before it starts: a first ingestion (conversions, the Arrow writer's imports) takes seconds.
    _logger().info("ingest: reading %s into %s", settings.corpus_dir, settings.database)
    report = ingest_corpus(
        settings.corpus_dir,
        settings.database,
        strict=settings.strict,
        max_doc_bytes=settings.max_doc_bytes,
        file_clock=settings.date_from_file_clock,
        request=settings.request,
    )
    log = _logger()
    log.info(
        "ingest: %d added, %d updated, %d unchanged, %d removed, %d skipped; %d documents",
        report.added,
        report.updated,
        report.unchanged,
        report.removed,
        report.skipped,
        report.documents,
    )
    log_alerts(log, report.alerts)  # bounded per code: 2,000 invalid files are not 2,000 lines
    return report


@task(name="catalogue", cache_policy=NO_CACHE)
def catalogue(settings: Settings) -> Catalogue:
    """The catalogue the planner sees (with one-sentence summaries if ``settings.planner_sees_summaries``)."""
    listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
    _logger().info("catalogue: %d documents, ~%d tokens", len(listing.entries), listing.token_estimate)
    return listing
