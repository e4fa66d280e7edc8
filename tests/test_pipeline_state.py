"""RunLog: the flow's bookkeeping between steps (alerts in step order, a failing step as an alert,
run.json and the run folder for whatever step the run reached, the flow's return)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from veille.alerts import Alert
from veille.dossier import CitedText, Dossier
from veille.roles.planner import Plan, SubTask
from veille.roles.writer import SourceRef, WriterInput
from veille.run.folder import run_folder_of
from veille.run.info import record_note
from veille.run.runlog import RunLog
from veille.settings import Settings
from veille.steps.analyse import Analysis, failed_analysis
from veille.steps.finalize import finalize_report
from veille.steps.plan import PlanOutcome
from veille.steps.review import ReviewOutcome, RoundRecord
from veille.steps.write import WrittenDraft
from veille.store.ingest import IngestReport
from veille.tasks.outputs import write_outputs

SUB_TASKS = [
    SubTask(id="st-1", question="Débit ?", doc_ids=["doc-01"]),
    SubTask(id="st-2", question="Coût ?", doc_ids=["doc-03"]),
]
PLAN = Plan(sub_tasks=SUB_TASKS, excluded=["doc-07"])
SOURCES = [
    SourceRef(number=1, id="doc-01", title="Fiche", date="2026-02-10", source_type="fiche-fournisseur")
]

WRITER_INPUT = WriterInput(
    request_title="Titre", request="Compare.", questions={}, findings=[], sources=SOURCES
)


def _alert(code: str) -> Alert:
    return Alert(code=code, severity="warning", stage="run", message=code)


def _run(tmp_path: Path) -> RunLog:
    return RunLog.start(Settings.from_params(warehouse=str(tmp_path), backend="offline"))


def _ingest() -> IngestReport:
    return IngestReport(
        added=2, updated=0, unchanged=0, removed=0, skipped=1, documents=2, alerts=[_alert("ingest.skipped")]
    )


def _ok(sub_task: SubTask) -> Analysis:
    return Analysis(subtask_id=sub_task.id, question=sub_task.question, doc_ids=sub_task.doc_ids)


DOSSIER = Dossier(
    synthesis=[CitedText(text="Kestrel mène", citations=[1]), CitedText(text="Orphelin", citations=[7])]
)


def _reviewed(validated: bool = True) -> ReviewOutcome:
    round_ = RoundRecord(
        round=1,
        scores={"clarity": 5},
        mean=5.0,
        valid=validated,
        instructions=[],
        word_count=40,
        draft="Kestrel mène [1].",
        structure=DOSSIER,
    )
    return ReviewOutcome(
        validated=validated,
        rounds=[round_],
        final_dossier=DOSSIER,
        final_draft="Kestrel mène [1].",
        alerts=[],
    )


def test_a_failing_step_ends_the_block_as_a_run_failed_alert_after_the_alerts_of_earlier_steps(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    reached = []
    with run.failure_as_alert():
        run.keep_ingest(_ingest(), "Titre", [("doc-01", "h1")])
        run.keep_plan(PlanOutcome(plan=PLAN, proposed=PLAN, alerts=[_alert("plan.dropped")]))
        raise ValueError("x" * 900)
        reached.append("after")  # type: ignore[unreachable]
    assert reached == []
    assert isinstance(run.error, ValueError)
    assert [a.code for a in run.alerts] == ["ingest.skipped", "plan.dropped", "run.failed"]
    failed = run.alerts[-1]
    assert failed.severity == "error" and failed.message.startswith("ValueError: xxx")
    assert len(failed.message) == 500
    # ingest.json is written when the ingest is kept, so a later failure does not lose it
    assert json.loads((run.folder.path / "ingest.json").read_text(encoding="utf-8"))["skipped"] == 1


def test_an_interrupt_is_not_turned_into_an_alert(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with pytest.raises(KeyboardInterrupt), run.failure_as_alert():
        raise KeyboardInterrupt
    assert run.error is None and run.alerts == []


def test_a_run_stopped_after_the_plan_still_writes_a_complete_failed_run_folder(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.request_title = "Kestrel ou Tamaris ?"
    run.snapshot = [("doc-01", "h1")]
    with run.failure_as_alert():
        run.keep_plan(PlanOutcome(plan=PLAN, proposed=PLAN))
        raise RuntimeError("analyst down")
    info = run.info("offline", [])
    assert (info.status, info.subtasks_total, info.subtasks_failed) == ("failed", 2, 0)
    assert info.error == "RuntimeError: analyst down"
    assert (info.request_title, info.validated, info.rounds) == ("Kestrel ou Tamaris ?", False, 0)

    write_outputs.fn(run.folder, info, **run.outputs())  # outputs() matches the task's keywords
    written = {p.name for p in run.folder.path.iterdir()}
    assert {"run.json", "plan.json", "alerts.json", "documents.json", "review.json"} <= written
    assert "report.md" not in written
    alerts = json.loads((run.folder.path / "alerts.json").read_text(encoding="utf-8"))
    assert [a["code"] for a in alerts] == ["run.failed"]


def test_branch_notes_and_the_rule_that_one_branch_must_succeed(tmp_path: Path) -> None:
    run = _run(tmp_path)
    analyses = [_ok(SUB_TASKS[0]), failed_analysis(SUB_TASKS[1], TimeoutError("slow"))]
    assert run.keep_analyses(analyses) == "1 branch(es) ok, failed: ['st-2']"
    assert [a.code for a in run.alerts] == ["analyse.branch_failed"]
    assert run.failed_questions() == ["Coût ?"]
    run.require_a_branch()  # one branch is enough to write from

    run.keep_analyses([failed_analysis(t, TimeoutError("slow")) for t in SUB_TASKS])
    with pytest.raises(RuntimeError, match=r"every analyst branch failed \(st-1, st-2\)"):
        run.require_a_branch()
    run.keep_analyses([])  # a plan without sub-task leaves nothing to write either
    with pytest.raises(RuntimeError, match="every analyst branch failed"):
        run.require_a_branch()


def test_plan_and_draft_notes_count_what_the_step_produced(tmp_path: Path) -> None:
    run = _run(tmp_path)
    note = run.keep_plan(PlanOutcome(plan=PLAN, proposed=PLAN, alerts=[_alert("a"), _alert("b")]))
    assert note == "2 sub-task(s), 1 excluded, 2 alert(s)"
    assert run.plan == PLAN
    written = WrittenDraft(
        dossier=DOSSIER,
        draft="Kestrel mène [1].",
        sources=SOURCES,
        writer_input=WRITER_INPUT,
        alerts=[_alert("c")],
    )
    assert run.keep_draft(written) == "1 source(s) numbered, 1 alert(s)"
    assert [a.code for a in run.alerts] == ["a", "b", "c"]


def test_a_partial_report_is_kept_with_its_alerts_and_the_run_ends_failed(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.keep_analyses([_ok(SUB_TASKS[0]), failed_analysis(SUB_TASKS[1], TimeoutError("slow"))])
    run.keep_review(_reviewed(validated=False))
    final = finalize_report("Titre", DOSSIER, SOURCES, {}, run.failed_questions())
    assert run.keep_final(final) == "1 round(s), NOT validated; 1 source(s) cited"
    codes = [a.code for a in run.alerts]
    assert codes == ["analyse.branch_failed", "report.orphan_citation_stripped", "run.partial_report"]
    outputs = run.outputs()
    assert outputs["report"] == final.markdown and outputs["sources"] == final.sources

    info = run.info("offline", [])
    assert (info.status, info.subtasks_failed, info.rounds, info.validated) == ("failed", 1, 1, False)
    state = run.outcome(info)
    assert not isinstance(state, str) and state.is_failed()
    assert state.data == str(run.folder.path)


def test_outcome_is_the_folder_path_or_the_step_error_noted_with_the_folder(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.keep_analyses([_ok(SUB_TASKS[0])])
    assert run.outcome(run.info("offline", [])) == str(run.folder.path)

    error = OSError("disk full")
    with run.failure_as_alert():
        raise error
    info = run.info("offline", [])
    with pytest.raises(OSError) as raised:
        run.outcome(info)
    assert raised.value is error
    assert run_folder_of(raised.value) == run.folder.path


def test_a_grading_failure_is_a_warning_rewritten_into_alerts_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = _run(tmp_path)
    run.add([_alert("review.not_validated")])
    log = logging.getLogger("test-grading")
    with caplog.at_level(logging.WARNING, logger="test-grading"), run.grading(log):
        raise ValueError("judge unreachable")
    assert run.error is None  # grading never fails the run
    alerts = json.loads((run.folder.path / "alerts.json").read_text(encoding="utf-8"))
    assert [(a["code"], a["severity"]) for a in alerts] == [
        ("review.not_validated", "warning"),
        ("grade.failed", "warning"),
    ]
    assert "grade: failed (ValueError: judge unreachable)" in caplog.text


def test_record_note_lists_rows_per_table_in_name_order() -> None:
    assert record_note({"rows": {"runs": 1, "calls": 12, "alerts": 3}}) == "alerts 3, calls 12, runs 1"
    assert record_note({"rows": {}}) == "nothing"
    assert record_note({}) == "nothing"
