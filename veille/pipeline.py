"""Plain helpers of the veille flow: settings from parameters, step inputs, branch collection, run.json.

Kept out of flows/veille.py so the flow reads like the seeds' diagrams.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veille.alerts import Alert
from veille.analysis import Analysis, failed_analysis
from veille.corpus import Request, derive_terms
from veille.models.base import CallRecord
from veille.report import FinalReport
from veille.roles.planner import CatalogueEntry, Plan, PlannerInput, SubTask
from veille.runfolder import RunInfo
from veille.settings import ROLES, Settings

__all__ = [
    "RESULTS_DIRNAME",
    "build_settings",
    "collect_branches",
    "final_alerts",
    "make_run_info",
    "planner_input",
    "results_dir",
    "run_alert",
    "utc_now",
]

# Persisted task results and cache records (retry only the failed branches). `veille clean` deletes it.
RESULTS_DIRNAME = "prefect-results"


def utc_now() -> datetime:
    return datetime.now(UTC)


def build_settings(
    *,
    corpus: str | None = None,
    backend: str | None = None,
    strict: bool = False,
    max_rounds: int | None = None,
    use_cache: bool | None = None,
    warehouse: str | None = None,
    base: Settings | None = None,
) -> Settings:
    """Settings once per run: explicit parameters over environment / veille.toml.

    ``strict=False`` means "not forced": strict mode set in the environment or veille.toml stays on.
    """
    overrides: dict[str, Any] = {}
    if corpus is not None:
        overrides["corpus_dir"] = Path(corpus).expanduser().resolve()
    if warehouse is not None:
        overrides["warehouse_dir"] = Path(warehouse).expanduser().resolve()
    if backend is not None:
        if backend not in ("auto", "gemini", "offline"):
            raise ValueError(f"backend: expected 'auto', 'gemini' or 'offline', got {backend!r}")
        overrides["backend"] = backend
    if strict:
        overrides["strict"] = True
    if max_rounds is not None:
        if max_rounds < 1:
            raise ValueError(f"max_rounds: expected an integer >= 1, got {max_rounds}")
        overrides["max_rounds"] = max_rounds
    if use_cache is not None:
        overrides["use_cache"] = use_cache
    if base is not None:
        return base.model_copy(update=overrides)
    return Settings(**overrides)


def results_dir(settings: Settings) -> Path:
    """A ``pathlib.Path`` on purpose: Prefect reads a *string* result storage as a block name."""
    return settings.warehouse_dir / RESULTS_DIRNAME


def planner_input(request: Request, catalogue: Sequence[CatalogueEntry], settings: Settings) -> PlannerInput:
    return PlannerInput(
        request_title=request.title,
        request=request.text,
        terms=derive_terms(request),
        catalogue=list(catalogue),
        max_subtasks=settings.max_subtasks,
        max_docs=settings.max_docs,
        with_summaries=settings.planner_sees_summaries,
    )


def collect_branches(sub_tasks: Sequence[SubTask], futures: Sequence[Any]) -> list[Analysis]:
    """One Analysis per sub-task, in plan order; a failed branch becomes a ``failed`` record.

    ``futures`` are the mapped analyst runs (same order as ``sub_tasks``); each is awaited, and a
    failure is read from its final state instead of being raised, so the other branches survive.
    """
    out = []
    for sub_task, future in zip(sub_tasks, futures, strict=True):
        future.wait()
        state = future.state
        if state.is_completed():
            out.append(state.result())
            continue
        error = state.result(raise_on_failure=False)
        if not isinstance(error, BaseException):
            error = RuntimeError(state.message or f"branch ended {state.type.value}")
        out.append(failed_analysis(sub_task, error))
    return out


def _models(settings: Settings, records: Iterable[CallRecord]) -> dict[str, str]:
    models: dict[str, str] = {
        role: settings.role(role).model for role in ROLES if role in settings.roles and role != "judge"
    }
    for record in records:  # what actually answered (e.g. "offline") wins over the configured id
        if record.role in models:
            models[record.role] = record.model
    return models


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
    from prefect.runtime import deployment, flow_run

    failed = sum(1 for a in analyses if a.status == "failed")
    status = "failed" if error is not None or failed else "completed"
    flow_run_id = flow_run.id
    return RunInfo(
        run_id=run_id,
        flow_run_id=str(flow_run_id) if flow_run_id else None,
        deployment=deployment.name if deployment.id else None,
        started_at=started.isoformat(),
        finished_at=utc_now().isoformat(),
        status=status,
        corpus_dir=str(settings.corpus_dir),
        request_title=request_title,
        backend=backend,
        models=_models(settings, records),
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
            Alert(
                code="report.orphan_citation_stripped",
                severity="warning",
                stage="report",
                message=f"citations orphelines retirées du rapport final : {final.removed_orphans}",
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


def run_alert(code: str, message: str, severity: str = "error", subject: str | None = None) -> Alert:
    return Alert(code=code, severity=severity, stage="run", message=message, subject=subject)  # type: ignore[arg-type]
