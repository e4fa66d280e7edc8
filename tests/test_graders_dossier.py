"""Grading a run folder against the corpus reference, and the grade_run task."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from testkit.scripted import ScriptedModel
from veille.backends import build_client
from veille.corpus.reference import Reference, load_reference
from veille.corpus.request import load_request
from veille.graders.dossier import TargetedGrade, grade_dossier, strip_sources
from veille.models.base import ModelRequest, TransientModelError
from veille.models.caller import ModelClient
from veille.roles.judge import JudgeInput, JudgeScore, JudgeVerdict, make_verdict
from veille.settings import Settings
from veille.tasks.grade import grade_run
from veille.warehouse.synth import write_synthetic_run


@pytest.fixture()
def reference(bundled_corpus: Path) -> Reference:
    ref = load_reference(bundled_corpus)
    assert ref is not None
    return ref


def _judge_by_length(request: ModelRequest) -> JudgeVerdict:
    # Longer text → higher accuracy: lets tests tell the rounds apart.
    responses = request.input.responses
    ranks = sorted(range(len(responses)), key=lambda i: len(responses[i]))
    return make_verdict(
        [
            JudgeScore(
                accuracy=min(5, 2 + ranks.index(i)),
                usefulness=3,
                tone=4,
                format=4,
                justification=f"réponse {i}",
            )
            for i in range(len(responses))
        ]
    )


@pytest.fixture()
def judge_client(tmp_path: Path) -> Iterator[tuple[ScriptedModel, ModelClient]]:
    model = ScriptedModel(function=_judge_by_length)
    settings = Settings(warehouse_dir=tmp_path / "warehouse", use_cache=False)
    client = build_client(settings, run_id="run", model=model)
    yield model, client
    client.close()


def _run_folder(tmp_path: Path, reference: Reference, *, rounds: int = 2) -> Path:
    run_dir = write_synthetic_run(
        tmp_path / "runs", datetime(2026, 7, 1, 2, tzinfo=UTC), rounds=rounds, with_grades=False
    )
    # A plan that follows facts.yaml: every group together, every kept document, no excluded one.
    facts = reference.facts
    grouped = {d for g in facts.groups for d in g}
    sub_tasks = [
        {"id": f"st-{i}", "question": "?", "doc_ids": list(g)} for i, g in enumerate(facts.groups, 1)
    ]
    sub_tasks.append({"id": "st-9", "question": "?", "doc_ids": [d for d in facts.keep if d not in grouped]})
    (run_dir / "plan.json").write_text(json.dumps({"sub_tasks": sub_tasks, "excluded": facts.exclude}))
    (run_dir / "sources.json").write_text(
        json.dumps(
            [
                {"number": n, "id": f"doc-{n:02d}", "title": "t", "date": "2026-01-01", "source_type": "blog"}
                for n in range(1, 17)
            ]
        )
    )
    (run_dir / "report.md").write_text(reference.dossier, encoding="utf-8")
    return run_dir


def _by(grades: list[TargetedGrade]) -> dict[tuple[str, str], TargetedGrade]:
    return {(g.grader, g.target): g for g in grades}


def test_reference_itself_gets_full_marks(
    tmp_path: Path, reference: Reference, judge_client: tuple[ScriptedModel, ModelClient]
) -> None:
    _model, client = judge_client
    run_dir = _run_folder(tmp_path, reference)
    grades = _by(grade_dossier(run_dir, reference, request="Demande", client=client))
    for name in (
        "rouge_l",
        "numeric",
        "structure.groups",
        "structure.keep",
        "structure.exclude",
        "structure.contradictions",
        "structure.citations",
    ):
        assert grades[(name, "final")].score == pytest.approx(1.0), name
    judge = grades[("judge", "final")]
    assert grades[("judge+similarity", "final")].score == pytest.approx(0.7 * judge.score + 0.3)  # type: ignore[operator]
    assert grades[("judge+numbers", "final")].score == pytest.approx(0.5 * judge.score + 0.5)  # type: ignore[operator]


def test_judge_sees_every_round_with_the_final_report_in_one_call(
    tmp_path: Path, reference: Reference, judge_client: tuple[ScriptedModel, ModelClient]
) -> None:
    model, client = judge_client
    run_dir = _run_folder(tmp_path, reference, rounds=3)
    grades = grade_dossier(run_dir, reference, request="Demande", client=client)
    [request] = model.requests_for("judge")
    drafts = [r["draft"] for r in json.loads((run_dir / "review.json").read_text())["rounds"]]
    given = [*(d.strip() for d in drafts), strip_sources(reference.dossier)]
    data = request.input
    assert isinstance(data, JudgeInput)
    order = data.order
    assert sorted(order) == list(range(4)) and data.criteria == "dossier"
    assert data.responses == [given[i] for i in order]  # shown shuffled, order recorded
    judged = {g.target: g.score for g in grades if g.grader == "judge"}
    assert set(judged) == {"round-1", "round-2", "round-3", "final"}
    assert judged["final"] > judged["round-1"]  # type: ignore[operator]  # the long final text ranks first


def test_identical_final_and_last_draft_are_judged_once(
    tmp_path: Path, reference: Reference, judge_client: tuple[ScriptedModel, ModelClient]
) -> None:
    model, client = judge_client
    run_dir = _run_folder(tmp_path, reference)
    review = json.loads((run_dir / "review.json").read_text())
    review["rounds"][-1]["draft"] = reference.dossier
    (run_dir / "review.json").write_text(json.dumps(review))
    grades = _by(grade_dossier(run_dir, reference, request="Demande", client=client))
    assert len(model.requests_for("judge")[0].input.responses) == 2
    assert grades[("judge", "round-2")].score == grades[("judge", "final")].score


def test_structural_checks_find_plan_and_report_defects(tmp_path: Path, reference: Reference) -> None:
    run_dir = _run_folder(tmp_path, reference)
    # Split the first group, plan an excluded document, drop a kept one, lose a contradiction keyword.
    plan = json.loads((run_dir / "plan.json").read_text())
    first, second = reference.facts.groups[0]
    plan["sub_tasks"][0]["doc_ids"] = [first]
    plan["sub_tasks"][-1]["doc_ids"] = [d for d in plan["sub_tasks"][-1]["doc_ids"] if d != "doc-01"]
    plan["sub_tasks"][-1]["doc_ids"] += [second, reference.facts.exclude[0]]
    (run_dir / "plan.json").write_text(json.dumps(plan))
    report = reference.dossier.replace("3.4.2", "3.4").replace("[16]", "[42]")
    (run_dir / "report.md").write_text(report, encoding="utf-8")

    grades = _by(grade_dossier(run_dir, reference, request="Demande", client=None))
    groups = grades[("structure.groups", "final")]
    assert groups.score == pytest.approx(3 / 4)
    assert [g["ok"] for g in groups.details["groups"]] == [False, True, True, True]
    assert grades[("structure.keep", "final")].details["dropped"] == ["doc-01"]
    assert grades[("structure.exclude", "final")].details["planned_anyway"] == [reference.facts.exclude[0]]
    contradictions = grades[("structure.contradictions", "final")]
    assert contradictions.score == pytest.approx(3 / 4)
    assert [c["id"] for c in contradictions.details["contradictions"] if not c["resolved"]] == ["C3"]
    citations = grades[("structure.citations", "final")]
    assert citations.details["invalid"] == [42] and citations.score == pytest.approx(15 / 16)
    assert grades[("numeric", "final")].score == pytest.approx(13 / 14)  # "3.4.2" no longer verbatim
    assert not any(g.grader.startswith("judge") for g in grades.values())  # no client, no judge


def test_judge_failure_gives_null_scores_not_a_crash(tmp_path: Path, reference: Reference) -> None:
    model = ScriptedModel({"judge": [TransientModelError("503 after retries")]})
    # One request per call: the error is what the judge's call ends with, not resent.
    settings = Settings(warehouse_dir=tmp_path / "warehouse", use_cache=False, http_attempts=1)
    with build_client(settings, run_id="run", model=model) as client:
        grades = _by(grade_dossier(_run_folder(tmp_path, reference), reference, request="D", client=client))
    assert grades[("judge", "final")].score is None
    assert "503" in grades[("judge", "final")].details["error"]
    assert grades[("judge+numbers", "final")].score is None
    assert grades[("rouge_l", "final")].score == pytest.approx(1.0)


def test_failed_run_without_report_still_checks_the_plan(tmp_path: Path, reference: Reference) -> None:
    run_dir = _run_folder(tmp_path, reference)
    (run_dir / "report.md").unlink()
    grades = _by(grade_dossier(run_dir, reference, request="D", client=None))
    assert grades[("structure.groups", "final")].score == 1.0
    assert grades[("structure.contradictions", "final")].score is None
    assert ("rouge_l", "final") not in grades


def test_grade_run_task_writes_grades_json(
    tmp_path: Path,
    bundled_corpus: Path,
    reference: Reference,
    judge_client: tuple[ScriptedModel, ModelClient],
) -> None:
    _, client = judge_client
    run_dir = _run_folder(tmp_path, reference)
    request = load_request(bundled_corpus)
    returned = grade_run.fn(run_dir, reference, request, client)
    written = json.loads((run_dir / "grades.json").read_text(encoding="utf-8"))
    assert written == returned
    assert {"grader", "version", "target", "score", "model", "details"} <= set(written[0])
    assert {g["target"] for g in written} == {"final", "round-1", "round-2"}


def test_grade_run_without_reference_writes_nothing(
    tmp_path: Path, bundled_corpus: Path, reference: Reference
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(bundled_corpus, corpus, ignore=shutil.ignore_patterns("reference"))
    run_dir = _run_folder(tmp_path, reference)
    assert load_reference(corpus) is None
    assert grade_run.fn(run_dir, load_reference(corpus), load_request(corpus), None) == []
    assert not (run_dir / "grades.json").exists()


def test_ledger_check_states_each_contradiction_and_lists_unmarked_superseded_points(
    tmp_path: Path, reference: Reference
) -> None:
    run_dir = _run_folder(tmp_path, reference)  # sources.json: number n is doc-n
    ledger = (
        "## Contradictions tranchées\n\n"
        "- Tamaris, axe st-1 — retenu : [3] ; écarté : [2]. La mesure interne prime sur la fiche.\n"
        "- Orvet, axe st-2 — retenu : [10] ; écarté : [9]. 3 600 EUR retenu contre 2 900 EUR.\n\n"
    )
    report = reference.dossier.replace("## Ce qui reste incertain", ledger + "## Ce qui reste incertain")
    report = report.replace("## Points clés\n\n", "## Points clés\n\n- Orvet : 2 900 EUR par GPU [9].\n"
                            "- Orvet : 2 900 EUR en 2026 (remplacé) [9].\n")  # fmt: skip
    (run_dir / "report.md").write_text(report, encoding="utf-8")
    grades = _by(grade_dossier(run_dir, reference, request="Demande", client=None))
    ledger_grade = grades[("structure.ledger", "final")]
    assert ledger_grade.score == pytest.approx(2 / 4)
    stated = {c["id"]: c["stated"] for c in ledger_grade.details["contradictions"]}
    assert stated == {"C1": True, "C2": True, "C3": False, "C4": False}
    assert ledger_grade.details["superseded_unmarked"] == ["Orvet : 2 900 EUR par GPU"]
    # The hand-written reference has no ledger section: nothing stated there.
    (run_dir / "report.md").write_text(reference.dossier, encoding="utf-8")
    assert (
        _by(grade_dossier(run_dir, reference, request="D", client=None))[("structure.ledger", "final")].score
        == 0
    )
