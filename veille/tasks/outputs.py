"""Task: write the run folder (machine-readable outputs; artifacts are published by tasks/record.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.checkpoints import checkpoint
from veille.corpus.request_reading import RequestReading
from veille.delivery.header import report_page
from veille.delivery.html import REPORT_HTML_FILE
from veille.journal import read_journal
from veille.roles.planner import Plan
from veille.roles.writer import SourceRef
from veille.run.folder import RunFolder, RunInfo
from veille.steps.analyse import Analysis
from veille.steps.headings import axis_anchors, failed_axis_titles
from veille.steps.request_read import reading_record
from veille.steps.research import WebResearch
from veille.steps.review import ReviewOutcome
from veille.tasks.datatask import task

__all__ = ["findings_document", "write_outputs"]


def findings_document(
    analyses: Sequence[Analysis], web: Sequence[WebResearch] = (), analyst_basis: str = ""
) -> dict[str, dict[str, object]]:
    """findings.json: one entry per sub-task, failed branches included (status, error); a sub-task
    searched on the web (``--web``) also has ``web``: its queries, findings (each with the indices
    of its grounding chunks and its pages' ids) and pages. ``analyst_basis``: the analyst model key
    and version every branch of the run was written under (veille.tasks.analyse.analyst_basis; their
    cache keys include both): a later night builds on these findings only under the same one."""
    researched = {r.subtask_id: r for r in web}
    out: dict[str, dict[str, object]] = {}
    for a in analyses:
        out[a.subtask_id] = {
            "question": a.question,
            "status": a.status,
            "error": a.error,
            "findings": [f.model_dump() for f in a.findings.findings],
            "contradictions": [c.model_dump() for c in a.findings.contradictions],
            "open_questions": list(a.findings.open_questions),
        }
        if analyst_basis:
            out[a.subtask_id]["analyst_basis"] = analyst_basis
        if a.read:  # documents read in part within the input budget: only then (whole reads write none)
            out[a.subtask_id]["read"] = {i: p.model_dump() for i, p in sorted(a.read.items())}
        if a.subtask_id in researched:  # only then: a run without --web writes what it always did
            out[a.subtask_id]["web"] = researched[a.subtask_id].model_dump(exclude={"alerts"})
    return out


# NO_CACHE: a side effect (files) that must happen on every run.
@task(name="outputs", cache_policy=NO_CACHE)
def write_outputs(
    folder: RunFolder,
    info: RunInfo,
    *,
    plan: Plan | None,
    plan_basis: str = "",
    reading: RequestReading | None = None,
    analyses: Sequence[Analysis],
    web: Sequence[WebResearch] = (),
    sources: Sequence[SourceRef],
    review: ReviewOutcome | None,
    alerts: Sequence[Alert],
    report: str | None,
    documents: Sequence[tuple[str, str]],
    analyst_basis: str = "",
) -> Path:
    """Every file of the run folder contract; run.json last, so its presence means "complete"."""
    folder.create()
    folder.write_documents([{"id": i, "content_hash": h} for i, h in documents])
    if plan is not None:
        folder.write_plan(plan, basis=plan_basis, request=reading_record(reading) if reading else None)
    folder.write_findings(findings_document(analyses, web, analyst_basis))
    folder.write_sources(sources)
    folder.write_review(
        review.validated if review else False,
        [r.model_dump() for r in review.rounds] if review else [],
    )
    folder.write_alerts(alerts)
    if report is not None:
        folder.write_report(report)
        failed = failed_axis_titles(analyses)
        page = report_page(
            info,
            read_journal(folder.calls_path),
            report,
            sources,
            documents_read=len(documents),
            failed_axes=failed,
            dossier=review.final_dossier if review else None,
            anchors=axis_anchors({a.subtask_id: a.question for a in analyses if a.status == "ok"}),
        )
        folder.write_text(REPORT_HTML_FILE, page)  # the same dossier for a browser and the e-mail
    checkpoint("outputs")  # observers (crash tests): run folder written but its run.json
    folder.write_run(info)
    return folder.path
