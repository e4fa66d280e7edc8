"""What a run reports about itself: run.json's facts, the alerts about the shipped report, the
record step's note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from veille.alerts import Alert, Severity, alert
from veille.journal import CallRecord
from veille.run.folder import RunInfo
from veille.settings import Settings

if TYPE_CHECKING:  # types only: an unchanged night never imports the steps it skips
    from veille.roles.planner import Plan
    from veille.steps.analyse import Analysis
    from veille.steps.finalize import FinalReport

__all__ = [
    "deployment_name",
    "final_alerts",
    "flow_run_facts",
    "make_run_info",
    "record_note",
    "run_alert",
    "utc_now",
]


def utc_now() -> datetime:
    return datetime.now(UTC)


def _models(records: Iterable[CallRecord]) -> dict[str, str]:
    """Role -> the model that answered its calls: only roles that made a call (an offline run
    lists ``offline``, never a configured Gemini id for a role that made no call)."""
    return {record.role: record.model for record in records if record.model}


def flow_run_facts() -> dict[str, Any]:
    """The Prefect flow run this run belongs to: ``flow_run_id`` and ``attempt`` (None outside one)."""
    from prefect.runtime import flow_run

    flow_run_id = flow_run.id
    if not flow_run_id:
        return {"flow_run_id": None, "attempt": None}
    return {"flow_run_id": str(flow_run_id), "attempt": max(1, int(flow_run.run_count or 1))}


def deployment_name() -> str | None:
    """The name of the deployment the current flow run belongs to; None outside one or for a run of
    no deployment. A flow run carries its deployment id in its run context, where Prefect's
    ``deployment.id`` reads it; but when that id is None it asks the API for the flow run (a new API
    client, its TLS set-up and a round trip, each night of every run that is not a deployment's:
    ``veille run``, the tests). A run with no parent (a subflow may inherit its parent's deployment)
    and no deployment id in its context has none: answered here without asking."""
    from prefect.context import FlowRunContext
    from prefect.runtime import deployment

    context = FlowRunContext.get()
    run = context.flow_run if context is not None else None
    if run is not None and run.deployment_id is None and run.parent_task_run_id is None:
        return None
    return deployment.name if deployment.id else None


def make_run_info(
    *,
    settings: Settings,
    run_id: str,
    started: datetime,
    backend: str,
    request_title: str,
    plan: Plan | None,
    analyses: Sequence[Analysis],
    validated: bool,
    rounds: int,
    records: Iterable[CallRecord],
    error: BaseException | None,
) -> RunInfo:
    failed = sum(1 for a in analyses if a.status == "failed")
    status = "failed" if error is not None or failed else "completed"
    return RunInfo(
        run_id=run_id,
        **flow_run_facts(),
        deployment=deployment_name(),
        started_at=started.isoformat(),
        finished_at=utc_now().isoformat(),
        status=status,
        corpus_dir=str(settings.corpus_dir),
        request_title=request_title,
        backend=backend,
        models=_models(records),
        validated=validated,
        rounds=rounds,
        subtasks_total=len(plan.sub_tasks) if plan else 0,
        subtasks_failed=failed,
        settings=settings.model_dump(mode="json"),
        error=None if error is None else f"{type(error).__name__}: {error}"[:1000],
    )


def final_alerts(final: FinalReport, failed: Sequence[str]) -> list[Alert]:
    """Alerts about the shipped report: orphans stripped by code, axes missing after failed branches."""
    alerts = []
    if final.removed_orphans:
        alerts.append(
            alert(
                "report",
                "report.orphan_citation_stripped",
                f"citations orphelines retirées du rapport final : {final.removed_orphans}",
                severity="warning",
            )
        )
    if failed:
        alerts.append(
            run_alert(
                "run.partial_report",
                f"rapport partiel : branche(s) en échec {list(failed)}, axe(s) nommé(s) dans « Ce qui reste incertain »",
            )
        )
    return alerts


def run_alert(code: str, message: str, severity: Severity = "error", subject: str | None = None) -> Alert:
    return alert("run", code, message, severity=severity, subject=subject)


def record_note(recorded: Mapping[str, Any]) -> str:
    """The record step's log summary (rows per table) from ``veille.tasks.record.record_run``'s result."""
    rows = recorded.get("rows") or {}
    return ", ".join(f"{table} {count}" for table, count in sorted(rows.items())) or "nothing"
