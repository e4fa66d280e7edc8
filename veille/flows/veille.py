"""The veille flow: [collect →] ingest → what changed → catalogue → screen → plan → analyse.map → write
report → review loop → outputs → grade → record. The bookkeeping between the steps is ``veille.run.runlog.RunLog``.

A failed branch does not lose the others: the report is written from the branches that succeeded,
names the missing axis, raises an alert, and the run ends Failed so it can be retried. Plan and
branches persist their results under ``<warehouse>/prefect-results`` with input-keyed cache
policies, so a retry (same flow run, or a new run with the same inputs) reruns only what failed.
"""

from __future__ import annotations

import os

from prefect import flow, get_run_logger
from prefect.runtime import flow_run
from prefect.states import State

from veille.collect import sources_file
from veille.delivery.config import register_delivery_secrets
from veille.derived import collecting, set_aside_alerts
from veille.ops.flowparams import plain_parameters
from veille.ops.heartbeats import install_heartbeat_release
from veille.ops.logfilter import install_expected_failure_filter, install_library_debug_filter
from veille.ops.naming import name_flow_run
from veille.ops.runners import settings_task_runner
from veille.ops.statescrub import install_state_scrubbing
from veille.providers import BackendChoice
from veille.run.folder import OUTPUT_FILES
from veille.run.info import record_note
from veille.run.inputs import CorpusInputs, corpus_inputs
from veille.run.recovery import lock_run_folder
from veille.run.runlog import RunLog
from veille.settings import Settings
from veille.store.connection import reads_together
from veille.tasks.clients import backend_label, open_client
from veille.tasks.collect import collect
from veille.tasks.deliver import deliver_dossier
from veille.tasks.ingest import catalogue, ingest
from veille.tasks.news import what_changed
from veille.tasks.nightskip import NightReuse, night_reuse, record_night, write_reused
from veille.tasks.record import record_run
from veille.tasks.repair import repair_warehouse
from veille.tasks.reuse import Reuse
from veille.warehouse.place import check_warehouse

__all__ = ["veille_flow"]

install_expected_failure_filter()  # expected failures: one ERROR line, no traceback
install_library_debug_filter()  # a library's own DEBUG level (bm25s) does not reach the console
install_state_scrubbing()  # a run's state message holds no secret (veille.ops.statescrub)
install_heartbeat_release()  # a run's end does not wait for the heartbeat thread's sleep (veille.ops.heartbeats)


# The task runner (threads or Dask) is picked from Settings when each run starts (docs/operations.md).
@flow(name="veille", log_prints=False, task_runner=settings_task_runner())
def veille_flow(
    corpus: str | None = None,
    backend: BackendChoice | None = None,  # "auto" or a provider of veille/providers.py
    strict: bool = False,
    max_rounds: int | None = None,
    use_cache: bool | None = None,
    fail_subtasks: list[str] | None = None,
    warehouse: str | None = None,
    web: bool = False,
    request_source: str | None = None,
) -> str | State:
    """Write the dossier for ``corpus``; returns the run folder path (a Failed state if a step failed).

    Args:
        corpus: Corpus folder (request.md, docs/, optional delivery.toml). Empty: the settings' corpus.
        backend: Model backend. Empty: the settings' (auto: Gemini when a key is configured, else offline).
        strict: Strict corpus validation: a bad document fails the run instead of being skipped.
        max_rounds: Critic/reviser rounds at most. Empty: the settings' max_rounds.
        use_cache: Model response cache. Empty: the settings' use_cache.
        fail_subtasks: Drills only: sub-task ids whose analysis fails on the first attempt, e.g. ["st-2"].
        warehouse: Warehouse folder (DuckDB, run folders, Parquet). Empty: the settings' warehouse_dir.
        web: Also one Google-Search-grounded call per sub-task (Gemini only, within web_budget).
        request_source: The request, a file or its text. Empty: request.md or demande.md in the corpus.
    """
    settings = Settings.from_params(
        corpus=corpus,
        backend=backend,
        strict=strict,
        max_rounds=max_rounds,
        use_cache=use_cache,
        warehouse=warehouse,
        web=web,
        request=request_source,
    )
    check_warehouse(settings.warehouse_dir, settings.database)  # deployments: one line, not frames
    # Delivery URLs are secrets from the first line written (the password of one is masked anyway).
    register_delivery_secrets(settings.corpus_dir, os.environ)
    # The folder is locked before anything is written in it, held until recorded: a killed run is
    # recorded by the next one.
    log, run = get_run_logger(), RunLog.start(settings, lock=lock_run_folder)
    folder, run_lock = run.folder, run.run_lock
    name_flow_run(flow_run.id, folder.run_id)  # run id as the name (a given name kept) and as a tag
    reuse = Reuse.of(settings, flow_run.id, flow_run.run_count, fail_subtasks)
    night = NightReuse(None, why="not reached")  # the night's key, once ingestion has run
    inputs: CorpusInputs | None = None  # request, reference, grid, snapshot: read after ingestion

    with collecting() as moved_aside, open_client(settings, folder.run_id, folder.calls_path) as client:
        repair_warehouse(settings)  # first: what it moves aside is in tonight's alerts
        records = client.journal.records  # calls so far: each step's log line has its roles' usage
        with run.failure_as_alert():  # a raising step ends the steps; re-raised once all is written
            if sources_file(settings.corpus_dir).exists():  # watched feeds and pages: tonight's news first
                run.add(collect(settings).alerts)  # the task logs its summary; failing sources are alerts
            ingested = ingest(settings)
            with reads_together(settings.database):  # two reads, one opening of the database file
                listing = catalogue(settings)
                request, reference, grid, snapshot = corpus_inputs(settings)
            log.info("ingest: %s", run.keep_ingest(ingested, request.title, snapshot))
            changes = what_changed(settings, folder.run_id, snapshot)  # against the last completed run
            log.info("changes: %s", run.keep_changes(changes))
            inputs = CorpusInputs(request, reference, grid, snapshot)
            attempt = flow_run.run_count or 1
            night = night_reuse(settings, sorted(reuse.drill), attempt, listing, inputs, changes)
            if night.kept is not None:  # nothing any skipped step reads changed: its dossier again
                log.info("night: %s", run.keep_reused(night.kept, changes))
            else:
                log.info("night: every step run (%s)", night.why)
                from veille.flows.night_steps import run_steps  # imported only by a night that runs them

                run_steps(run, settings, client, reuse, listing, inputs, changes)
        run.add(client.alerts())
        run.add(set_aside_alerts(moved_aside))  # derived files moved aside (veille.derived)

        info = run.info(backend_label(settings), records())
        if run.reused is not None and run.final is not None:  # the kept files, tonight's report
            write_reused(folder, info, run.reused, run.final, run.alerts, run.snapshot)
        else:
            from veille.flows.night_steps import write_and_grade  # a night that ran its steps

            write_and_grade(run, settings, client, reuse, info, inputs, log)
    if run.final is not None:  # the dossier, partial or not, to the corpus's recipients (delivery.toml)
        log.info("deliver: %s", run.keep_delivery(deliver_dossier(settings, folder, info)))
    # What the next night compares with: this night's key, once every file it reuses is written.
    if night.key is not None and info.status == "completed" and (basis := run.night_basis()) is not None:
        record_night(folder.path, night.key, basis)
    try:
        recorded = record_run(settings, folder.path)  # a failure marks run.json failed (tasks/record.py)
    except BaseException:
        run_lock.abandon()  # the next run records this folder (veille.run.recovery)
        raise
    run_lock.release()
    log.info("record: %s", record_note(recorded))
    log.info("outputs: %s (%s)", folder.path, ", ".join(OUTPUT_FILES))
    return run.outcome(info)


plain_parameters(veille_flow)  # its parameters recorded without importing FastAPI (veille.ops.flowparams)
