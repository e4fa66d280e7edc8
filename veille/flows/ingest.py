"""Flow ``ingest``: ingest the corpus into DuckDB, then build the catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from veille.ops.heartbeats import install_heartbeat_release
from veille.ops.statescrub import install_state_scrubbing
from veille.settings import Settings
from veille.store.ingest import IngestReport
from veille.tasks.ingest import catalogue, ingest

__all__ = ["ingest_flow", "ingest_settings"]

install_state_scrubbing()  # a run's state message holds no secret (veille.ops.statescrub)
install_heartbeat_release()  # a run's end does not wait for the heartbeat thread's sleep (veille.ops.heartbeats)


def ingest_settings(
    corpus: str | Path | None = None, strict: bool = False, warehouse: str | Path | None = None
) -> Settings:
    """Settings for an ingestion: explicit values over environment / veille.toml. ``strict=False`` means
    "not forced" (VEILLE_STRICT=true still applies)."""
    overrides: dict[str, Any] = {}
    if corpus is not None:
        overrides["corpus_dir"] = Path(corpus).expanduser()
    if warehouse is not None:
        overrides["warehouse_dir"] = Path(warehouse).expanduser()
    if strict:
        overrides["strict"] = True
    return Settings(**overrides)


@flow(name="ingest", log_prints=False)
def ingest_flow(
    corpus: str | None = None,
    strict: bool = False,
    warehouse: str | None = None,
    settings: Settings | None = None,
) -> IngestReport:
    """Ingest ``corpus`` (default: the bundled corpus) and build the catalogue. A caller that already
    built its Settings (the CLI) passes them as ``settings``; the other parameters are then ignored."""
    if settings is None:
        settings = ingest_settings(corpus, strict, warehouse)
    report = ingest(settings)
    catalogue(settings)
    return report
