"""The veille flow with scripted models (real Prefect engine, ephemeral API from the test harness)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from testkit.flowkit import AXES, PERFECT, dossier_from, read_json, responder, write_corpus
from testkit.scripted import ScriptedModel, night_on
from veille.citations import invalid_citations
from veille.dossier import NEWS_SECTION
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.roles.planner import Plan, SubTask
from veille.steps.headings import axis_titles
from veille.textstats import MODEL_SECTIONS, section_order, split_sections

pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture()
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "warehouse"
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(path))
    return path


def _run(model: ScriptedModel, corpus: Path, warehouse: Path, **params: Any) -> tuple[Any, Path]:
    """Run the flow with ``model`` as backend; return its final state and its (newest) run folder."""
    with night_on(model):
        state = veille_flow(corpus=str(corpus), return_state=True, **params)
    run_dirs = sorted((warehouse / "runs").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    return state, run_dirs[-1]


def _ui_view(flow_run_id: Any) -> dict[str, Any]:
    """The flow run's name and its artifacts, read from the API as the UI does."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        name = client.read_flow_run(flow_run_id).name
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    by_key = {a.key: a for a in artifacts}
    return {
        "name": name,
        "metrics": str(by_key["veille-metrics"].data),
        "report_description": by_key["veille-report"].description or "",
    }


def _alert_codes(run_dir: Path) -> list[str]:
    return [a["code"] for a in read_json(run_dir / "alerts.json")]


def test_happy_path_writes_the_whole_run_folder(corpus: Path, warehouse: Path) -> None:
    model = ScriptedModel(function=responder())
    state, run_dir = _run(model, corpus, warehouse)
    assert state.is_completed(), state.message
    assert state.result() == str(run_dir)
    for name in (
        "run.json",
        "plan.json",
        "findings.json",
        "sources.json",
        "review.json",
        "alerts.json",
        "calls.jsonl",
        "report.md",
        "documents.json",
    ):
        assert (run_dir / name).is_file(), name
    plan = read_json(run_dir / "plan.json")
    assert [st["doc_ids"] for st in plan["sub_tasks"]] == [d for _, d in AXES]
    assert plan["excluded"] == ["doc-07"]
    run = read_json(run_dir / "run.json")
    assert run["status"] == "completed" and run["backend"] == "scripted" and run["validated"] is True
    assert (run["subtasks_total"], run["subtasks_failed"], run["rounds"]) == (3, 0, 1)
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    sections = split_sections(report)
    assert all(name in sections for name in (*MODEL_SECTIONS, "Sources"))
    sources = read_json(run_dir / "sources.json")
    assert invalid_citations(report.split("## Sources")[0], [None] * len(sources)) == []
    assert [s["number"] for s in sources] == list(range(1, len(sources) + 1))
    # Each analyst saw only its own documents.
    for request in model.requests_for("analyst"):
        docs = {d.id for d in request.input.documents}
        assert docs == set(dict(AXES)[request.input.question])
    assert len(read_journal(run_dir / "calls.jsonl")) == len(model.requests)


def test_schema_invalid_answer_is_reasked_then_accepted(corpus: Path, warehouse: Path) -> None:
    model = ScriptedModel(responses={"planner": ['{"sub_tasks": "pas une liste"}']}, function=responder())
    state, run_dir = _run(model, corpus, warehouse)
    assert state.is_completed(), state.message
    planner = [r for r in read_journal(run_dir / "calls.jsonl") if r.role == "planner"]
    assert [(r.attempt, r.status) for r in planner] == [(1, "schema_error"), (2, "ok")]
    assert len({r.call_id for r in planner}) == 1
    # The re-ask carried the validation error back to the model, not the invalid answer.
    ((answer, error),) = model.requests_for("planner")[1].feedback
    assert answer == "" and "sub_tasks" in error


def test_hallucinated_ids_never_reach_an_analyst_or_the_report(corpus: Path, warehouse: Path) -> None:
    plan = Plan(
        sub_tasks=[
            SubTask(id="st-9", question=AXES[0][0], doc_ids=["doc-01", "doc-41", "doc-02"]),
            SubTask(id="st-9", question=AXES[1][0], doc_ids=["doc-03", "doc-04"]),
            SubTask(id="st-3", question="Question sans source valide ?", doc_ids=["doc-99"]),
        ],
        excluded=["doc-07"],
    )
    model = ScriptedModel(function=responder(plan=plan, foreign_citation="doc-07"))
    state, run_dir = _run(model, corpus, warehouse)
    assert state.is_completed(), state.message
    codes = _alert_codes(run_dir)
    assert {"plan.unknown_ids", "plan.empty_subtask", "analyse.foreign_citation"} <= set(codes)
    saved = read_json(run_dir / "plan.json")
    assert [st["id"] for st in saved["sub_tasks"]][:2] == ["st-1", "st-2"]
    assert saved["sub_tasks"][0]["doc_ids"][:2] == ["doc-01", "doc-02"]
    # doc-05 and doc-06 (about Orvet, a request term) were in no sub-task: the planner was asked
    # once more, still left them out, and code placed them (one alert naming both).
    assert len(model.requests_for("planner")) == 2
    [placed] = [a for a in read_json(run_dir / "alerts.json") if a["code"] == "plan.placed_by_code"]
    assert sorted(placed["subjects"]) == ["doc-05", "doc-06"]
    seen = {d.id for r in model.requests_for("analyst") for d in r.input.documents}
    assert seen == {"doc-01", "doc-02", "doc-03", "doc-04", "doc-05", "doc-06"}  # corpus ids only
    findings = read_json(run_dir / "findings.json")
    cited = {i for st in findings.values() for f in st["findings"] for i in f["doc_ids"]}
    assert "doc-07" not in cited and "doc-41" not in cited
    assert "doc-07" not in {s["id"] for s in read_json(run_dir / "sources.json")}
    # doc-07 (the canteen menu) shares nothing with the request: excluded, with its reason and
    # its text's score (issue 23, item 2).
    assert saved["excluded"] == ["doc-07"]
    [menu] = saved["exclusions"]
    assert menu["id"] == "doc-07" and menu["reason"] == "planner_excluded"
    assert menu["detail"] == "aucun lien lexical avec la demande ; texte : 0,00 du score typique du corpus"
    assert "plan.suspicious_exclusion" not in codes


def test_loop_validates_at_round_two_and_the_reviser_runs_once(corpus: Path, warehouse: Path) -> None:
    low = {**PERFECT, "clarity": 3, "remarks": ["Raccourcir la synthèse."]}
    model = ScriptedModel(function=responder(critic=lambda n: low if n == 1 else PERFECT))
    state, run_dir = _run(model, corpus, warehouse, max_rounds=4)
    assert state.is_completed(), state.message
    assert len(model.requests_for("critic")) == 2
    assert len(model.requests_for("reviser")) == 1
    review = read_json(run_dir / "review.json")
    assert review["validated"] is True
    assert [(r["round"], r["valid"]) for r in review["rounds"]] == [(1, False), (2, True)]
    first = review["rounds"][0]
    assert first["scores"]["clarity"] == 3 and first["mean"] == pytest.approx(4.6)
    assert "Raccourcir la synthèse." in first["instructions"]
    assert first["word_count"] > 0 and first["draft"]
    # The reviser got the arbiter's instructions verbatim.
    assert model.requests_for("reviser")[0].input.instructions == first["instructions"]


def test_loop_is_bounded_and_an_unvalidated_report_is_kept(corpus: Path, warehouse: Path) -> None:
    model = ScriptedModel(function=responder(critic=lambda n: {**PERFECT, "tone": 2}))
    state, run_dir = _run(model, corpus, warehouse, max_rounds=2)
    assert state.is_completed(), state.message
    assert len(model.requests_for("critic")) == 2
    assert len(model.requests_for("reviser")) == 1
    review = read_json(run_dir / "review.json")
    assert review["validated"] is False and len(review["rounds"]) == 2
    assert "review.not_validated" in _alert_codes(run_dir)
    assert read_json(run_dir / "run.json")["validated"] is False
    assert (run_dir / "report.md").read_text(encoding="utf-8").startswith("# ")


@pytest.mark.usefixtures("recording_prefect_api")  # the metrics count the task runs the server keeps
def test_a_failed_branch_gives_a_partial_report_and_a_failed_run(
    corpus: Path, warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(function=responder(analyst_fail={"st-2"}))
    caplog.set_level("INFO")
    state, run_dir = _run(model, corpus, warehouse)
    assert state.is_failed()
    # What the Prefect UI shows: the failed branch in the state message and in both artifacts,
    # the flow run under the veille run id, one log line per analyst branch.
    assert "1 branch(es) failed: st-2;" in (state.message or "")
    flow_run_id = state.state_details.flow_run_id
    ui = _ui_view(flow_run_id)
    assert ui["name"] == run_dir.name
    metrics = ui["metrics"]  # a few Markdown tables, one row per thing
    assert "| branches en échec | st-2 |" in metrics
    assert re.search(r"\| analyse\.branch\\_failed \| error \| 1 \| st-2 \|", metrics), metrics
    assert re.search(
        r"\| analyst \| \d+ \| \d+ \| \d+ \| 0 \| \d+ \| \d+ \(estimés\) \| 0\.0000 \$ \|", metrics
    ), metrics
    assert "| résultats de tâches (Cached) | 0 |" in metrics
    assert "failed branch(es) st-2" in ui["report_description"]
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("analyse st-")]
    assert sorted(m.split(":")[0] for m in lines) == ["analyse st-1", "analyse st-3"]
    assert all("2 document(s) read" in m and "finding(s)" in m and "tokens in" in m for m in lines), lines
    findings = read_json(run_dir / "findings.json")
    assert [findings[k]["status"] for k in ("st-1", "st-2", "st-3")] == ["ok", "failed", "ok"]
    assert "ValueError" in findings["st-2"]["error"]
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert AXES[1][0] in split_sections(report)["Ce qui reste incertain"]
    assert {"analyse.branch_failed", "run.partial_report"} <= set(_alert_codes(run_dir))
    run = read_json(run_dir / "run.json")
    assert (run["status"], run["subtasks_failed"]) == ("failed", 1)
    # The documents of the failed branch are not cited.
    assert not {"doc-03", "doc-04"} & {s["id"] for s in read_json(run_dir / "sources.json")}


def test_retry_reruns_only_the_failed_branch(corpus: Path, warehouse: Path) -> None:
    first = ScriptedModel(function=responder())
    state, run_dir = _run(first, corpus, warehouse, fail_subtasks=["st-2"])
    assert state.is_failed()
    assert "run.partial_report" in _alert_codes(run_dir)
    assert {r.input.subtask_id for r in first.requests_for("analyst")} == {"st-1", "st-3"}

    second = ScriptedModel(function=responder())
    state, rerun_dir = _run(second, corpus, warehouse)
    assert state.is_completed(), state.message
    assert rerun_dir != run_dir
    calls = read_journal(rerun_dir / "calls.jsonl")
    assert {r.subtask_id for r in calls if r.role == "analyst"} == {"st-2"}
    assert not [r for r in calls if r.role == "planner"]  # the plan came from the persisted result
    findings = read_json(rerun_dir / "findings.json")
    assert all(v["status"] == "ok" for v in findings.values()) and len(findings) == 3
    report = (rerun_dir / "report.md").read_text(encoding="utf-8")
    assert "Axe non couvert" not in report
    assert json.loads((rerun_dir / "run.json").read_text())["status"] == "completed"


def test_orphan_citation_is_stripped_by_code_before_review_with_an_alert(
    corpus: Path, warehouse: Path
) -> None:
    """A schema-following writer cannot cite an unknown number in its lists; one written in a text is
    removed by code (alerted) before the critic reads the rendered draft."""
    axes = ["st-1", "st-2", "st-3"]
    orphan = dossier_from(range(1, 7), axes, extra=" Kestrel tient la charge [99].")
    model = ScriptedModel(responses={"writer": [orphan]}, function=responder())
    state, run_dir = _run(model, corpus, warehouse, max_rounds=1)
    assert state.is_completed(), state.message
    first = read_json(run_dir / "review.json")["rounds"][0]
    assert "[99]" not in first["draft"] and "[99]" not in json.dumps(first["structure"])
    codes = _alert_codes(run_dir)
    assert "report.orphan_citation" in codes
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "[99]" not in report and "Kestrel tient la charge [1]." in report


class _Attempt:
    """``prefect.runtime.flow_run`` as a retry of flow run ``id`` sees it (attempt 2)."""

    def __init__(self, flow_run_id: Any) -> None:
        self.id, self.run_count = flow_run_id, 2


@pytest.mark.parametrize("use_cache", [True, False])
def test_drill_fires_on_a_warm_cache_and_its_retry_reruns_only_its_branch(
    corpus: Path, warehouse: Path, monkeypatch: pytest.MonkeyPatch, use_cache: bool
) -> None:
    import veille.flows.veille as flow_module

    state, _ = _run(ScriptedModel(function=responder()), corpus, warehouse, use_cache=use_cache)
    assert state.is_completed(), state.message  # last night: every branch cached

    drill = ScriptedModel(function=responder())
    state, drill_dir = _run(drill, corpus, warehouse, fail_subtasks=["st-2"], use_cache=use_cache)
    assert state.is_failed(), "the drill did nothing on a warm cache"
    findings = read_json(drill_dir / "findings.json")
    assert findings["st-2"]["status"] == "failed" and "injected fault" in findings["st-2"]["error"]
    assert "analyse.branch_failed" in _alert_codes(drill_dir)
    analysts = {r.input.subtask_id for r in drill.requests_for("analyst")}
    assert analysts == (set() if use_cache else {"st-1", "st-3"})  # warm: the healthy ones are cached

    # The retry of that flow run: same id, second attempt (the e2e test does it through a server).
    monkeypatch.setattr(flow_module, "flow_run", _Attempt(state.state_details.flow_run_id))
    retry = ScriptedModel(function=responder())
    state, retry_dir = _run(retry, corpus, warehouse, fail_subtasks=["st-2"], use_cache=use_cache)
    assert state.is_completed(), state.message
    assert {r.input.subtask_id for r in retry.requests_for("analyst")} == {"st-2"}
    assert not retry.requests_for("planner")
    assert all(v["status"] == "ok" for v in read_json(retry_dir / "findings.json").values())


def test_every_section_is_a_heading_and_review_keeps_each_rounds_structure(
    corpus: Path, warehouse: Path
) -> None:
    low = {**PERFECT, "clarity": 3}
    model = ScriptedModel(function=responder(critic=lambda n: low if n == 1 else PERFECT))
    state, run_dir = _run(model, corpus, warehouse, max_rounds=3)
    assert state.is_completed(), state.message
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    # The first dossier on this corpus: code's news section says so, between synthesis and key points.
    assert section_order(report) == [MODEL_SECTIONS[0], NEWS_SECTION, *MODEL_SECTIONS[1:], "Sources"]
    headings = [
        line[4:] for line in split_sections(report)["Points clés"].splitlines() if line.startswith("### ")
    ]
    # One heading per axis, in the plan's order: its question's subject, whole, without the id (issue 36).
    assert headings == list(axis_titles({f"st-{i}": q for i, (q, _) in enumerate(AXES, 1)}).values())
    assert not any(re.search(r"\bst-\d", h) for h in headings), headings
    rounds = read_json(run_dir / "review.json")["rounds"]
    assert len(rounds) == 2 and all(r["structure"]["sections"] and r["draft"] for r in rounds)
    # The reviser got the structure back, not Markdown.
    assert model.requests_for("reviser")[0].input.draft.model_dump() == rounds[0]["structure"]
