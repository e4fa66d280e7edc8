"""Plain helpers of the veille flow: settings from parameters, step inputs, branch collection, run.json,
and :class:`RunLog`, the run's bookkeeping (alerts, step results, failures) between the steps.

Kept out of flows/veille.py so the flow reads like the seeds' diagrams.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from veille.alerts import Alert
from veille.corpus.request import Request
from veille.corpus.terms import derive_terms
from veille.journal import CallRecord
from veille.roles.planner import CatalogueEntry, Plan, PlannerInput, SubTask
from veille.roles.writer import SourceRef
from veille.runfolder import RunFolder, RunInfo, new_run_id, note_run_folder
from veille.settings import ROLES, Settings
from veille.steps.analyse import Analysis, failed_analysis
from veille.steps.plan import PlanOutcome
from veille.steps.review import ReviewOutcome
from veille.steps.write import FinalReport, WrittenDraft
from veille.store.ingest import IngestReport
from veille.summary import INGEST_FILE, ingest_record

if TYPE_CHECKING:
    from prefect.states import State

__all__ = [
    "RESULTS_DIRNAME",
    "RunLog",
    "RunOutputs",
    "build_settings",
    "collect_branches",
    "final_alerts",
    "make_run_info",
    "planner_input",
    "record_note",
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


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def record_note(recorded: Mapping[str, Any]) -> str:
    """The record step's log summary (rows per table) from ``tasks.record.record_run``'s result."""
    rows = recorded.get("rows") or {}
    return ", ".join(f"{table} {count}" for table, count in sorted(rows.items())) or "nothing"


class RunOutputs(TypedDict):
    """Keyword arguments of ``tasks.outputs.write_outputs`` besides the folder and run.json."""

    plan: Plan | None
    analyses: Sequence[Analysis]
    sources: Sequence[SourceRef]
    review: ReviewOutcome | None
    alerts: Sequence[Alert]
    report: str | None
    documents: Sequence[tuple[str, str]]


@dataclass
class RunLog:
    """What one run has reached so far: its alerts (in step order) and each step's result.

    The flow keeps each step's result here as it goes, so that whatever step the run stopped at,
    :meth:`info` and :meth:`outputs` still describe it fully. The ``keep_*`` methods that return a
    string return the step's log summary (the flow appends the usage of the step's roles).
    """

    settings: Settings
    folder: RunFolder
    started: datetime
    alerts: list[Alert] = field(default_factory=list)
    request_title: str = ""
    snapshot: list[tuple[str, str]] = field(default_factory=list)  # (document id, content hash)
    plan: Plan | None = None
    analyses: list[Analysis] = field(default_factory=list)
    review: ReviewOutcome | None = None
    final: FinalReport | None = None
    error: BaseException | None = None

    @classmethod
    def start(cls, settings: Settings) -> RunLog:
        """A new run: id from its start time, folder created under ``settings.runs_dir``."""
        started = utc_now()
        return cls(settings, RunFolder(settings.runs_dir, new_run_id(started)).create(), started)

    @contextmanager
    def failure_as_alert(self) -> Iterator[None]:
        """The first exception ends the block: a ``run.failed`` alert, and ``error`` for run.json
        and for :meth:`outcome` to re-raise once the run folder is written."""
        try:
            yield
        except Exception as exc:
            self.error = exc
            self.alerts.append(run_alert("run.failed", _error_text(exc)))

    @contextmanager
    def grading(self, log: logging.Logger | logging.LoggerAdapter[Any]) -> Iterator[None]:
        """Grading informs; it must not fail a run whose report is written: a failure is logged,
        alerted as ``grade.failed`` and alerts.json rewritten."""
        try:
            yield
        except Exception as exc:
            log.warning("grade: failed (%s: %s)", type(exc).__name__, exc)
            self.alerts.append(run_alert("grade.failed", _error_text(exc), "warning"))
            self.folder.write_alerts(self.alerts)

    def add(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Keeps ``alerts``; returns them."""
        added = list(alerts)
        self.alerts += added
        return added

    def keep_ingest(self, report: IngestReport) -> None:
        """The ingest's alerts, and its summary as ingest.json (written at once: a later failure keeps it)."""
        self.add(report.alerts)
        self.folder.write_json(INGEST_FILE, ingest_record(report))

    def keep_plan(self, planned: PlanOutcome) -> str:
        self.plan = planned.plan
        self.add(planned.alerts)
        excluded = len(planned.plan.excluded)
        return (
            f"{len(planned.plan.sub_tasks)} sub-task(s), {excluded} excluded, {len(planned.alerts)} alert(s)"
        )

    def keep_analyses(self, analyses: Sequence[Analysis]) -> str:
        self.analyses = list(analyses)
        for a in self.analyses:
            self.add(a.alerts)
        failed = self.failed_subtasks()
        return f"{len(analyses) - len(failed)} branch(es) ok, failed: {failed or 'none'}"

    def failed_subtasks(self) -> list[str]:
        return [a.subtask_id for a in self.analyses if a.status == "failed"]

    def failed_questions(self) -> list[str]:
        return [a.question for a in self.analyses if a.status == "failed"]

    def require_a_branch(self) -> None:
        """Raises when no analyst branch succeeded (or there was none): no report to write."""
        failed = self.failed_subtasks()
        if len(failed) == len(self.analyses):
            raise RuntimeError(f"every analyst branch failed ({', '.join(failed)}): no report to write")

    def keep_draft(self, written: WrittenDraft) -> str:
        """The writer step's alerts; returns its summary."""
        self.add(written.alerts)
        return f"{len(written.sources)} source(s) numbered, {len(written.alerts)} alert(s)"

    def keep_review(self, reviewed: ReviewOutcome) -> None:
        self.review = reviewed
        self.add(reviewed.alerts)

    def keep_final(self, final: FinalReport) -> str:
        """The shipped report and its alerts; returns the review step's summary."""
        self.final = final
        self.add(final_alerts(final, self.failed_subtasks()))
        rounds = len(self.review.rounds) if self.review else 0
        verdict = "validated" if self.review and self.review.validated else "NOT validated"
        return f"{rounds} round(s), {verdict}; {len(final.sources)} source(s) cited"

    def info(self, backend: str, records: Iterable[CallRecord]) -> RunInfo:
        """run.json's content for what the run reached (``backend``: gemini | offline | scripted)."""
        return make_run_info(
            settings=self.settings,
            run_id=self.folder.run_id,
            started=self.started,
            backend=backend,
            request_title=self.request_title,
            plan=self.plan,
            analyses=self.analyses,
            validated=bool(self.review and self.review.validated),
            rounds=len(self.review.rounds) if self.review else 0,
            records=records,
            error=self.error,
        )

    def outputs(self) -> RunOutputs:
        return RunOutputs(
            plan=self.plan,
            analyses=self.analyses,
            sources=self.final.sources if self.final else [],
            review=self.review,
            alerts=self.alerts,
            report=self.final.markdown if self.final else None,
            documents=self.snapshot,
        )

    def outcome(self, info: RunInfo) -> str | State:
        """The flow's return once everything is written and recorded: the run folder path, or a
        Failed state (its data: the path) when a branch failed. A step's error is re-raised, noted
        with the run folder so the CLI shows what the failed run wrote."""
        from prefect.states import Failed

        if self.error is not None:
            note_run_folder(self.error, self.folder.path)
            raise self.error
        if info.status == "failed":
            return Failed(
                message=f"{info.subtasks_failed} branch(es) failed; partial report in {self.folder.path}",
                data=str(self.folder.path),
            )
        return str(self.folder.path)
