"""The model layer takes one slot of the Prefect global limit around each Gemini request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

import veille.ops.limits
from testkit.fake_gemini import FakeGemini, Reply
from veille.backends import build_client
from veille.roles.critic import evaluation_schema
from veille.settings import Settings

Evaluation = evaluation_schema({"clarity": "Phrases courtes"})


class SlotSpy:
    def __init__(self) -> None:
        self.entered = 0
        self.held = 0
        self.max_held = 0

    @asynccontextmanager
    async def slot(self, settings: Settings, name: str = "veille-model-calls") -> AsyncIterator[None]:
        self.entered += 1
        self.held += 1
        self.max_held = max(self.max_held, self.held)
        try:
            yield
        finally:
            self.held -= 1


def test_each_gemini_attempt_holds_one_global_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = SlotSpy()
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    with FakeGemini() as server:
        server.script(Reply.json({"clarity": 9}), Reply.json({"clarity": 4, "remarks": []}))  # re-ask once
        settings = Settings(
            backend="gemini",
            gemini_base_url=server.base_url,
            gemini_api_version="v1beta",
            warehouse_dir=tmp_path,
            use_cache=False,
        )
        with build_client(settings, run_id="slot", call_slot=spy.slot) as client:
            result = client.call("critic", "S", "P", Evaluation)
    assert result.attempts == 2
    assert spy.entered == 2 and spy.held == 0  # one slot per request, released after each


def test_offline_backend_takes_no_global_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = SlotSpy()
    from veille.roles.judge import JudgeInput, JudgeVerdict

    settings = Settings(backend="offline", warehouse_dir=tmp_path)
    payload = JudgeInput(prompt="Q", reference="Réponse 12 %", responses=["Réponse 12 %"])
    with build_client(settings, run_id="slot", call_slot=spy.slot) as client:
        client.call("judge", "S", "P", JudgeVerdict, input=payload)
    assert spy.entered == 0


def test_the_flow_hands_prefects_global_slot_to_the_model_layer(tmp_path: Path) -> None:
    # The model seam does not import Prefect operations: the run's client gets the slot from the flow.
    from veille.tasks.clients import open_client

    settings = Settings(backend="offline", warehouse_dir=tmp_path)
    with open_client(settings, "slot", tmp_path / "calls.jsonl") as client:
        assert client.client()._call_slot is veille.ops.limits.amodel_call_slot
