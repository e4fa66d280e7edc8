"""Sections follow the request (issue 37, item 5): no recommendation section when no choice is
asked, whoever writes the dossier (model schema, sanitiser, reviser, offline writer, fallback), the
arbiter and the offline critic accept a dossier without it, and an inventory request gets one entry
per item found, through the offline pipeline too."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.offline_pipeline import run_bundled_pipeline
from veille.arbiter import arbitrate
from veille.dossier import (
    RECOMMENDATION_SECTION,
    AxisSection,
    CitedText,
    Dossier,
    KeyPoint,
    dossier_schema,
    render_body,
)
from veille.grid import load_grid
from veille.offline.writer import write
from veille.resources import data_file
from veille.roles.writer import WRITER, NumberedFinding, SourceRef, WriterInput
from veille.steps.write import sanitize_dossier
from veille.textstats import section_order

SOURCES = [
    SourceRef(
        number=n, id=f"doc-{n:02d}", title=f"Fiche du service {name}", date="2025-03-01", source_type="fiche"
    )
    for n, name in enumerate(["Alpaga", "Bergeronnette", "Castor", "Dauphin"], start=1)
]


def dossier(recommendation: list[CitedText] | None) -> Dossier:
    return Dossier(
        synthesis=[
            CitedText(text=f"Phrase {n} du dossier sur les services.", citations=[n]) for n in (1, 2, 3)
        ],
        sections=[
            AxisSection(axis="st-1", points=[KeyPoint(text="Alpaga a servi 1 200 patients.", citations=[1])])
        ],
        uncertainties=[],
        recommendation=recommendation,
    )


def test_render_body_has_no_recommendation_section_when_none_is_asked() -> None:
    asked = render_body(dossier([CitedText(text="Retenir Alpaga.", citations=[1])]), {"st-1": "Services"})
    none = render_body(dossier(None), {"st-1": "Services"})
    assert f"## {RECOMMENDATION_SECTION}" in asked
    assert f"## {RECOMMENDATION_SECTION}" not in none
    assert section_order(none)[-1] != RECOMMENDATION_SECTION


def test_the_writer_schema_has_a_recommendation_only_for_a_choice() -> None:
    choice = dossier_schema([1, 2], ["st-1"]).model_json_schema()["properties"]
    inventory = dossier_schema([1, 2], ["st-1"], recommend=False).model_json_schema()["properties"]
    assert "recommendation" in choice and "recommendation" not in inventory
    data = writer_input("inventory")
    assert "recommendation" not in WRITER.output_schema(data).model_json_schema()["properties"]
    assert "recommendation" in WRITER.output_schema(writer_input("choice")).model_json_schema()["properties"]


def test_sanitising_keeps_no_recommendation_as_none_and_an_empty_one_as_empty() -> None:
    clean, _ = sanitize_dossier(dossier(None), SOURCES, ["st-1"])
    assert clean.recommendation is None
    clean, _ = sanitize_dossier(dossier([]), SOURCES, ["st-1"])
    assert clean.recommendation == []


def test_the_arbiter_accepts_a_dossier_without_recommendation_but_still_checks_order(tmp_path: Path) -> None:
    grid = load_grid(data_file("grid.toml"))
    evaluation = {c: 5 for c in grid.criteria} | {"remarks": []}
    body = render_body(dossier(None), {"st-1": "Services"})
    verdict = arbitrate(evaluation, body, grid, SOURCES)
    assert not any("Section manquante" in i for i in verdict.instructions)
    swapped = (
        body.replace("## Synthèse", "## TEMP")
        .replace("## Points clés", "## Synthèse")
        .replace("## TEMP", "## Points clés")
    )
    assert any("Ordre des sections" in i for i in arbitrate(evaluation, swapped, grid, SOURCES).instructions)


def writer_input(kind: str) -> WriterInput:
    findings = [
        NumberedFinding(
            subtask_id="st-1",
            statement=f"Le service {s.title.split()[-1]} a servi {n} 000 patients en 2024.",
            sources=[s.number],
        )
        for n, s in enumerate(SOURCES, start=2)
    ]
    return WriterInput(
        request_title="Services de téléconsultation",
        request="Recense les services de téléconsultation : ce que fait chaque service.",
        questions={"st-1": "Que fait chaque service ?"},
        axes={"st-1": "Services"},
        findings=findings,
        sources=SOURCES,
        kind=kind,  # type: ignore[arg-type]
        max_words=400,
    )


@pytest.mark.parametrize("kind", ["inventory", "evolution", "survey"])
def test_the_offline_writer_writes_no_recommendation_unless_a_choice(kind: str) -> None:
    assert write(writer_input(kind)).recommendation is None
    assert write(writer_input("choice")).recommendation


def test_the_offline_writer_keeps_one_entry_per_item_of_an_inventory_within_the_word_budget() -> None:
    data = writer_input("inventory").model_copy(update={"max_words": 60})
    cited = {n for s in write(data).sections for p in s.points for n in p.citations}
    assert cited == {s.number for s in SOURCES}


# --- end to end through the offline pipeline --------------------------------------------------

SERVICES = [
    (
        "Alpaga",
        "2025-01-10",
        "a assuré 1 200 téléconsultations par mois en 2024, avec un délai moyen de 2 jours",
    ),
    ("Bergeronnette", "2025-02-03", "a été abandonné en 2024 faute de médecins : 300 consultations au total"),
    ("Castor", "2025-02-20", "suit 450 patients diabétiques à distance ; l'hospitalisation a baissé de 12 %"),
    ("Dauphin", "2025-03-05", "a été abandonné en 2023 : le coût par consultation atteignait 95 EUR"),
]


def corpus(root: Path, request: str) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "request.md").write_text(
        f'---\ntitle: "Services de téléconsultation de la région"\n---\n\n{request}\n', encoding="utf-8"
    )
    for n, (name, date, fact) in enumerate(SERVICES, start=1):
        body = (
            f"## Le service {name}\n\nLe service de téléconsultation {name} {fact}. Le service {name} est "
            f"porté par l'agence régionale de santé ; la téléconsultation {name} couvre trois départements."
        )
        (root / "docs" / f"doc-{n:02d}.md").write_text(
            f'---\nid: doc-{n:02d}\ndate: "{date}"\nsource_type: fiche-service\ntitle: "Téléconsultation {name}"\n---\n\n{body}\n',
            encoding="utf-8",
        )
    return root


INVENTORY = (
    "Recense les services de téléconsultation de la région : ce que fait chaque service, ses résultats "
    "mesurés, et lesquels ont été abandonnés et pourquoi."
)
CHOICE = "Faut-il choisir Alpaga, Castor ou Dauphin pour la téléconsultation de la région ?"


def test_an_inventory_request_yields_no_recommendation_section_and_one_entry_per_item(tmp_path: Path) -> None:
    out = run_bundled_pipeline(corpus(tmp_path / "inventory", INVENTORY), max_rounds=1)
    assert out["writer_input"]["kind"] == "inventory"
    assert out["plan"]["reading"]["kind"] == "inventory"
    assert f"## {RECOMMENDATION_SECTION}" not in out["report"]
    assert f"## {RECOMMENDATION_SECTION}" not in out["first_draft"]
    key_points = out["report"].split("## Points clés", 1)[1].split("\n## ", 1)[0]
    for name, _, _ in SERVICES:  # each service found has its entry
        assert name in key_points, name


def test_a_choice_request_on_the_same_corpus_keeps_its_recommendation(tmp_path: Path) -> None:
    out = run_bundled_pipeline(corpus(tmp_path / "choice", CHOICE), max_rounds=1)
    assert out["writer_input"]["kind"] == "choice"
    assert out["writer_input"]["options"] == ["Alpaga", "Castor", "Dauphin"]
    assert f"## {RECOMMENDATION_SECTION}" in out["report"]


def test_an_evolution_is_written_in_its_sources_date_order() -> None:
    dates = ["2025-06-01", "2024-01-15", "2025-01-10", "2023-09-30"]
    sources = [s.model_copy(update={"date": d}) for s, d in zip(SOURCES, dates, strict=True)]
    data = writer_input("evolution").model_copy(update={"sources": sources})
    cited = [p.citations[0] for s in write(data).sections for p in s.points]
    assert [dates[n - 1] for n in cited] == sorted(dates[n - 1] for n in cited)
    assert len(cited) == len(SOURCES)
