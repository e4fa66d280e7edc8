"""Unit tests of the plan's reading by code (issue 37): search terms, groups, removal, caps, the
interim request reading, plan.json."""

from __future__ import annotations

import datetime

from veille.roles.planner import CatalogueEntry, Plan, SubTask
from veille.steps.passages import passages_of
from veille.steps.plan_groups import DocumentFacts, measures_of, same_subject_groups
from veille.steps.plan_reading import (
    InterimAxis,
    InterimReading,
    decide_reading,
    interim_reading,
    out_of_period,
)
from veille.steps.plan_validate import validate_plan

OPTIONS = ("Zorblax", "Quimby")


def _entry(doc_id: str, date: str = "2025-01-10", kind: str = "note", title: str = "Note") -> CatalogueEntry:
    return CatalogueEntry(id=doc_id, date=date, source_type=kind, title=title)


def _plan(sub_tasks: list[list[str]], ids: list[str], terms: list[list[str]] | None = None) -> Plan:
    proposal = Plan(
        sub_tasks=[
            SubTask(
                id=f"st-{k}", question=f"Question {k} ?", doc_ids=d, search_terms=(terms or [[]] * 9)[k - 1]
            )
            for k, d in enumerate(sub_tasks, 1)
        ]
    )
    return validate_plan(proposal, ids, max_subtasks=6, max_docs=8)[0]


def _decide(
    plan: Plan, entries: list[CatalogueEntry], bodies: dict[str, str], reading: InterimReading, **caps: int
) -> Plan:
    return decide_reading(
        plan, entries, bodies, reading, request_title="Zorblax ou Quimby ?",
        max_subtasks=caps.get("max_subtasks", 6), max_docs=caps.get("max_docs", 8),
    ).plan  # fmt: skip


ENGLISH = "## Results\n\nZorblax sustains a p99 throughput of 40 000 messages per second on our cluster."
FRENCH = "## Mesures\n\nLa latence de Quimby reste sous 12 ms au p99 sur notre grappe de test."
MENU = "## Menu\n\n" + " ".join(
    f"{day} : gratin dauphinois, salade verte, compote de pommes, pain complet, fromage blanc, "
    "soupe de légumes, tarte aux poires, jus d'orange pressé."
    for day in ("Lundi", "Mardi", "Mercredi", "Jeudi", "Vendredi")
)  # a long text: the absence of the axes' words means something (min_words_to_judge)
SIZING = "## Dimensionnement\n\nLa plateforme aura 12 GPU en 2027."


def test_the_planners_search_terms_find_documents_the_requests_words_miss() -> None:
    entries = [_entry("doc-01"), _entry("doc-02"), _entry("doc-03")]
    bodies = {"doc-01": ENGLISH, "doc-02": FRENCH, "doc-03": MENU}
    ids = [e.id for e in entries]
    plain = _plan([["doc-02"]], ids)
    reading = interim_reading("Zorblax ou Quimby ?", "Compare-les sur la latence et le débit.", list(OPTIONS))
    without = _decide(plain, entries, bodies, reading)
    assert "doc-01" not in {i for st in without.sub_tasks for i in st.doc_ids}
    searched = _plan([["doc-02"]], ids, [["throughput", "latency"]])
    reading = interim_reading(
        "Zorblax ou Quimby ?", "Compare-les sur la latence et le débit.", list(OPTIONS), searched.sub_tasks
    )
    assert "throughput" in reading.axes[0].terms
    used = {i for st in _decide(searched, entries, bodies, reading).sub_tasks for i in st.doc_ids}
    assert used == {"doc-01", "doc-02"}  # the menu names no option and no axis


def test_a_placed_document_with_no_relevant_passage_is_removed_with_its_reason() -> None:
    entries = [_entry("doc-01"), _entry("doc-02"), _entry("doc-03")]
    bodies = {"doc-01": ENGLISH, "doc-02": FRENCH, "doc-03": MENU}
    reading = InterimReading((InterimAxis("axe-1", "Latence", ("latence", "throughput")),), OPTIONS)
    plan = _decide(_plan([["doc-01", "doc-02", "doc-03"]], [e.id for e in entries]), entries, bodies, reading)
    reasons = {e.id: e.reason for e in plan.exclusions}
    assert reasons == {"doc-03": "no_relevant_passage"}
    assert plan.reading["removed"] == ["doc-03"]
    # A one-line sizing note the planner placed stays: too short for absence to mean anything.
    entries.append(_entry("doc-04"))
    bodies["doc-04"] = SIZING
    plan = _decide(_plan([["doc-01", "doc-04"]], [e.id for e in entries]), entries, bodies, reading)
    assert "doc-04" in {i for st in plan.sub_tasks for i in st.doc_ids}


def test_same_measure_of_the_same_option_at_two_dates_is_one_group() -> None:
    old = "## Tarif\n\nLe tarif annuel de Zorblax est de 18 EUR par poste."
    new = "## Tarif\n\nAu 1er avril, le tarif annuel de Zorblax passe à 24 EUR par poste."
    other = "## Tarif\n\nLe tarif annuel de Quimby est de 30 EUR par poste."
    bodies = {"a": old, "b": new, "c": other}
    passages = passages_of(bodies, {}, OPTIONS)
    facts = {
        d: DocumentFacts(date, "note", tuple(p for p in passages if p.doc_id == d))
        for d, date in (("a", "2024-01-01"), ("b", "2025-04-01"), ("c", "2025-04-01"))
    }
    assert ("Zorblax", "currency/", "tarif") in measures_of(facts["a"].passages, OPTIONS)
    assert same_subject_groups(facts, OPTIONS, max_docs=8) == [["a", "b"]]
    # The same date and kind of source: two statements, no contradiction to settle together.
    same = {d: DocumentFacts("2025-04-01", "note", f.passages) for d, f in facts.items()}
    assert same_subject_groups(same, OPTIONS, max_docs=8) == []
    # A group never outgrows one sub-task.
    assert same_subject_groups(facts, OPTIONS, max_docs=1) == []


def test_a_pair_split_by_the_planner_is_read_by_one_branch() -> None:
    old = "## Faille\n\nLa faille de Zorblax n'a pas de correctif ; le score CVSS est de 9,1 %."
    new = "## Correctif\n\nLa faille de Zorblax est corrigée par la 2.1.3 ; le score CVSS tombe à 0,0 %."
    entries = [_entry("doc-01", "2024-11-02", "bulletin"), _entry("doc-02", "2025-01-20", "correctif")]
    reading = InterimReading((InterimAxis("axe-1", "Sécurité", ("faille", "correctif")),), OPTIONS)
    plan = _decide(
        _plan([["doc-01"], ["doc-02"]], ["doc-01", "doc-02"]),
        entries,
        {"doc-01": old, "doc-02": new},
        reading,
    )
    assert any({"doc-01", "doc-02"} <= set(st.doc_ids) for st in plan.sub_tasks), plan.sub_tasks
    assert plan.reading["groups"] == [["doc-01", "doc-02"]]


def test_a_full_axis_is_split_never_a_document_dropped() -> None:
    ids = [f"doc-{i:02d}" for i in range(1, 8)]
    entries = [_entry(i) for i in ids]
    bodies = {
        i: f"## Mesure {i}\n\nLa latence de Zorblax mesurée ici reste stable selon l'essai {i}." for i in ids
    }
    reading = InterimReading((InterimAxis("axe-1", "Latence", ("latence",)),), OPTIONS)
    plan = _decide(_plan([ids[:1]], ids), entries, bodies, reading, max_docs=3)
    assert {i for st in plan.sub_tasks for i in st.doc_ids} == set(ids)
    assert len(plan.sub_tasks) == 3 and all(len(st.doc_ids) <= 3 for st in plan.sub_tasks)
    # No room at all: the rest is named with reason ``cap``, never silently dropped.
    tight = decide_reading(
        _plan([ids[:1]], ids), entries, bodies, reading, request_title="", max_subtasks=2, max_docs=2
    )
    reasons = {e.id: e.reason for e in tight.plan.exclusions}
    assert sorted(reasons) == tight.plan.reading["unplaced"] and set(reasons.values()) == {"cap"}
    assert any(a.code == "plan.reading_cap" and a.severity == "error" for a in tight.alerts)


def test_out_of_period_reads_partial_dates_as_their_whole_span() -> None:
    start = datetime.date(2024, 1, 15)
    assert out_of_period("2023-12-31", start, None)
    assert not out_of_period("2024-01", start, None)  # January 2024 may be after the 15th
    assert out_of_period("2023", start, None)
    assert not out_of_period("", start, None)  # undated: never excluded for its date
    assert out_of_period("2026-02-01", None, datetime.date(2025, 12, 31))


def test_interim_reading_keeps_the_requests_axes_and_options() -> None:
    request = "Compare-les sur les points suivants :\n\n1. Latence au p99\n2. Coût des licences\n3. Sécurité"
    reading = interim_reading("Zorblax ou Quimby ?", request, list(OPTIONS))
    assert [a.key for a in reading.axes] == ["axe-1", "axe-2", "axe-3"]
    assert [a.title for a in reading.axes] == ["Latence au p99", "Coût des licences", "Sécurité"]
    assert reading.options == OPTIONS and reading.period_start is None
    assert not any("zorblax" in t.lower() for a in reading.axes for t in a.terms)


def test_a_branch_shown_the_sections_of_its_axis_reads_only_those() -> None:
    from veille.roles.analyst import DocumentText
    from veille.steps.reading import axis_passages

    body = "## Prix\n\nLa licence coûte 900 EUR.\n\n## Déploiement\n\nChart Helm pour Kubernetes.\n\n## Feuille de route\n\nVersion 2.6 en été."
    doc = DocumentText(id="doc-08", date="2026-01-01", source_type="fiche", title="Orvet", body=body)
    other = doc.model_copy(update={"id": "doc-09"})
    shown = axis_passages([doc, other], {"doc-08": [1, 2]})
    assert "Kubernetes" in shown[0].body and "Version 2.6" in shown[0].body and "900 EUR" not in shown[0].body
    assert shown[0].read_percent is not None and 0 < shown[0].read_percent < 100
    assert shown[1] == other  # not listed: whole
    assert axis_passages([doc], {"doc-08": [0, 1, 2]})[0] == doc  # every section: whole


def test_a_period_no_dated_document_falls_in_is_set_aside_with_an_alert() -> None:
    """« la mise en production de 2027 » read as a period would leave nothing to read: every
    document is dated 2026, so the period is not the documents' period (plan.period_ignored)."""
    entries = [_entry("doc-01", "2026-03-01"), _entry("doc-02", "2026-09-14"), _entry("doc-03", "")]
    bodies = {e.id: "Zorblax : latence p95 de 210 ms au banc d'essai." for e in entries}
    axis = InterimAxis("axe-1", "Latence", ("latence",))
    reading = InterimReading((axis,), OPTIONS, period_start=datetime.date(2027, 1, 1))
    plan = _plan([["doc-01", "doc-02", "doc-03"]], [e.id for e in entries])
    decision = decide_reading(
        plan, entries, bodies, reading, request_title="Moteurs", max_subtasks=4, max_docs=6
    )
    assert not [e for e in decision.plan.exclusions if e.reason == "out_of_period"]
    assert {"doc-01", "doc-02"} <= {i for s in decision.plan.sub_tasks for i in s.doc_ids}
    assert [a.code for a in decision.alerts if a.code == "plan.period_ignored"]
    # One dated document inside the period: the period holds and the older one is out.
    inside = [*entries[:1], _entry("doc-02", "2027-02-01"), entries[2]]
    kept = decide_reading(plan, inside, bodies, reading, request_title="Moteurs", max_subtasks=4, max_docs=6)
    assert [e.id for e in kept.plan.exclusions if e.reason == "out_of_period"] == ["doc-01"]
