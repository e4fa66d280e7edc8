"""The steps an unchanged night skips (veille.run.nightskip): screen → plan → analyse → write →
review, then the run folder and the grades. Imported by the flow only on a night that runs them, so
an unchanged night never imports the planner, the analysts, the writer, the review or the offline
engine (issue 40 item 1: a warm ``make run`` is an unchanged night)."""

from __future__ import annotations

import logging
from typing import Any

from prefect import get_run_logger

from veille.corpus.reference import Reference
from veille.run.folder import RunInfo
from veille.run.inputs import CorpusInputs
from veille.run.runlog import RunLog
from veille.run.summary import usage_note
from veille.settings import Settings
from veille.steps.catalogue import planner_catalogue, planner_reads_texts, text_relevance, with_texts
from veille.steps.news import Changes
from veille.store.connection import reads_together
from veille.store.readers import Catalogue
from veille.tasks.analyse import analyse_sub_tasks, analyst_basis, offline_branches
from veille.tasks.clients import RunClient, model_key
from veille.tasks.grade import grade_run, quality_alerts
from veille.tasks.outputs import write_outputs
from veille.tasks.plan import plan_catalogue
from veille.tasks.research import search_web
from veille.tasks.reuse import Reuse
from veille.tasks.review import review
from veille.tasks.screen import screen_documents
from veille.tasks.write import finish_report, sections_path, write_report

__all__ = ["run_steps", "write_and_grade"]


def run_steps(
    run: RunLog,
    settings: Settings,
    client: RunClient,
    reuse: Reuse,
    listing: Catalogue,
    inputs: CorpusInputs,
    changes: Changes,
) -> None:
    """screen → plan → analyse → write → review, each step's result kept in ``run``."""
    log, records, folder = get_run_logger(), client.journal.records, run.folder
    asker = reuse.asker(client)  # writer, critic, reviser and judge cached by their inputs
    request, _, grid, _ = inputs
    # Reads of the corpus database up to the planner's call, none waiting on a model: one opening.
    with reads_together(settings.database):
        # Documents are data: flag the ones written to steer the model (code enforces ids anyway).
        if suspected := run.add(screen_documents(settings, listing.entries)):
            log.warning("injection suspected in: %s", ", ".join(str(a.subject) for a in suspected))

        shown = planner_catalogue(request, listing.entries, settings, listing.fingerprints)
        if planner_reads_texts(client.role_backend("planner")):  # a free planner reads the bodies (BM25)
            shown = with_texts(shown, settings.database)
        log.info("catalogue: %s", shown.note)
        measured = text_relevance(shown, settings.database)  # coverage by code, every backend
    planned = plan_catalogue(client, shown, suspected, reuse, changes, measured)
    log.info("plan: %s; %s", run.keep_plan(planned), usage_note(records(), "planner"))
    searching = search_web(client, planned.plan.sub_tasks, settings, request.title, run.day)  # --web
    analyses = analyse_sub_tasks(client, planned.plan.sub_tasks, run.snapshot, reuse, changes)
    # Branches the cost budget refused to the model: the offline engine reads them instead.
    analyses = offline_branches(analyses, planned.plan.sub_tasks, settings, folder.run_id, folder.calls_path)
    log.info(
        "analyse: %s; %s",
        run.keep_analyses(analyses),
        usage_note(records(), "analyst", "analyst_update"),
    )
    run.require_a_branch()
    if settings.web:  # the grounded research ran beside the analysts
        log.info("research: %s; %s", run.keep_research(searching), usage_note(records(), "researcher"))

    kept = sections_path(settings)  # the writer writes only changed axes, on every backend
    memo = settings.cache_dir if settings.use_cache else None  # verified: kept across nights
    written = write_report(
        asker, analyses, request, grid, settings.database, run.web, settings.bounds(), kept,
        model_key(settings, "writer"), planned.reading, memo,
    )  # fmt: skip
    log.info("write: %s; %s", run.keep_draft(written), usage_note(records(), "writer"))
    reviewed = run.keep_review(review(asker, written, grid, request.text, settings.max_rounds, kept))
    news = changes.planned(planned.plan.excluded)  # what the plan left out is named, not cited
    final = finish_report(request.title, written, reviewed, run.failed_questions(), news, settings.database)
    log.info("review: %s; %s", run.keep_final(final), usage_note(records(), "critic", "reviser"))


def write_and_grade(
    run: RunLog,
    settings: Settings,
    client: RunClient,
    reuse: Reuse,
    info: RunInfo,
    inputs: CorpusInputs | None,
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> None:
    """The run folder of a night that ran its steps, then its grades when a report was written."""
    folder, records = run.folder, client.journal.records
    basis = analyst_basis(settings)  # later nights build on these findings
    write_outputs(folder, info, **run.outputs(), analyst_basis=basis)
    if run.final is None or inputs is None:
        return
    reference: Reference | None = inputs.reference
    with run.grading(log):  # grading informs; it must not fail a run whose report is written
        kept = sections_path(settings)  # the judge grades what changed (veille.graders.parts)
        judge = model_key(settings, "judge")  # the judge's answers cached by their inputs, like the writer's
        grades = grade_run(folder.path, reference, inputs.request, reuse.asker(client), kept, judge)
        log.info("grade: %s; %s", run.keep_grades(grades), usage_note(records(), "judge"))
        if regressed := run.keep_quality(quality_alerts(settings, folder.path, grades)):
            log.warning("quality: %s", regressed[0].message)
