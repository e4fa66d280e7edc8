""":class:`RunLog`, the run's bookkeeping (alerts, step results, failures) between the steps.

Kept out of flows/veille.py so the flow reads like the seeds' diagrams.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from veille.alerts import Alert
from veille.gradestatus import GRADE_FAILED, failure_alerts, grade_counts
from veille.journal import CallRecord
from veille.run.folder import RunFolder, RunInfo, new_run_id, note_run_folder
from veille.run.info import final_alerts, flow_run_facts, make_run_info, run_alert, utc_now
from veille.run.nightskip import KeptNight, carried_alerts, render_basis, reused_note
from veille.run.summary import INGEST_FILE, ingest_record
from veille.secrets import scrub_exception
from veille.settings import Settings
from veille.warehouse.runrow import START_FILE

# Types only: an unchanged night (veille.run.nightskip) never imports the steps it skips.
if TYPE_CHECKING:
    from prefect.states import State

    from veille.corpus.request_reading import RequestReading
    from veille.roles.planner import Plan
    from veille.roles.writer import SourceRef
    from veille.steps.analyse import Analysis
    from veille.steps.finalize import FinalReport
    from veille.steps.news import Changes
    from veille.steps.plan import PlanOutcome
    from veille.steps.research import WebResearch
    from veille.steps.review import ReviewOutcome
    from veille.steps.write import WrittenDraft
    from veille.store.ingest import IngestReport

__all__ = ["PendingWeb", "RunLog", "RunOutputs"]


# Alerts saying code built a step's part because its model failed -> run.json ``rendered_by_code``.
_BY_CODE = (("plan.code_plan", "plan"), ("write.rendered_by_code", "writer"))


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


class PendingWeb(Protocol):
    """Web research under way (``veille.tasks.research.PendingResearch``): its planning alerts, and a wait."""

    alerts: list[Alert]

    def collect(self) -> list[WebResearch]: ...


class RunOutputs(TypedDict):
    """Keyword arguments of ``veille.tasks.outputs.write_outputs`` besides the folder and run.json."""

    plan: Plan | None
    plan_basis: str
    reading: RequestReading | None
    analyses: Sequence[Analysis]
    web: Sequence[WebResearch]
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
    plan_basis: str = ""  # veille.steps.plan_reuse.planner_basis, recorded in plan.json
    reading: RequestReading | None = None  # the request read once, recorded in plan.json
    analyses: list[Analysis] = field(default_factory=list)
    web: list[WebResearch] = field(default_factory=list)  # --web: each researched sub-task's findings
    draft: WrittenDraft | None = None  # the writer step's draft (its numbered sources, its axes)
    review: ReviewOutcome | None = None
    final: FinalReport | None = None
    reused: KeptNight | None = None  # an unchanged night: the night whose dossier it reuses
    error: BaseException | None = None
    run_lock: Any = None  # the run folder's lock (veille.run.recovery), when start took one

    @classmethod
    def start(cls, settings: Settings, lock: Callable[[Path], Any] | None = None) -> RunLog:
        """A new run: id from its start time, folder created under ``settings.runs_dir``. ``lock``
        (the flow's ``lock_run_folder``) is taken before anything is written in the folder, so a run
        killed at any point after leaves a folder the next run's recovery records; it is kept in
        ``run_lock``."""
        started = utc_now()
        folder = RunFolder(settings.runs_dir, new_run_id(started)).create()
        run_lock = lock(folder.path) if lock is not None else None
        # Read by the warehouse if the run dies before run.json: its flow run and attempt survive.
        folder.write_json(
            START_FILE,
            {
                "run_id": folder.run_id,
                "started_at": started.isoformat(),
                **flow_run_facts(),
                "corpus_dir": str(settings.corpus_dir),
            },
        )
        run = cls(settings, folder, started)
        run.run_lock = run_lock
        return run

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
            self.alerts.append(run_alert(GRADE_FAILED, _error_text(exc), "warning"))
            self.folder.write_alerts(self.alerts)

    def keep_grades(self, grades: Sequence[Mapping[str, Any]]) -> str:
        """A ``grade.failed`` alert per grader that raised, into alerts.json (written before
        grading) so the summary shows it; returns the grade step's summary, null grades apart."""
        failed = self.add(failure_alerts(grades))
        if failed:
            self.folder.write_alerts(self.alerts)
        return grade_counts(grades).note()

    def add(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Keeps ``alerts``; returns them."""
        added = list(alerts)
        self.alerts += added
        return added

    def keep_delivery(self, alerts: Sequence[Alert]) -> str:
        """The delivery's alerts, into alerts.json at once (written before); returns the log note."""
        if self.add(alerts):
            self.folder.write_alerts(self.alerts)
        return "; ".join(a.message for a in alerts) or "ok"

    def keep_quality(self, alerts: Sequence[Alert]) -> list[Alert]:
        """Alerts raised after grading (``quality.regression``), into alerts.json at once."""
        added = self.add(alerts)
        if added:
            self.folder.write_alerts(self.alerts)
        return added

    def keep_ingest(self, report: IngestReport, request_title: str, snapshot: list[tuple[str, str]]) -> str:
        """The ingest's alerts, and its summary as ingest.json (written at once: a later failure keeps
        it); the request's title and the document snapshot for the run's records. Returns the log note."""
        self.add(report.alerts)
        self.folder.write_json(INGEST_FILE, ingest_record(report))
        self.request_title, self.snapshot = request_title, snapshot
        return f"{report.documents} documents, {len(report.alerts)} alert(s)"

    def keep_changes(self, changes: Changes) -> str:
        """What changed since the last completed run (its alerts kept); returns the log note."""
        self.add(list(changes.alerts))
        return changes.note

    def keep_plan(self, planned: PlanOutcome) -> str:
        self.plan, self.plan_basis, self.reading = planned.plan, planned.basis, planned.reading
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

    @property
    def day(self) -> str:
        """The run's UTC start date (the researcher's "today")."""
        return self.started.date().isoformat()

    def keep_research(self, pending: PendingWeb) -> str:
        """The web research of the sub-tasks (waited for) and its alerts, planning ones first;
        returns its summary."""
        self.add(pending.alerts)
        self.web = pending.collect()
        for research in self.web:
            self.add(research.alerts)
        if not self.web:  # offline (web.offline) or a zero budget: say why, not a row of zeros
            return f"no sub-task searched ({', '.join(a.code for a in pending.alerts) or 'none planned'})"
        pages = {s.id for r in self.web for s in r.sources}
        failed = [r.subtask_id for r in self.web if r.status == "failed"]
        return (
            f"{len(self.web)} sub-task(s) searched, {sum(len(r.findings) for r in self.web)} web finding(s), "
            f"{len(pages)} distinct page(s), failed: {failed or 'none'}"
        )

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
        self.draft = written
        self.add(written.alerts)
        kept = f", {len(written.kept_axes)} axis(es) kept from a validated night" if written.kept_axes else ""
        return f"{len(written.sources)} source(s) numbered{kept}, {len(written.alerts)} alert(s)"

    def keep_review(self, reviewed: ReviewOutcome) -> ReviewOutcome:
        self.review = reviewed
        self.add(reviewed.alerts)
        return reviewed

    def keep_final(self, final: FinalReport) -> str:
        """The shipped report and its alerts; returns the review step's summary."""
        self.final = final
        self.add(final_alerts(final, self.failed_subtasks()))
        rounds = len(self.review.rounds) if self.review else 0
        verdict = "validated" if self.review and self.review.validated else "NOT validated"
        return f"{rounds} round(s), {verdict}; {len(final.sources)} source(s) cited"

    def keep_reused(self, kept: KeptNight, changes: Changes) -> str:
        """An unchanged night: the kept night's dossier rendered with tonight's news, and its alerts
        that still hold tonight (veille.run.nightskip); returns the log note."""
        self.reused = kept
        self.add(carried_alerts(kept.json("alerts.json")))
        self.final = kept.final(changes)
        self.add(final_alerts(self.final, []))
        self.add([run_alert("run.night_reused", reused_note(kept.run_id), "info", kept.run_id)])
        return reused_note(kept.run_id)

    def night_basis(self) -> dict[str, Any] | None:
        """What night.json keeps to render this night's dossier again (None: nothing to keep, or
        grading failed: a later night would carry grades this one does not have)."""
        if any(a.code == GRADE_FAILED for a in self.alerts):
            return None
        if self.reused is not None:
            return self.reused.basis
        if self.final is None or self.draft is None or self.review is None:
            return None
        return render_basis(
            self.request_title,
            self.review.final_dossier,
            self.draft.sources,
            self.draft.writer_input.axes,
            self.failed_questions(),
        )

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
        ).model_copy(
            update={
                "rendered_by_code": [s for c, s in _BY_CODE if any(a.code == c for a in self.alerts)],
                **(self._reused_facts() if self.reused is not None else {}),
            }
        )

    def _reused_facts(self) -> dict[str, Any]:
        """run.json's facts of the kept dossier (its plan, review and rendering), named as reused."""
        assert self.reused is not None
        was = self.reused.info
        facts = {k: was.get(k) for k in ("validated", "rounds", "subtasks_total", "subtasks_failed")}
        return facts | {
            "rendered_by_code": list(was.get("rendered_by_code") or []),
            "reused_from": self.reused.run_id,
        }

    def outputs(self) -> RunOutputs:
        return RunOutputs(
            plan=self.plan,
            plan_basis=self.plan_basis,
            reading=self.reading,
            analyses=self.analyses,
            web=self.web,
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
            scrub_exception(self.error)  # Prefect stores its text (state message) and pickles it
            raise self.error
        if info.status == "failed":
            return Failed(
                # The UI shows this message on the flow run: name the branches, not only their count.
                message=(
                    f"{info.subtasks_failed} branch(es) failed: {', '.join(self.failed_subtasks())}; "
                    f"partial report in {self.folder.path}"
                ),
                data=str(self.folder.path),
            )
        return str(self.folder.path)
