"""Alerts on the console (issue 39 item 4): printed once, in French, as text — no « Alerts: none »
above the run's « Alertes (6…) », no Python list in a message, no document counted under two reasons."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from tests.plankit import PlannerScript, entry, planner_input
from veille.cli.run import print_ingest_summary
from veille.steps.plan import make_plan
from veille.steps.screen import FLAG_LABEL
from veille.store.rows import IngestReport

CATALOGUE = [
    entry("doc-01", "Zorblax : débit mesuré et latence au banc"),
    entry("doc-02", "Quimby : coût des licences 2030"),
    entry("doc-03", "Zorblax : correctif de sécurité"),
    entry("doc-07", "Menu de la cantine"),
    entry("doc-09", "Fauteuils ergonomiques : fiche produit"),
]


def test_a_flagged_document_left_unassigned_is_counted_once_under_its_final_reason() -> None:
    """The planner says nothing of doc-07 (off topic) nor doc-09 (flagged, off topic): code excludes
    doc-09 as injection; the unassigned alert names doc-07 alone, as text."""
    answer = {
        "sub_tasks": [
            {"id": "st-1", "question": "Quels débits et latences ?", "doc_ids": ["doc-01"]},
            {"id": "st-2", "question": "Quel coût, quelle sécurité ?", "doc_ids": ["doc-02", "doc-03"]},
        ],
        "excluded": [],
    }
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE), flagged={"doc-09": FLAG_LABEL})
    reasons = {e.id: e.reason for e in outcome.plan.exclusions}
    assert reasons == {"doc-07": "unassigned", "doc-09": "injection"}
    naming = {a.code: a.subjects for a in outcome.alerts if "doc-09" in a.subjects or "doc-09" in a.message}
    assert list(naming) == ["plan.injection_excluded"], naming
    [unassigned] = [a for a in outcome.alerts if a.code == "plan.unassigned_documents"]
    assert unassigned.subjects == ["doc-07"]
    assert unassigned.message.endswith("(1) : doc-07") and "[" not in unassigned.message


def _report(alerts: int = 0) -> IngestReport:
    from veille.alerts import alert

    return IngestReport(
        corpus_dir="/c",
        database="/w/veille.duckdb",
        added=2,
        updated=0,
        unchanged=0,
        removed=0,
        skipped=0,
        documents=2,
        duration_s=0.5,
        alerts=[alert("ingest", "ingest.x", f"remarque {i}", severity="info") for i in range(alerts)],
    )


def _printed(report: IngestReport, *, below: bool) -> str:
    console = Console(record=True, width=200)
    print_ingest_summary(report, None, console, alerts_below=below)
    return console.export_text()


def test_the_run_prints_no_ingest_alert_line_above_its_own_list() -> None:
    """`veille run` printed « Alerts: none » just above « Alertes (6, regroupées par code) »."""
    for count in (0, 2):
        text = _printed(_report(count), below=True)
        assert "Alert" not in text and "remarque" not in text, text
        assert "Ingestion de /c dans /w/veille.duckdb" in text and "2 documents au catalogue" in text


def test_veille_ingest_alone_lists_its_alerts_in_french() -> None:
    assert "Alertes : aucune" in _printed(_report(0), below=False)
    text = _printed(_report(2), below=False)
    assert "Alertes (2, regroupées par code) :" in text and "remarque 0" in text
    assert "Alerts" not in text and "ingested" not in text


def test_a_folder_name_with_brackets_is_printed_as_written() -> None:
    """The user's folder is data: « veille [old] » is no style, « [bold] » no markup."""
    report = dataclasses.replace(_report(), corpus_dir="/home/a/veille [old]/[bold]x")
    assert "de /home/a/veille [old]/[bold]x dans" in _printed(report, below=True)
