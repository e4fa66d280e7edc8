"""The plan step's reading of the request (veille.steps.request_read): the planner's proposal,
taken from its answer's optional fields, is refused where the request or the corpus does not
support it; plan.json records the reading and the run summary prints it."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from veille.roles.planner import Plan, PlannedAxis, PlannerInput, SubTask, plan_json_schema
from veille.run.folder import RunFolder
from veille.run.summary import format_summary
from veille.steps.request_read import plan_reading, proposal_of, reading_record

BODIES = {
    "doc-02": "Qdrant répond en 12 ms. Avec Qdrant et Milvus, le banc tient. Milvus coûte 3 000 EUR.",
    "doc-01": "L'extension pgvector tient 800 requêtes par seconde. Qdrant et Milvus aussi.",
}


def data(request: str, title: str = "Base vectorielle : Qdrant ou Milvus ?") -> PlannerInput:
    return PlannerInput(
        request_title=title,
        request=request,
        catalogue=[],
        max_subtasks=4,
        max_docs=4,
    )


def plan(**fields: object) -> Plan:
    return Plan(sub_tasks=[SubTask(id="st-1", question="Latence ?", doc_ids=["doc-01"])], **fields)  # type: ignore[arg-type]


def test_the_planner_schema_offers_the_reading_fields() -> None:
    schema = plan_json_schema(data("Compare-les."))
    assert {"axes", "options", "period_start", "period_end"} <= set(schema)
    assert schema["axes"]["items"]["properties"]["search_terms"]["type"] == "array"


def test_a_planner_proposing_an_option_absent_from_the_request_is_refused() -> None:
    proposed = plan(options=["pgvector", "Weaviate"], axes=[PlannedAxis(title="Empreinte carbone")])
    reading = plan_reading(data("Compare-les sur la latence, le coût et la sécurité."), BODIES, proposed)
    assert reading.options == ("Qdrant", "Milvus")  # pgvector: not in the request; Weaviate: nowhere
    assert [a.title for a in reading.axes] == ["Latence", "Coût", "Sécurité"]


def test_a_planner_proposal_the_request_supports_is_kept_with_its_origin() -> None:
    proposed = plan(
        options=["pgvector"],
        axes=[PlannedAxis(title="Latence", search_terms=["requêtes par seconde", "throughput"])],
        period_start="2025-01-01",
        period_end="not a date",
    )
    reading = plan_reading(data("Qdrant, Milvus ou pgvector ? Surtout la latence en 2025."), BODIES, proposed)
    assert reading.options == ("Qdrant", "Milvus", "pgvector")
    assert [a.title for a in reading.axes] == ["Latence"]
    assert reading.axes[0].terms == ("latence", "requêtes par seconde")  # "throughput": not in the corpus
    assert reading.origin["axes"] == "planner"
    assert (reading.period_start, reading.period_end, reading.origin["period"]) == (
        datetime.date(2025, 1, 1),
        None,
        "planner",
    )
    assert proposal_of(plan()) is None  # nothing proposed: code reads alone


def test_plan_json_and_the_summary_show_the_reading(tmp_path: Path) -> None:
    reading = plan_reading(
        data(
            "Recense les bases vectorielles et décris chacune sur la latence, le coût et la sécurité.",
            "Bases",
        ),
        BODIES,
    )
    folder = RunFolder(tmp_path, "20261206T000000Z-abcdef").create()
    folder.write_plan(plan(), basis="", request=reading_record(reading))
    recorded = json.loads((folder.path / "plan.json").read_text(encoding="utf-8"))["request"]
    assert recorded["kind"] == "inventory"
    assert [a["title"] for a in recorded["axes"]] == ["Latence", "Coût", "Sécurité"]
    summary = format_summary(folder.path)
    assert "Demande lue : un inventaire" in summary
    assert "options : aucune" in summary
    assert "axe-2 Coût" in summary
