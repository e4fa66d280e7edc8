"""The veille flow: ingest → catalogue → plan → analyse.map → write report → review loop → outputs.

A failed branch does not lose the others: the report is written from the branches that succeeded,
names the missing axis, raises an alert, and the run ends Failed so it can be retried. Plan and
branches persist their results under ``<warehouse>/prefect-results`` with input-keyed cache
policies, so a retry (same flow run, or a new run with the same inputs) reruns only what failed.
"""

from __future__ import annotations

from prefect import flow, get_run_logger, unmapped
from prefect.runtime import flow_run
from prefect.states import Failed, State

from tasks.analyse import analyse, analyst_jobs
from tasks.clients import backend_label, model_key, open_client
from tasks.grade import grade_run
from tasks.ingest import catalogue, ingest
from tasks.outputs import write_outputs
from tasks.plan import plan
from tasks.record import record_run
from tasks.report import write_report
from tasks.review import review
from tasks.screen import screen_documents
from veille.alerts import Alert
from veille.analysis import Analysis, PlanOutcome
from veille.corpus import load_request
from veille.grid import load_grid
from veille.ops import settings_task_runner
from veille.pipeline import (
    build_settings,
    collect_branches,
    final_alerts,
    make_run_info,
    planner_input,
    results_dir,
    run_alert,
    utc_now,
)
from veille.recovery import lock_run_folder
from veille.report import FinalReport, finalize_report
from veille.review import ReviewOutcome
from veille.runfolder import RunFolder, new_run_id, note_run_folder
from veille.store import document_snapshot
from veille.summary import INGEST_FILE, ingest_record, usage_note

__all__ = ["veille_flow"]


# The task runner (threads or Dask) is picked from Settings when each run starts (docs/operations.md).
@flow(name="veille", log_prints=False, task_runner=settings_task_runner())
def veille_flow(
    corpus: str | None = None,
    backend: str | None = None,
    strict: bool = False,
    max_rounds: int | None = None,
    use_cache: bool | None = None,
    fail_subtasks: list[str] | None = None,  # fault injection for the retry scenario (first attempt only)
    warehouse: str | None = None,
) -> str | State:
    """Write the dossier for ``corpus``; returns the run folder path (a Failed state if a step failed)."""
    settings = build_settings(
        corpus=corpus,
        backend=backend,
        strict=strict,
        max_rounds=max_rounds,
        use_cache=use_cache,
        warehouse=warehouse,
    )
    log = get_run_logger()
    started = utc_now()
    folder = RunFolder(settings.runs_dir, new_run_id(started)).create()
    run_lock = lock_run_folder(folder.path)  # held until recorded: a killed run is recorded by the next
    # Injected faults fire on the flow run's first attempt only, so a retry of the same run succeeds.
    faults = set(fail_subtasks or []) if flow_run.run_count <= 1 else set()
    storage, refresh = results_dir(settings), not settings.use_cache  # --no-cache recomputes every step

    alerts: list[Alert] = []
    planned: PlanOutcome | None = None
    analyses: list[Analysis] = []
    reviewed: ReviewOutcome | None = None
    final: FinalReport | None = None
    error: BaseException | None = None
    request_title = ""
    snapshot: list[tuple[str, str]] = []
    with open_client(settings, folder.run_id, folder.calls_path) as client:
        try:
            ingested = ingest(settings)
            alerts += ingested.alerts
            folder.write_json(INGEST_FILE, ingest_record(ingested))
            listing = catalogue(settings)
            request = load_request(settings.corpus_dir)
            request_title = request.title
            grid = load_grid(settings.grid_file, extra_mentions=request.mandatory_mentions)
            snapshot = document_snapshot(settings.database)
            log.info("ingest: %d documents, %d alert(s)", len(listing.entries), len(ingested.alerts))
            # Documents are data: flag the ones written to steer the model (code enforces ids anyway).
            suspected = screen_documents(settings, listing.entries)
            alerts += suspected
            if suspected:
                log.warning("injection suspected in: %s", ", ".join(str(a.subject) for a in suspected))

            planned = plan.with_options(result_storage=storage, refresh_cache=refresh)(
                client, planner_input(request, listing.entries, settings), model_key(settings, "planner")
            )
            alerts += planned.alerts
            sub_tasks = planned.plan.sub_tasks
            log.info(
                "plan: %d sub-task(s), %d excluded, %d alert(s); %s",
                len(sub_tasks),
                len(planned.plan.excluded),
                len(planned.alerts),
                usage_note(client.journal.records(), "planner"),
            )

            branches = analyse.with_options(result_storage=storage, refresh_cache=refresh).map(
                analyst_jobs(sub_tasks, snapshot, model_key(settings, "analyst")),
                [st.id for st in sub_tasks],
                client=unmapped(client),
                db_path=unmapped(settings.database),
                fault=[st.id in faults for st in sub_tasks],
            )
            analyses = collect_branches(sub_tasks, branches)
            for a in analyses:
                alerts += a.alerts
            failed = [a.subtask_id for a in analyses if a.status == "failed"]
            log.info(
                "analyse: %d branch(es) ok, failed: %s; %s",
                len(analyses) - len(failed),
                failed or "none",
                usage_note(client.journal.records(), "analyst"),
            )
            if len(failed) == len(analyses):
                raise RuntimeError(f"every analyst branch failed ({', '.join(failed)}): no report to write")

            written = write_report(client, analyses, request, grid, settings.database)
            alerts += written.alerts
            log.info(
                "write: %d source(s) numbered, %d alert(s); %s",
                len(written.sources),
                len(written.alerts),
                usage_note(client.journal.records(), "writer"),
            )
            reviewed = review(client, written.draft, grid, written.sources, request.text, settings.max_rounds)
            alerts += reviewed.alerts
            final = finalize_report(
                request.title,
                reviewed.final_draft,
                written.sources,
                [a.question for a in analyses if a.status == "failed"],
            )
            alerts += final_alerts(final, failed)
            log.info(
                "review: %d round(s), %s; %d source(s) cited; %s",
                len(reviewed.rounds),
                "validated" if reviewed.validated else "NOT validated",
                len(final.sources),
                usage_note(client.journal.records(), "critic", "reviser"),
            )
        except Exception as exc:  # recorded in run.json and alerts.json, re-raised below: the run ends Failed
            error = exc
            alerts.append(run_alert("run.failed", f"{type(exc).__name__}: {exc}"[:500]))
        alerts += client.alerts()

        info = make_run_info(
            settings=settings,
            run_id=folder.run_id,
            started=started,
            backend=backend_label(settings),
            request_title=request_title,
            plan=planned.plan if planned else None,
            analyses=analyses,
            validated=bool(reviewed and reviewed.validated),
            rounds=len(reviewed.rounds) if reviewed else 0,
            records=client.journal.records(),
            error=error,
        )
        write_outputs(
            folder,
            info,
            plan=planned.plan if planned else None,
            analyses=analyses,
            sources=final.sources if final else [],
            review=reviewed,
            alerts=alerts,
            report=final.markdown if final else None,
            documents=snapshot,
        )
        if final is not None:
            try:
                grades = grade_run(settings, folder.path, client)
                log.info("grade: %d grade(s) written", len(grades))
            except Exception as exc:  # grading informs; it must not fail a run whose report is written
                log.warning("grade: failed (%s: %s)", type(exc).__name__, exc)
                alerts.append(run_alert("grade.failed", f"{type(exc).__name__}: {exc}"[:500], "warning"))
                folder.write_alerts(alerts)
    recorded = record_run(settings, folder.path)
    run_lock.release()
    rows = recorded.get("rows") or {}
    log.info(
        "record: %s", ", ".join(f"{table} {count}" for table, count in sorted(rows.items())) or "nothing"
    )
    log.info(
        "outputs: %s (report.md, plan.json, findings.json, review.json, alerts.json, calls.jsonl)",
        folder.path,
    )
    if error is not None:
        note_run_folder(error, folder.path)  # the CLI shows what the failed run wrote
        raise error
    if info.status == "failed":
        return Failed(
            message=f"{info.subtasks_failed} branch(es) failed; partial report in {folder.path}",
            data=str(folder.path),
        )
    return str(folder.path)
