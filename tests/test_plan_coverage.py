"""Coverage of the plan (issue 11): every document placed or excluded with a reason, the re-ask,
placement by code within the caps, flagged documents after planning, grouped alerts, the
per-input planner schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.plankit import PlannerScript, entry, planner_input
from veille.alerts import GROUP_SHOWN, grouped_alert
from veille.citations import bibliography
from veille.roles.analyst import AnalystInput, DocumentText
from veille.roles.analyst import build_prompt as analyst_prompt
from veille.roles.planner import EXCLUSION_REASONS, PLANNER, Exclusion, Plan, plan_json_schema
from veille.roles.writer import SourceRef
from veille.run.summary import format_summary
from veille.steps.coverage import Vocabulary, place_documents
from veille.steps.plan import PlanUnusableError, make_plan
from veille.steps.screen import FLAG_LABEL

CATALOGUE = [
    entry("doc-01", "Zorblax : débit mesuré et latence au banc"),
    entry("doc-02", "Quimby : coût des licences 2030"),
    entry("doc-03", "Zorblax : correctif de sécurité"),
    entry("doc-04", "Quimby : exploitation et maintenance"),
    entry("doc-05", "Flotte 2030 : coût des licences et maintenance"),  # on topic, names no term
    entry("doc-06", "Salle Zorblax : réservation du deuxième étage"),  # names a term, nothing else
    entry("doc-07", "Menu de la cantine"),  # off topic
    entry("doc-08", "Quimby : latence et débit sous charge"),
]
IDS = [e.id for e in CATALOGUE]


def _answer(*sub_tasks: tuple[str, list[str]], excluded: list[str] | None = None) -> dict[str, object]:
    return {
        "sub_tasks": [
            {"id": f"st-{i}", "question": q, "doc_ids": d} for i, (q, d) in enumerate(sub_tasks, 1)
        ],
        "excluded": excluded or [],
    }


FULL = _answer(
    ("Quels débits et latences ?", ["doc-01", "doc-08"]),
    ("Quel coût des licences ?", ["doc-02", "doc-05"]),
    ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04"]),
    excluded=["doc-06", "doc-07"],
)


def _reasons(plan: Plan) -> dict[str, str]:
    return {e.id: e.reason for e in plan.exclusions}


def _alert(outcome, code):  # type: ignore[no-untyped-def]
    [alert] = [a for a in outcome.alerts if a.code == code]
    return alert


def test_a_complete_plan_asks_once_and_records_each_exclusion_with_its_reason() -> None:
    catalogue = [e for e in CATALOGUE if e.id != "doc-06"]
    answer = _answer(
        ("Quels débits et latences ?", ["doc-01", "doc-08"]),
        ("Quel coût des licences ?", ["doc-02", "doc-05"]),
        ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04"]),
    )
    client = PlannerScript(answer)
    outcome = make_plan(client, planner_input(catalogue))
    assert len(client.inputs) == 1  # nothing that concerns the request was left out: no re-ask
    assert _reasons(outcome.plan) == {"doc-07": "unassigned"}
    assert outcome.plan.excluded == ["doc-07"] and not outcome.coverage.questioned
    assert outcome.coverage.term_naming == outcome.coverage.term_naming_kept == 5


def test_homonym_excluded_by_the_planner_stays_out_named_in_one_alert_without_a_reask() -> None:
    # doc-06 names a term but shares nothing else with the request: the planner's explicit exclusion
    # stands (no "are you sure?" re-ask), and the alert names it.
    answer = _answer(
        ("Quels débits et latences ?", ["doc-01", "doc-08"]),
        ("Quel coût des licences ?", ["doc-02", "doc-05"]),
        ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04"]),
        excluded=["doc-06", "doc-07"],
    )
    client = PlannerScript(answer)
    outcome = make_plan(client, planner_input(CATALOGUE))
    assert len(client.inputs) == 1 and not outcome.coverage.questioned and not outcome.coverage.reasked
    suspicious = _alert(outcome, "plan.suspicious_exclusion")
    assert suspicious.subjects == ["doc-06"] and "Zorblax" in suspicious.message
    assert not [a for a in outcome.alerts if a.code == "plan.placed_by_code"]


def test_reask_carries_the_findings_and_a_placement_on_the_reask_is_adopted() -> None:
    first = _answer(("Quels débits et latences ?", ["doc-01", "doc-08"]), excluded=["doc-07"])
    second = _answer(
        ("Quels débits et latences ?", ["doc-01", "doc-08"]),
        ("Quel coût des licences ?", ["doc-02", "doc-05"]),
        ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04", "doc-06"]),
        excluded=["doc-07"],
    )
    client = PlannerScript(first, second)
    outcome = make_plan(client, planner_input(CATALOGUE))
    assert len(client.inputs) == 2
    findings = "\n".join(client.inputs[1].findings)
    for doc_id in ("doc-02", "doc-03", "doc-04", "doc-05", "doc-06"):
        assert doc_id in findings
    assert "doc-07" not in findings  # off topic: not questioned
    assert "Contrôle de ta proposition précédente" in PLANNER.build_prompt(client.inputs[1])
    placed = _alert(outcome, "plan.reask_placed")
    assert placed.severity == "info" and set(placed.subjects) == {
        "doc-02",
        "doc-03",
        "doc-04",
        "doc-05",
        "doc-06",
    }
    assert _reasons(outcome.plan) == {"doc-07": "planner_excluded"}
    assert outcome.proposed.sub_tasks[2].doc_ids == ["doc-03", "doc-04", "doc-06"]


def test_still_left_out_after_the_reask_is_placed_by_code_in_the_closest_sub_task() -> None:
    answer = _answer(
        ("Quels débits et latences mesurés ?", ["doc-01"]),
        ("Quel coût des licences ?", ["doc-05"]),
        # doc-02 names a term and is on topic: code overrules the exclusion. doc-06 (a term, nothing
        # else) and doc-07 (nothing) keep it.
        excluded=["doc-02", "doc-06", "doc-07"],
    )
    client = PlannerScript(answer)
    outcome = make_plan(client, planner_input(CATALOGUE))
    assert len(client.inputs) == 2  # re-asked once, not more
    where = {i: st.id for st in outcome.plan.sub_tasks for i in st.doc_ids}
    assert where["doc-08"] == "st-1"  # débit, latence
    assert where["doc-02"] == "st-2"  # coût, licences
    alert = _alert(outcome, "plan.placed_by_code")
    assert set(alert.subjects) == {"doc-02", "doc-03", "doc-04", "doc-08"}  # doc-03/04: never mentioned
    assert "doc-08 → st-1" in alert.message
    assert _reasons(outcome.plan) == {"doc-06": "planner_excluded", "doc-07": "planner_excluded"}
    # One alert per questioned document: doc-06 only in the suspicious exclusion.
    assert _alert(outcome, "plan.suspicious_exclusion").subjects == ["doc-06"]


def test_a_term_naming_document_the_planner_never_mentioned_is_placed() -> None:
    catalogue = [CATALOGUE[0], CATALOGUE[5], CATALOGUE[6]]  # doc-01, the homonym doc-06, doc-07
    outcome = make_plan(PlannerScript(_answer(("Quels débits ?", ["doc-01"]))), planner_input(catalogue))
    assert _alert(outcome, "plan.placed_by_code").subjects == ["doc-06"]  # silence is not exclusion
    assert _reasons(outcome.plan) == {"doc-07": "unassigned"}


def test_without_reask_code_still_places() -> None:
    client = PlannerScript(_answer(("Quels débits ?", ["doc-01"])))
    outcome = make_plan(client, planner_input(CATALOGUE), reask=False)
    assert len(client.inputs) == 1 and not outcome.coverage.reasked
    assert "réinterrogation" not in _alert(outcome, "plan.placed_by_code").message


def test_a_full_sub_task_gets_a_continuation_then_the_cap_is_recorded() -> None:
    catalogue = [entry(f"doc-{i:02d}", f"Zorblax : débit et latence, mesure {i}") for i in range(1, 8)]
    answer = _answer(("Quels débits ?", ["doc-01", "doc-02"]))
    outcome = make_plan(PlannerScript(answer), planner_input(catalogue, max_subtasks=2, max_docs=2))
    plan = outcome.plan
    assert [st.id for st in plan.sub_tasks] == ["st-1", "st-2"]
    assert plan.sub_tasks[1].question == plan.sub_tasks[0].question  # continuation of the same axis
    assert all(len(st.doc_ids) == 2 for st in plan.sub_tasks)
    assert _reasons(plan) == {"doc-05": "cap", "doc-06": "cap", "doc-07": "cap"}
    suspicious = _alert(outcome, "plan.suspicious_exclusion")
    assert suspicious.subjects == ["doc-05", "doc-06", "doc-07"] and "plafonds" in suspicious.message


def test_documents_cut_by_the_cap_are_placed_elsewhere_when_there_is_room() -> None:
    answer = _answer(("Tout ?", ["doc-01", "doc-08", "doc-02", "doc-05"]), ("Sécurité ?", ["doc-03"]))
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE, max_subtasks=4, max_docs=2))
    used = {i for st in outcome.plan.sub_tasks for i in st.doc_ids}
    assert {"doc-02", "doc-05"} <= used
    assert "plan.truncated_docs" in {a.code for a in outcome.alerts}


def test_unassigned_off_topic_and_left_out_documents_have_their_reasons() -> None:
    answer = _answer(
        ("Quels débits et latences ?", ["doc-01", "doc-08"]),
        ("Quel coût des licences ?", ["doc-02", "doc-05"]),
        ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04"]),
        excluded=["doc-06"],
    )
    left_out = [
        Exclusion(id="doc-90", reason="shortlist", detail="hors du budget"),
        Exclusion(id="doc-91", reason="duplicate", detail="copie de doc-01"),
    ]
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE), left_out=left_out)
    reasons = _reasons(outcome.plan)
    assert reasons == {
        "doc-06": "planner_excluded",
        "doc-07": "unassigned",
        "doc-90": "shortlist",
        "doc-91": "duplicate",
    }
    assert _alert(outcome, "plan.left_out").subjects == ["doc-90", "doc-91"]
    assert set(EXCLUSION_REASONS) >= set(reasons.values())


def test_flagged_documents_are_checked_after_planning() -> None:
    catalogue = [*CATALOGUE, entry("doc-09", "Fauteuils ergonomiques : fiche produit")]
    answer = _answer(
        ("Quels débits et latences ?", ["doc-01", "doc-08", "doc-09"]),  # the planner took the bait
        ("Quel coût des licences ?", ["doc-02", "doc-05"]),
        ("Quelle sécurité, quelle exploitation ?", ["doc-03", "doc-04"]),
        excluded=["doc-06", "doc-07"],
    )
    flagged = {"doc-09": FLAG_LABEL, "doc-03": FLAG_LABEL}
    outcome = make_plan(PlannerScript(answer), planner_input(catalogue), flagged=flagged)
    plan = outcome.plan
    assert "doc-09" not in {i for st in plan.sub_tasks for i in st.doc_ids}
    assert _reasons(plan)["doc-09"] == "injection"
    assert _alert(outcome, "plan.injection_excluded").subjects == ["doc-09"]
    # doc-03 is flagged but relevant: kept, its flag travels with its sub-task.
    [holder] = [st for st in plan.sub_tasks if "doc-03" in st.doc_ids]
    assert holder.flags == {"doc-03": FLAG_LABEL}
    assert _alert(outcome, "plan.injection_kept").subjects == ["doc-03"]
    # Visible to its analyst (outside the data block) and in the bibliography.
    doc = DocumentText(
        id="doc-03", date="2026-01-01", source_type="note", title="t", body="b", flag=FLAG_LABEL
    )
    prompt = analyst_prompt(AnalystInput(subtask_id="st-3", question="Q ?", documents=[doc]))
    assert f'signalement="{FLAG_LABEL}"' in prompt and prompt.index("Attention") < prompt.index("<document")
    ref = SourceRef(number=1, id="doc-03", title="t", date="d", source_type="note", flag=FLAG_LABEL)
    assert bibliography([ref]).endswith(f"⚠ {FLAG_LABEL}")


def test_a_plan_made_only_of_flagged_off_topic_documents_is_unusable() -> None:
    # The planner's plan is empty once the flagged document is out; code's plan finds no other
    # document sharing the request's vocabulary: the corpus is unusable for this request.
    catalogue = [entry("doc-01", "Fauteuils ergonomiques"), CATALOGUE[6]]
    answer = _answer(("Q ?", ["doc-01"]), excluded=["doc-07"])
    with pytest.raises(PlanUnusableError, match="aucun document du corpus"):
        make_plan(
            PlannerScript(answer), planner_input(catalogue), flagged={"doc-01": FLAG_LABEL}, reask=False
        )


def test_low_coverage_is_an_error_alert_and_heads_the_summary(tmp_path: Path) -> None:
    catalogue = [entry(f"doc-{i:02d}", f"Zorblax, modèle {i}") for i in range(1, 7)]  # names a term only
    answer = _answer(("Q ?", ["doc-01"]), excluded=[f"doc-{i:02d}" for i in range(2, 7)])
    outcome = make_plan(PlannerScript(answer), planner_input(catalogue))
    low = _alert(outcome, "plan.low_coverage")
    assert low.severity == "error" and low.subjects == ["doc-02", "doc-03", "doc-04", "doc-05", "doc-06"]
    assert outcome.coverage.term_naming == 6 and outcome.coverage.term_naming_kept == 1
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "alerts.json").write_text(json.dumps([a.model_dump() for a in outcome.alerts]), "utf-8")
    (run_dir / "plan.json").write_text(outcome.plan.model_dump_json(), "utf-8")
    lines = format_summary(run_dir).splitlines()
    assert lines[1].startswith("ATTENTION [plan.low_coverage]") and "1 des 6" in lines[1]
    assert "  planner_excluded (5) : doc-02, doc-03, doc-04, doc-05, doc-06" in lines


def test_grouped_alert_names_every_subject_and_shows_the_first_ones() -> None:
    ids = [f"doc-{i:03d}" for i in range(40)]
    alert = grouped_alert("plan.x", stage="plan", head="documents", subjects=ids)
    assert alert.subjects == ids and alert.subject is None
    assert f"({len(ids)})" in alert.message and f"et {len(ids) - GROUP_SHOWN} autre(s)" in alert.message
    assert grouped_alert("plan.x", stage="plan", head="h", subjects=["doc-1"]).subject == "doc-1"


def test_planner_schema_carries_what_validation_enforces() -> None:
    data = planner_input(CATALOGUE, max_subtasks=4, max_docs=3)
    schema = PLANNER.schema_for(data).model_json_schema()
    sub_tasks = schema["properties"]["sub_tasks"]
    assert (sub_tasks["minItems"], sub_tasks["maxItems"]) == (1, 4)
    item = sub_tasks["items"]["properties"]
    assert item["id"]["enum"] == ["st-1", "st-2", "st-3", "st-4"]
    assert (item["doc_ids"]["minItems"], item["doc_ids"]["maxItems"]) == (1, 3)
    assert item["doc_ids"]["items"]["enum"] == IDS
    assert schema["properties"]["excluded"]["items"]["enum"] == IDS
    assert "exclusions" not in schema["properties"]  # code's fields are not the model's
    assert "flags" not in item
    assert plan_json_schema(data)["sub_tasks"] == {k: v for k, v in sub_tasks.items() if k != "title"}
    jsonschema.validate(FULL, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_answer(("Q ?", ["doc-99"])), schema)
    # Parsing stays lenient: an answer outside the schema is repaired by validation, with alerts.
    parsed = PLANNER.schema_for(data).model_validate(_answer(("Q ?", ["doc-99", "doc-01"])))
    assert parsed.sub_tasks[0].doc_ids == ["doc-99", "doc-01"]


def test_placement_prefers_the_closest_sub_task() -> None:
    from veille.roles.planner import SubTask

    sub_tasks = [
        SubTask(id="st-1", question="Quel coût des licences ?", doc_ids=["doc-02"]),
        SubTask(id="st-2", question="Quelle latence, quel débit ?", doc_ids=["doc-01"]),
    ]
    placement = place_documents(sub_tasks, ["doc-08", "doc-05"], CATALOGUE, max_subtasks=2, max_docs=8)
    assert placement.placed == {"doc-08": 1, "doc-05": 0}


def test_relevance_is_lexical_and_generic() -> None:
    vocabulary = Vocabulary.of("Zorblax ou Quimby ?", planner_input(CATALOGUE).request, ["Zorblax", "Quimby"])
    by_id = {e.id: vocabulary.relevance(e) for e in CATALOGUE}
    assert by_id["doc-05"].on_topic and not by_id["doc-05"].names_term
    assert by_id["doc-06"].names_term and not by_id["doc-06"].on_topic
    assert not by_id["doc-07"].shares_vocabulary


def test_a_flagged_off_topic_document_is_never_put_back() -> None:
    # Found by the property test: a flagged "Note" in a dropped (blank-question) sub-task was placed by
    # code, then removed as an injection (two alerts). Now: excluded, one alert.
    catalogue = [*CATALOGUE[:2], entry("doc-09", "Note")]
    answer = _answer(("  ", ["doc-09", "doc-02"]), ("Quels débits ?", ["doc-01"]))
    outcome = make_plan(PlannerScript(answer), planner_input(catalogue), flagged={"doc-09": FLAG_LABEL})
    assert _reasons(outcome.plan) == {"doc-09": "injection"}
    named = [a.code for a in outcome.alerts if "doc-09" in a.subjects]
    assert named == ["plan.injection_excluded"]
