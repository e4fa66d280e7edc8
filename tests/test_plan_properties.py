"""Property test of plan validation + coverage (issue 11, item 7).

For arbitrary catalogues (documents naming request terms, on topic, homonyms, off topic, flagged)
and arbitrary planner answers drawn from the per-input wire schema the planner is sent
(tests/schema_strategy.py, each answer also checked with jsonschema: any
sub-task count within the caps, any subsets and duplicates of the catalogue ids, any excluded
list), the validated plan accounts for every catalogue id exactly once, numbers its sub-tasks
st-1..st-n, holds the caps, and loses no document naming a request term without an alert.
No Prefect, no model layer: a scripted client answers.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plankit import PlannerScript, entry, planner_input
from tests.schema_strategy import from_wire_schema
from veille.roles.planner import EXCLUSION_REASONS, PLANNER, CatalogueEntry, PlannerInput
from veille.steps.coverage import Vocabulary
from veille.steps.plan import PlanUnusableError, make_plan
from veille.steps.screen import FLAG_LABEL

# Title fragments by kind (invented words, see tests/plankit.py): the request's terms and axis words,
# and words no request uses.
TERM_WORDS = ["Zorblax", "Quimby"]
TOPIC_WORDS = [
    "débit mesuré",
    "latence",
    "coût des licences",
    "sécurité",
    "correctifs",
    "maintenance",
    "exploitation",
]
OTHER_WORDS = ["cantine", "parking", "badges", "vélos", "fauteuils", "séminaire", "inventaire"]


# Titles mixing term words, topic words and other words, precomputed: one draw per document
# (composing fresh strategies per document is what makes generation slow).
_TITLES = sorted(
    {
        " ".join(parts) or "Note"
        for t in ([], TERM_WORDS[:1], TERM_WORDS)
        for k in range(4)
        for o in ([], OTHER_WORDS[:1], OTHER_WORDS[2:4])
        for parts in ([*t, *TOPIC_WORDS[k : k + k], *o], [*o, *t, *TOPIC_WORDS[k : k + 1]])
    }
)
_TITLE = st.sampled_from(_TITLES)


@st.composite
def catalogues(draw: st.DrawFn) -> tuple[list[CatalogueEntry], dict[str, str]]:
    titles = draw(st.lists(_TITLE, min_size=1, max_size=30))
    entries = [entry(f"doc-{i:02d}", title) for i, title in enumerate(titles, 1)]
    flagged = draw(st.sets(st.integers(min_value=1, max_value=len(entries)), max_size=3))
    return entries, {f"doc-{i:02d}": FLAG_LABEL for i in sorted(flagged)}


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[PlannerInput, dict[str, str], list[dict[str, Any]], bool]:
    catalogue, flagged = draw(catalogues())
    data = planner_input(
        catalogue,
        max_subtasks=draw(st.integers(min_value=1, max_value=6)),
        max_docs=draw(st.integers(min_value=1, max_value=8)),
    )
    schema = PLANNER.schema_for(data).model_json_schema()
    answers = [draw(from_wire_schema(schema)) for _ in range(2)]  # the first answer and the re-ask's
    validator = jsonschema.Draft202012Validator(schema)  # no meta-schema check per example: slow
    for answer in answers:
        validator.validate(answer)  # the strategy draws schema-valid answers only
    return data, flagged, answers, draw(st.booleans())


@pytest.mark.timeout(1800)  # 500 examples; minutes on a loaded machine (the suite's default is 300 s)
@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(scenarios())
def test_every_document_is_accounted_for_and_none_naming_a_term_is_lost_silently(
    scenario: tuple[PlannerInput, dict[str, str], list[dict[str, Any]], bool],
) -> None:
    data, flagged, answers, reask = scenario
    client = PlannerScript(*answers)
    vocabulary = Vocabulary.of(data.request_title, data.request, data.terms)
    relevance = {e.id: vocabulary.relevance(e) for e in data.catalogue}
    try:
        outcome = make_plan(client, data, flagged=flagged, reask=reask)
    except PlanUnusableError:
        # Only when the corpus gives code nothing to plan either: an unusable answer is re-asked,
        # then replaced by code's plan, which reads every document sharing the request's vocabulary.
        assert not any(r.shares_vocabulary for r in relevance.values())
        return
    plan = outcome.plan
    ids = [e.id for e in data.catalogue]
    used = {i for s in plan.sub_tasks for i in s.doc_ids}

    # Every id exactly once: in a sub-task or excluded (with a reason), never both, never missing.
    assert used | set(plan.excluded) == set(ids) and not used & set(plan.excluded)
    assert len(plan.excluded) == len(set(plan.excluded))
    assert [e.id for e in plan.exclusions] == plan.excluded
    assert all(e.reason in EXCLUSION_REASONS for e in plan.exclusions)
    # Sub-task ids by code, caps held, no duplicate inside a sub-task, no empty one.
    assert [s.id for s in plan.sub_tasks] == [f"st-{i}" for i in range(1, len(plan.sub_tasks) + 1)]
    assert 1 <= len(plan.sub_tasks) <= data.max_subtasks
    assert all(
        1 <= len(s.doc_ids) <= data.max_docs and len(set(s.doc_ids)) == len(s.doc_ids) for s in plan.sub_tasks
    )
    # At most one re-ask.
    assert len(client.inputs) <= (2 if reask else 1)

    reasons = {e.id: e.reason for e in plan.exclusions}
    alerted = {i for a in outcome.alerts for i in a.subjects}
    for doc_id in plan.excluded:
        rel = relevance[doc_id]
        if rel.names_term:  # no term-naming document lost without an alert
            assert doc_id in alerted, (doc_id, reasons[doc_id])
        # Code overrules the planner's silence on any document concerning the request, and its
        # explicit exclusion on a strong link (a term and the vocabulary): only the caps keep those out.
        if reasons[doc_id] == "unassigned":
            assert not (rel.names_term or rel.on_topic), doc_id
        if reasons[doc_id] == "planner_excluded":
            assert not rel.strong, doc_id
        if doc_id in flagged and not rel.shares_vocabulary:
            assert reasons[doc_id] == "injection"
    # The unassigned alert names exactly the documents the final plan leaves out for the planner's
    # silence alone, each once, by its subjects (not a Python list in its text).
    unassigned = [a for a in outcome.alerts if a.code == "plan.unassigned_documents"]
    assert len(unassigned) <= 1
    assert (unassigned[0].subjects if unassigned else []) == [
        i for i in plan.excluded if reasons[i] == "unassigned"
    ]
    assert not any("[" in a.message for a in unassigned)
    # Flagged documents that stay carry their flag to their sub-task; off-topic flagged ones never stay.
    for s in plan.sub_tasks:
        assert s.flags == {i: flagged[i] for i in s.doc_ids if i in flagged}
        assert not [i for i in s.doc_ids if i in flagged and not relevance[i].shares_vocabulary]
    # Each questioned document is named by exactly one outcome alert.
    outcome_codes = (
        "plan.reask_placed",
        "plan.placed_by_code",
        "plan.suspicious_exclusion",
        "plan.injection_excluded",
    )
    for doc_id in outcome.coverage.questioned:
        naming = [a.code for a in outcome.alerts if a.code in outcome_codes and doc_id in a.subjects]
        assert len(naming) == 1, (doc_id, naming)
    # The coverage alert fires exactly when less than half the term-naming documents are kept.
    naming_ids = [i for i in ids if relevance[i].names_term]
    kept = sum(1 for i in naming_ids if i in used)
    low = any(a.code == "plan.low_coverage" and a.severity == "error" for a in outcome.alerts)
    assert low == bool(naming_ids and kept / len(naming_ids) < 0.5)
