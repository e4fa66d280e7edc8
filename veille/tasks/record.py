"""Task: write the run's Parquet tables and publish its report and metrics as Prefect artifacts."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from prefect.cache_policies import NO_CACHE

from veille.ops.latest import point_deployment_at
from veille.run.folder import mark_failed
from veille.run.metrics import failed_branches, report_description
from veille.run.metrics_page import metrics_markdown
from veille.run.recovery import recover_dead_runs
from veille.secrets import scrub_text
from veille.settings import Settings
from veille.tasks.datatask import task
from veille.warehouse import RecordResult, RunAlreadyRecordedError, metrics_table, record_run_dir

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
    """Markdown artifacts of the report and of the metrics; returns {kind: key}."""
    from prefect.artifacts import create_markdown_artifact

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
    report_id = create_markdown_artifact(
        markdown=scrub_text(markdown),
        key=keys["report"],
        description=scrub_text(report_description(result.run_id, run_dir)),
    )
    if deployment:  # the deployment page links to this night's dossier
        from prefect.runtime import deployment as current_deployment

        complete = result.summary["status"] == "completed" and not failed_branches(run_dir)
        point_deployment_at(current_deployment.id, report_id, result.run_id, complete)
    create_markdown_artifact(  # a few readable tables: headline, per step, per role, alerts, reuse
        markdown=scrub_text(
            metrics_markdown(
                run_dir, metrics_table(result.summary, _alerts(Path(run_dir))), _cached_task_runs()
            )
        ),
        key=keys["metrics"],
        description=f"Cost, tokens, scores and alerts of run {result.run_id} ({result.summary['status']})",
    )
    return keys


def _run_logger() -> logging.Logger | logging.LoggerAdapter[Any]:
    """The task run's logger (lines reach the run's Logs tab), this module's outside a run."""
    from prefect import get_run_logger
    from prefect.exceptions import MissingContextError

    try:
        return get_run_logger()
    except MissingContextError:
        return logger


def _cached_task_runs() -> int | None:
    """Task runs of the current flow run that ended Cached (None outside a flow run or if the API fails)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
        TaskRunFilterState,
        TaskRunFilterStateName,
    )
    from prefect.runtime import flow_run

    if not flow_run.id:
        return None
    try:
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])),
                task_run_filter=TaskRunFilter(
                    state=TaskRunFilterState(name=TaskRunFilterStateName(any_=["Cached"]))
                ),
            )
    except Exception as exc:  # cosmetic: the artifact says "unknown"
        logger.warning("could not count the cached task runs: %s", exc)
        return None
    return len(runs)


def _alerts(run_dir: Path) -> list[dict[str, Any]]:
    """alerts.json (for the metrics artifact's headline alerts); [] when absent or unreadable."""
    try:
        alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [a for a in alerts if isinstance(a, dict)] if isinstance(alerts, list) else []


@task(name="record-run", cache_policy=NO_CACHE)  # a side effect: it must run every time
def record_run(settings: Settings, run_dir: Path) -> dict[str, Any]:
    """Write every Parquet table of ``run_dir`` (also for a failed run), then publish the artifacts.

    A run already recorded raises :class:`veille.warehouse.RunAlreadyRecordedError` (not retried).
    An artifact failure is logged, not raised: the warehouse is the record of the run.
    """
    try:
        result = record_run_dir(Path(run_dir), settings.parquet_dir)
    except RunAlreadyRecordedError:
        raise
    except Exception as exc:
        # The process fails after its report: run.json must say so (the next run records this folder
        # from it, veille.run.recovery), not `completed`.
        mark_failed(Path(run_dir), f"recording failed: {type(exc).__name__}: {exc}")
        raise
    try:
        artifacts = publish_artifacts(Path(run_dir), result)
    except Exception as exc:  # the API may be down; the Parquet files are already committed
        logger.warning("could not publish the artifacts of run %s: %s", result.run_id, exc)
        artifacts = {}
    # Runs killed before recording themselves (veille.run.recovery): recorded now, nothing lost.
    recovery = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    if recovery.recorded:
        _run_logger().warning(
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
