"""What the Prefect UI shows of veille: the parameter form, run names and tags, the deployment's
link to last night's dossier (test Prefect API)."""

from __future__ import annotations

from uuid import uuid4

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veille.flows.veille import veille_flow
from veille.ops.latest import LATEST_MARK, latest_description, point_deployment_at
from veille.ops.naming import RUN_TAG_PREFIX, name_flow_run, run_name
from veille.providers import backend_choices

RUN_A, RUN_B = "20261203T010000Z-aaaaaa", "20261204T010000Z-bbbbbb"


def test_the_parameter_form_has_descriptions_choices_and_no_settings_object() -> None:
    schema = veille_flow.parameters.model_dump()
    properties = schema["properties"]
    assert "settings" not in properties
    assert all(p.get("description") for p in properties.values()), properties
    (choices,) = [a for a in properties["backend"]["anyOf"] if "enum" in a]
    assert choices["enum"] == list(backend_choices())  # "auto" and every registered provider
    assert {"auto", "gemini", "openai", "offline"} <= set(choices["enum"])


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (None, RUN_B),
        ("brave-otter", RUN_B),
        (RUN_A, RUN_B),
        ("Essai après correctif", "Essai après correctif"),
    ],
)
def test_a_given_run_name_is_kept_a_generated_one_replaced(current: str | None, expected: str) -> None:
    assert run_name(current, RUN_B) == expected


@given(st.text(max_size=200), st.booleans())
def test_the_description_keeps_one_link_to_the_latest_dossier(base: str, complete: bool) -> None:
    once = latest_description(base, RUN_A, not complete, "http://ui/artifacts/artifact/1")
    twice = latest_description(once, RUN_B, complete, "http://ui/artifacts/artifact/2")
    links = [line for line in twice.splitlines() if line.startswith(LATEST_MARK)]
    assert links == [
        f"{LATEST_MARK}[{RUN_B} ({'complet' if complete else 'partiel'})](http://ui/artifacts/artifact/2)"
    ]
    kept = [line for line in base.splitlines() if not line.startswith(LATEST_MARK)]
    assert twice.startswith("\n".join(kept).rstrip())


@pytest.mark.usefixtures("prefect_harness")
def test_names_tags_and_the_deployment_link_through_the_api() -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name(f"veille-ui-{uuid4().hex[:6]}")
        deployment_id = client.create_deployment(
            flow_id=flow_id, name="veille-infra", description="Veille de l'équipe infra."
        )
        run = client.create_flow_run_from_deployment(deployment_id, name="Essai après correctif")

    assert name_flow_run(run.id, RUN_A) and name_flow_run(run.id, RUN_B)  # a Retry: second attempt
    assert point_deployment_at(deployment_id, uuid4(), RUN_A, False)
    assert point_deployment_at(deployment_id, "0" * 8 + "-0000-0000-0000-" + "0" * 12, RUN_B, True)
    with get_client(sync_client=True) as client:
        seen = client.read_flow_run(run.id)
        description = client.read_deployment(deployment_id).description or ""
    assert seen.name == "Essai après correctif"
    assert {f"{RUN_TAG_PREFIX}{RUN_A}", f"{RUN_TAG_PREFIX}{RUN_B}"} <= set(seen.tags)
    assert description.startswith("Veille de l'équipe infra.")
    assert description.count(LATEST_MARK) == 1 and f"[{RUN_B} (complet)]" in description
