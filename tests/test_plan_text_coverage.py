"""Coverage decided by code both ways on the documents' text (issue 23, item 2): an off-topic text is
not read even when the planner placed it (nor put back after a cap), a relevant one is read when the
planner's plan misses most documents naming a term, and a lone exclusion (a homonym) stands. The
measure is BM25 relative to the corpus (veille.steps.text_relevance); invented vocabulary only."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plankit import REQUEST, TERMS, PlannerScript, entry, planner_input
from veille.roles.planner import Plan
from veille.steps.plan import make_plan
from veille.steps.text_relevance import TextRelevance, measure

FIELD = (
    "Le banc mesure le débit et la latence sous charge ; les licences de la flotte coûtent {n} euros ; "
    "le correctif de sécurité arrive avec la maintenance et l'exploitation du parc. "
)
BODIES = {
    "doc-01": "Zorblax au banc. " + FIELD.format(n=120) * 3,
    "doc-02": "Quimby au banc. " + FIELD.format(n=140) * 3,
    "doc-03": "Zorblax face à Quimby : " + FIELD.format(n=90) * 2,
    "doc-04": "Quimby, exploitation : " + FIELD.format(n=70) * 2,
    "doc-05": "Zorblax 2.1 corrige la faille de sécurité signalée ; correctif à appliquer.",
    "doc-06": "Menu de la semaine : gratin, poisson pané, compote et yaourt à la vanille. " * 8,
    "doc-07": "Le café Zorblax ouvre rue des Lilas : viennoiseries, tartines et chocolat chaud. " * 8,
    "doc-08": "Calendrier de distribution des nouveaux badges du bâtiment B, étage par étage. " * 8,
}
TITLES = {
    "doc-01": "Zorblax : essais",
    "doc-02": "Quimby : essais",
    "doc-03": "Comparatif",
    "doc-04": "Quimby en production",
    "doc-05": "Zorblax 2.1",
    "doc-06": "Menu de la cantine",
    "doc-07": "Café Zorblax",
    "doc-08": "Badges",
}
CATALOGUE = [entry(i, TITLES[i]) for i in BODIES]
OFF_TOPIC = {"doc-06", "doc-07", "doc-08"}


def _measure() -> TextRelevance:
    return measure("Zorblax ou Quimby ?", REQUEST, TERMS, CATALOGUE, BODIES)


def _answer(groups: list[list[str]], excluded: list[str]) -> dict[str, object]:
    return {
        "sub_tasks": [
            {"id": f"st-{n}", "question": f"Question {n} sur Zorblax et Quimby ?", "doc_ids": ids}
            for n, ids in enumerate(groups, 1)
        ],
        "excluded": excluded,
    }


def _read(plan: Plan) -> set[str]:
    return {i for st in plan.sub_tasks for i in st.doc_ids}


def _reasons(plan: Plan) -> dict[str, str]:
    return {e.id: e.reason for e in plan.exclusions}


def test_the_measure_separates_the_field_from_menus_homonyms_and_notices() -> None:
    text = _measure()
    assert {i for i in BODIES if text.off_topic(i)} == OFF_TOPIC
    assert {i for i in BODIES if text.relevant(i)} >= {"doc-01", "doc-02", "doc-03", "doc-04"}
    assert not text.off_topic("doc-05")  # a short fix note uses few of the field's words: kept


def test_a_one_line_note_without_the_field_words_is_never_called_off_topic() -> None:
    bodies = {**BODIES, "doc-09": "Zorblax 3.0 est sortie."}
    catalogue = [*CATALOGUE, entry("doc-09", "Zorblax 3.0")]
    text = measure("Zorblax ou Quimby ?", REQUEST, TERMS, catalogue, bodies)
    assert text.shares["doc-09"] < text.off_topic_share_with_term  # no word of the field...
    assert not text.off_topic("doc-09")  # ...but no room for one: left to the planner


def test_no_measure_when_most_term_naming_documents_use_none_of_the_words() -> None:
    # One-line notes naming the products in other words: a reference taken from the one that
    # scores would call the others off topic; nothing is measured instead.
    notes = [
        "Zorblax, réunion de lundi.",
        "Zorblax chez Alpha.",
        "Zorblax : appel reporté.",
        "Bilan Zorblax.",
    ]
    bodies = {f"doc-0{n}": note for n, note in enumerate(notes, 2)}
    bodies["doc-01"] = "Zorblax : le débit mesuré au banc et la latence sous charge. " * 10
    catalogue = [entry(i, i) for i in bodies]
    assert measure("Zorblax ou Quimby ?", REQUEST, TERMS, catalogue, bodies).shares == {}


def test_the_measure_is_relative_to_the_corpus_not_to_its_order_or_its_size() -> None:
    text = _measure()
    reordered = measure("Zorblax ou Quimby ?", REQUEST, TERMS, CATALOGUE[::-1], BODIES)
    assert reordered.shares == text.shares
    # Every body twice as long (the same words): the shares barely move, the decisions not at all.
    doubled = measure(
        "Zorblax ou Quimby ?", REQUEST, TERMS, CATALOGUE, {i: f"{b} {b}" for i, b in BODIES.items()}
    )
    assert {i for i in BODIES if doubled.off_topic(i)} == OFF_TOPIC
    assert {i for i in BODIES if doubled.relevant(i)} == {i for i in BODIES if text.relevant(i)}


def test_a_request_of_names_only_is_measured_on_the_field_its_comparisons_share() -> None:
    # No topic word in the request: the words the documents comparing the terms share (feedback)
    # still define the field, so the menu and the café stay off topic.
    names_only = measure("Zorblax", "Zorblax Quimby", TERMS, CATALOGUE, BODIES)
    assert {i for i in BODIES if names_only.off_topic(i)} == OFF_TOPIC


def test_nothing_is_measured_without_any_shared_word_or_score() -> None:
    assert measure("Xylophone", "Xylophone marimba", [], CATALOGUE, BODIES).shares == {}
    assert measure("Zorblax ou Quimby ?", REQUEST, TERMS, [], BODIES).shares == {}
    silent = {i: "" for i in BODIES}
    bare = [entry(i, "x") for i in BODIES]
    assert measure("Zorblax ou Quimby ?", REQUEST, TERMS, bare, silent).shares == {}


def test_a_canteen_menu_and_a_homonym_the_planner_placed_are_not_read_with_one_alert() -> None:
    answer = _answer([["doc-01", "doc-02", "doc-06"], ["doc-03", "doc-04", "doc-05", "doc-07", "doc-08"]], [])
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE), text=_measure())
    assert _read(outcome.plan) == set(BODIES) - OFF_TOPIC
    assert {i: r for i, r in _reasons(outcome.plan).items()} == dict.fromkeys(OFF_TOPIC, "off_topic")
    [alert] = [a for a in outcome.alerts if a.code == "plan.off_topic_removed"]
    assert set(alert.subjects) == OFF_TOPIC and "du score typique du corpus" in alert.message
    assert outcome.coverage.off_topic_removed == sorted(OFF_TOPIC)


def test_without_the_measure_the_planner_choice_stands() -> None:
    answer = _answer([["doc-01", "doc-02", "doc-06"], ["doc-03", "doc-04", "doc-05", "doc-07", "doc-08"]], [])
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE))
    assert _read(outcome.plan) == set(BODIES)


def test_a_cap_does_not_put_back_an_off_topic_document() -> None:
    # The planner wants everything; the caps cut doc-06 (menu) among others: code puts back only
    # what concerns the request.
    answer = _answer([list(BODIES)], [])
    outcome = make_plan(
        PlannerScript(answer), planner_input(CATALOGUE, max_docs=3, max_subtasks=6), text=_measure()
    )
    assert not _read(outcome.plan) & OFF_TOPIC
    assert _read(outcome.plan) == set(BODIES) - OFF_TOPIC


def test_a_plan_excluding_most_term_naming_documents_is_overruled_by_their_text() -> None:
    answer = _answer([["doc-05"]], ["doc-01", "doc-02", "doc-03", "doc-04", "doc-06", "doc-07", "doc-08"])
    client = PlannerScript(answer)  # the re-ask gets the same answer: code places them
    outcome = make_plan(client, planner_input(CATALOGUE), text=_measure())
    assert _read(outcome.plan) >= {"doc-01", "doc-02", "doc-03", "doc-04"}
    assert not _read(outcome.plan) & OFF_TOPIC
    assert set(outcome.coverage.placed_by_code) | set(outcome.coverage.placed_by_planner) >= {
        "doc-01",
        "doc-02",
        "doc-03",
        "doc-04",
    }
    assert any(a.code == "plan.placed_by_code" for a in outcome.alerts)


def test_a_lone_exclusion_of_a_relevant_text_stands_when_the_plan_covers_the_terms() -> None:
    # Homonyms are written with the request's words: one exclusion is the planner's judgment.
    answer = _answer([["doc-01", "doc-02"], ["doc-03", "doc-05"]], ["doc-04", "doc-06", "doc-07", "doc-08"])
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE), text=_measure())
    assert "doc-04" not in _read(outcome.plan)
    assert _reasons(outcome.plan)["doc-04"] == "planner_excluded"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(["read", "exclude", "silent"]), min_size=len(BODIES), max_size=len(BODIES)),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=2, max_value=8),
)
def test_for_any_planner_answer_no_off_topic_text_is_read_and_a_broken_plan_reads_the_field(
    choices: list[str], groups: int, max_docs: int
) -> None:
    ids = list(BODIES)
    placed = [i for i, c in zip(ids, choices, strict=True) if c == "read"]
    excluded = [i for i, c in zip(ids, choices, strict=True) if c == "exclude"]
    answer = _answer(
        [placed[n::groups] for n in range(groups) if placed[n::groups]] or [["doc-05"]], excluded
    )
    text = _measure()
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE, max_docs=max_docs), text=text)
    read, reasons = _read(outcome.plan), _reasons(outcome.plan)
    assert not read & OFF_TOPIC
    assert set(reasons) | read == set(ids) and not set(reasons) & read
    naming = text.naming()
    answer_read = {i for group in answer["sub_tasks"] for i in group["doc_ids"]}  # type: ignore[index]
    if sum(1 for i in naming if i in answer_read) < 0.5 * len(naming):
        # A broken plan: every relevant text is read, or out for want of room.
        assert all(i in read or reasons[i] == "cap" for i in ids if text.relevant(i))


def test_a_cap_puts_back_what_names_a_term_not_a_menu_sharing_a_few_words() -> None:
    # The restaurant's note shares « coûtent » and « maintenance » with the request: not off topic
    # (0.05–0.5 of the typical score), but names no compared product and is not relevant: a planner
    # placing everything wanted it, the cap cut it, code does not put it back (reason ``cap``).
    bodies = {
        **BODIES,
        "doc-09": "Restaurant d'entreprise : les nouvelles formules coûtent 9 euros ; la maintenance "
        "des fours a lieu en mai. " * 3,
    }
    catalogue = [*CATALOGUE, entry("doc-09", "Restaurant : formules")]
    text = measure("Zorblax ou Quimby ?", REQUEST, TERMS, catalogue, bodies)
    assert not text.off_topic("doc-09") and not text.relevant("doc-09")
    everything = ["doc-01", "doc-02", "doc-03", "doc-04", "doc-05", "doc-09"]  # the cap cuts the tail
    outcome = make_plan(
        PlannerScript(_answer([everything], [])),
        planner_input(catalogue, max_docs=2, max_subtasks=6),
        text=text,
    )
    assert _read(outcome.plan) >= {"doc-01", "doc-02", "doc-03", "doc-04", "doc-05"}
    assert "doc-09" not in _read(outcome.plan)
    # Without the measure the planner's wish alone puts it back (the caps have room: 6 × 2).
    blind = make_plan(
        PlannerScript(_answer([everything], [])), planner_input(catalogue, max_docs=2, max_subtasks=6)
    )
    assert "doc-09" in _read(blind.plan)


def test_a_homonym_code_removed_does_not_count_as_coverage_lost() -> None:
    # The café names Zorblax; code removes it as off topic: the plan still reads every document
    # naming a term that concerns the request, so no « couverture insuffisante » error.
    answer = _answer([["doc-01", "doc-02"], ["doc-03", "doc-04", "doc-05", "doc-07"]], ["doc-06", "doc-08"])
    outcome = make_plan(PlannerScript(answer), planner_input(CATALOGUE), text=_measure())
    assert "doc-07" in outcome.coverage.off_topic_removed
    assert outcome.coverage.term_naming == outcome.coverage.term_naming_kept
    assert not any(a.code == "plan.low_coverage" for a in outcome.alerts)
