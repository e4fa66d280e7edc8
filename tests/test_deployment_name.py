"""A night's run.json names its deployment without asking the API about a flow run of none
(veille.run.info.deployment_name): a run of no deployment reads that from its own run context."""

from __future__ import annotations

from typing import Any

import prefect.runtime.deployment
import pytest
from prefect import flow

from veille.run.info import deployment_name

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_a_flow_run_of_no_deployment_has_none_without_reading_its_flow_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[Any] = []

    async def read_flow_run(flow_run_id: str) -> Any:  # Prefect's own look-up, through the API
        asked.append(flow_run_id)
        raise AssertionError("the flow run was read from the API")

    monkeypatch.setattr(prefect.runtime.deployment, "_get_flow_run", read_flow_run)

    @flow
    def night() -> str | None:
        return deployment_name()

    assert night() is None
    assert asked == []


def test_outside_a_flow_run_there_is_no_deployment() -> None:
    assert deployment_name() is None
