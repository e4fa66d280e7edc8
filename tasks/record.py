"""Task: write the run's Parquet tables and publish its report and metrics as Prefect artifacts."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from veille.run.recovery import recover_dead_runs
from veille.settings import Settings
from veille.warehouse import RecordResult, metrics_table, record_run_dir

__all__ = ["METRICS_ARTIFACT", "REPORT_ARTIFACT", "artifact_key", "publish_artifacts", "record_run"]

logger = logging.getLogger(__name__)

REPORT_ARTIFACT = "veille-report"
METRICS_ARTIFACT = "veille-metrics"


def artifact_key(base: str, deployment: str | None) -> str:
    """``base`` (no deployment) or ``base-<deployment>``, in Prefect's key alphabet (a-z, 0-9, -).

    Stable per deployment, so each night's artifact is a new version of the same key in the UI.
    """
    if not deployment:
        return base
    slug = re.sub(r"[^a-z0-9]+", "-", deployment.lower()).strip("-")
    return f"{base}-{slug}" if slug else base


def publish_artifacts(run_dir: Path, result: RecordResult) -> dict[str, str]:
    """Markdown artifact of the report and table artifact of the metrics; returns {kind: key}."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    deployment = result.summary.get("deployment")
    report_path = Path(run_dir) / "report.md"
    if report_path.exists():
        markdown = report_path.read_text(encoding="utf-8")
    else:
        markdown = f"# Run {result.run_id}: no report\n\nStatus: {result.summary['status']}."
    keys = {
        "report": artifact_key(REPORT_ARTIFACT, deployment),
        "metrics": artifact_key(METRICS_ARTIFACT, deployment),
    }
    create_markdown_artifact(
        markdown=markdown, key=keys["report"], description=f"Dossier of run {result.run_id}"
    )
    create_table_artifact(
        table=metrics_table(result.summary),
        key=keys["metrics"],
        description=f"Cost, tokens, scores and alerts of run {result.run_id}",
    )
    return keys


@task(name="record-run", cache_policy=NO_CACHE)  # a side effect: it must run every time
def record_run(settings: Settings, run_dir: Path) -> dict[str, Any]:
    """Write every Parquet table of ``run_dir`` (also for a failed run), then publish the artifacts.

    A run already recorded raises :class:`veille.warehouse.RunAlreadyRecordedError` (not retried).
    An artifact failure is logged, not raised: the warehouse is the record of the run.
    """
    result = record_run_dir(Path(run_dir), settings.parquet_dir)
    try:
        artifacts = publish_artifacts(Path(run_dir), result)
    except Exception as exc:  # the API may be down; the Parquet files are already committed
        logger.warning("could not publish the artifacts of run %s: %s", result.run_id, exc)
        artifacts = {}
    # Runs killed before recording themselves (veille.run.recovery): recorded now, nothing lost.
    recovery = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    if recovery.recorded:
        logger.warning(
            "recorded %d run(s) that died before recording: %s", len(recovery.recorded), recovery.run_ids
        )
    return {
        "run_id": result.run_id,
        "run_date": result.run_date.isoformat(),
        "rows": result.rows,
        "files": {name: str(path) for name, path in result.files.items()},
        "missing_files": result.missing_files,
        "artifacts": artifacts,
        "recovered": recovery.run_ids,
    }
