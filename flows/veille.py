"""The veille flow: [collect →] ingest → catalogue → screen → plan → analyse.map → write report → review loop
→ outputs → grade → record. The bookkeeping between the steps is ``veille.run.runlog.RunLog``.

A failed branch does not lose the others: the report is written from the branches that succeeded,
names the missing axis, raises an alert, and the run ends Failed so it can be retried. Plan and
branches persist their results under ``<warehouse>/prefect-results`` with input-keyed cache
policies, so a retry (same flow run, or a new run with the same inputs) reruns only what failed.
"""

from __future__ import annotations

from prefect import flow, get_run_logger, unmapped
from prefect.runtime import flow_run
from prefect.states import State

from tasks.analyse import analyse, analyst_jobs, cache_scopes
from tasks.asks import CachedAsker
from tasks.clients import backend_label, model_key, open_client, role_keys
from tasks.collect import collect
from tasks.grade import grade_run, quality_alerts
from tasks.ingest import catalogue, ingest
from tasks.outputs import write_outputs
from tasks.plan import plan
from tasks.record import record_run
from tasks.review import review
from tasks.screen import screen_documents
from tasks.write import write_report
from veille.collect import sources_file
from veille.corpus.reference import reference_if_valid
from veille.corpus.request import load_request
from veille.grid import load_grid
from veille.ops.logfilter import install_expected_failure_filter
from veille.ops.naming import name_flow_run
from veille.ops.runners import settings_task_runner
from veille.run.info import record_note
from veille.run.inputs import collect_branches, results_dir
from veille.run.recovery import lock_run_folder
from veille.run.runlog import RunLog
from veille.run.summary import usage_note
from veille.settings import Settings
from veille.steps.catalogue import planner_catalogue
from veille.steps.screen import flagged_documents
from veille.steps.write import finalize_report
from veille.store.readers import document_snapshot

__all__ = ["veille_flow"]

install_expected_failure_filter()  # expected failures: one ERROR line, no traceback


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
    settings: Settings | None = None,  # `veille run` builds them; a deployment passes the parameters
) -> str | State:
    """Write the dossier for ``corpus``; returns the run folder path (a Failed state if a step failed)."""
    if settings is None:
        settings = Settings.from_params(
            corpus=corpus,
            backend=backend,
            strict=strict,
            max_rounds=max_rounds,
            use_cache=use_cache,
            warehouse=warehouse,
        )
    log, run = get_run_logger(), RunLog.start(settings)
    folder = run.folder
    name_flow_run(flow_run.id, folder.run_id)  # the UI lists the run under its veille run id
    run_lock = lock_run_folder(folder.path)  # held until recorded: a killed run is recorded by the next
    # Injected faults fire on the flow run's first attempt only, so a retry of the same run succeeds;
    # the cache scopes make them fire on a warm cache too and rerun only their branch (cache_scopes).
    drill = set(fail_subtasks or [])
    faults = drill if flow_run.run_count <= 1 else set()
    storage = results_dir(settings)
    own_scope = "" if settings.use_cache else f"flow-run:{flow_run.id}"  # --no-cache: this run only

    with open_client(settings, folder.run_id, folder.calls_path) as client:
        records = client.journal.records  # calls so far: each step's log line has its roles' usage
        # Writer, critic, reviser and judge calls are cached by their inputs too (tasks/asks.py).
        asker = CachedAsker(client, storage=storage, model_keys=role_keys(settings), cache_scope=own_scope)
        with run.failure_as_alert():  # a raising step ends the steps; re-raised once all is written
            if sources_file(settings.corpus_dir).exists():  # watched feeds and pages: tonight's news first
                run.add(collect(settings).alerts)  # the task logs its summary; failing sources are alerts
            ingested = ingest(settings)
            run.keep_ingest(ingested)
            listing = catalogue(settings)
            request, reference = load_request(settings.corpus_dir), reference_if_valid(settings.corpus_dir)
            run.request_title = request.title
            grid = load_grid(settings.grid_file, extra_mentions=request.mandatory_mentions)
            run.snapshot = document_snapshot(settings.database)
            log.info("ingest: %d documents, %d alert(s)", len(listing.entries), len(ingested.alerts))
            # Documents are data: flag the ones written to steer the model (code enforces ids anyway).
            if suspected := run.add(screen_documents(settings, listing.entries)):
                log.warning("injection suspected in: %s", ", ".join(str(a.subject) for a in suspected))

            shown = planner_catalogue(request, listing.entries, settings)
            log.info("catalogue: %s", shown.note)
            planned = plan.with_options(result_storage=storage)(
                client,
                shown.data,
                model_key(settings, "planner"),
                cache_scope=own_scope,
                flagged=flagged_documents(suspected),
                left_out=shown.left_out,
            )
            log.info("plan: %s; %s", run.keep_plan(planned), usage_note(records(), "planner"))
            sub_tasks = planned.plan.sub_tasks
            ids = [st.id for st in sub_tasks]
            branches = analyse.with_options(result_storage=storage).map(
                analyst_jobs(sub_tasks, run.snapshot, model_key(settings, "analyst")),
                ids,
                client=unmapped(client),
                db_path=unmapped(settings.database),
                fault=[sid in faults for sid in ids],
                cache_scope=cache_scopes(ids, drill, use_cache=settings.use_cache, flow_run_id=flow_run.id),
            )
            analyses = collect_branches(sub_tasks, branches)
            log.info("analyse: %s; %s", run.keep_analyses(analyses), usage_note(records(), "analyst"))
            run.require_a_branch()

            written = write_report(asker, analyses, request, grid, settings.database)
            log.info("write: %s; %s", run.keep_draft(written), usage_note(records(), "writer"))
            axes, noted = written.writer_input.axes, len(written.writer_input.contradictions)
            reviewed = review(
                asker, written.dossier, grid, written.sources, request.text, settings.max_rounds, axes, noted
            )
            run.keep_review(reviewed)
            final = finalize_report(
                request.title, reviewed.final_dossier, written.sources, axes, run.failed_questions()
            )
            log.info("review: %s; %s", run.keep_final(final), usage_note(records(), "critic", "reviser"))
        run.add(client.alerts())

        info = run.info(backend_label(settings), records())
        write_outputs(folder, info, **run.outputs())
        if run.final is not None:
            with run.grading(log):  # grading informs; it must not fail a run whose report is written
                grades = grade_run(folder.path, reference, request, asker)
                log.info("grade: %s; %s", run.keep_grades(grades), usage_note(records(), "judge"))
                if regressed := run.add(quality_alerts(settings, folder.path, grades)):
                    log.warning("quality: %s", regressed[0].message)
                    folder.write_alerts(run.alerts)
    recorded = record_run(settings, folder.path)
    run_lock.release()
    log.info("record: %s", record_note(recorded))
    log.info(
        "outputs: %s (report.md, plan.json, findings.json, review.json, alerts.json, calls.jsonl)",
        folder.path,
    )
    return run.outcome(info)
