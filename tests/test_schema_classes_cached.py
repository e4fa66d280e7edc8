"""The planner's and the critic's per-input schema classes are built once per distinct schema
(issue 40 item 5: each call built a new pydantic class, the costliest part of a call that a model
does not answer) and a kept class is the one the input asks for.

For any two inputs: they share a class exactly when the schema the model would see is the same,
and the class's JSON schema is the one a fresh build gives (``plan_json_schema`` for the planner;
one bounded integer per criterion, in the grid's order, for the critic).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plankit import entry, planner_input
from veille.roles.critic import _evaluation_schema, evaluation_schema
from veille.roles.planner import PlannerInput, plan_json_schema, plan_schema, proposal_schema

# Few ids, titles and caps: two drawn inputs often give the same schema, and often nearly the same.
_IDS = st.lists(st.sampled_from([f"doc-{i}" for i in range(1, 6)]), max_size=5)


@st.composite
def planner_inputs(draw: st.DrawFn) -> PlannerInput:
    ids = draw(_IDS)
    return planner_input(
        [entry(i, draw(st.sampled_from(["Zorblax", "Quimby : latence", "cantine"]))) for i in ids],
        max_subtasks=draw(st.integers(min_value=0, max_value=3)),
        max_docs=draw(st.integers(min_value=0, max_value=3)),
    )


def _fresh_planner_schema(data: PlannerInput) -> dict[str, object]:
    return proposal_schema.__wrapped__(json.dumps(plan_json_schema(data))).model_json_schema()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=planner_inputs(), second=planner_inputs())
def test_a_kept_planner_class_is_the_one_its_input_asks_for(
    first: PlannerInput, second: PlannerInput
) -> None:
    same = plan_json_schema(first) == plan_json_schema(second)
    assert (plan_schema(first) is plan_schema(second)) == same
    for data in (first, second):
        kept = plan_schema(data)
        assert kept is plan_schema(data)
        assert kept.model_json_schema() == _fresh_planner_schema(data)
        properties = kept.model_json_schema()["properties"]
        for name, field in plan_json_schema(data).items():
            assert {k: v for k, v in properties[name].items() if k not in ("title", "default")} == field, name


_CRITERIA = st.dictionaries(
    st.sampled_from(["clarte", "precision", "citations", "structure"]),
    st.sampled_from(["Phrases courtes.", "Chiffres sourcés.", "Des sources."]),
    min_size=1,
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(first=_CRITERIA, second=_CRITERIA)
def test_a_kept_critic_class_is_the_one_its_grid_asks_for(
    first: dict[str, str], second: dict[str, str]
) -> None:
    same = list(first.items()) == list(second.items())
    assert (evaluation_schema(first) is evaluation_schema(second)) == same
    for criteria in (first, second):
        schema = evaluation_schema(criteria).model_json_schema()
        assert schema == _evaluation_schema.__wrapped__(tuple(criteria.items())).model_json_schema()
        assert list(schema["properties"]) == [*criteria, "remarks"]
        for name, definition in criteria.items():
            field = schema["properties"][name]
            assert (field["type"], field["minimum"], field["maximum"]) == ("integer", 1, 5)
            assert field["description"] == definition
