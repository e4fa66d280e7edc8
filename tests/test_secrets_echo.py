"""Issue 23 item 6 through the real google-genai SDK against the fake Gemini server: a server that
echoes the API key inside a 200 answer (an analyst's finding), a 400 body (the critic) and an answer
of the wrong type (the writer's first answer, a validation error) leaves the key nowhere: no file
of the warehouse (run folder, calls.jsonl, Parquet bytes, response cache) and no captured log."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

CANARY = "AIza-echo-canary-0123456789-never-stored"


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    others = gemini_responder()
    seen: dict[str, int] = {}

    def respond(body: dict[str, Any], model: str) -> Reply:
        role = role_of(body)
        seen[role] = seen.get(role, 0) + 1
        if role == "analyst":
            answer = others(body, model)
            return Reply.raw(answer.body.replace(b"Constat", f"Constat {CANARY}".encode()))
        if role == "writer" and seen[role] == 1:
            return Reply.json({"synthesis": CANARY, "sections": CANARY})
        if role == "critic":
            return Reply.error(400, f"API key not valid: {CANARY}")
        return others(body, model)

    with FakeGemini() as fake:
        fake.responder = respond
        yield fake


def test_an_echoed_key_is_found_nowhere(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    warehouse = tmp_path / "warehouse"
    use_fake_gemini(monkeypatch, server, warehouse, key=CANARY)
    caplog.set_level(logging.DEBUG)
    state = veille_flow(corpus=str(write_corpus(tmp_path / "corpus")), backend="gemini", return_state=True)
    run_dir = Path(state.result())

    roles = [role_of(r.body) for r in server.requests]
    assert roles.count("writer") >= 2 and "critic" in roles  # the echoes were all served
    assert (run_dir / "report.md").exists()
    files = [p for p in warehouse.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    assert not [p for p in files if CANARY.encode() in p.read_bytes()]
    assert CANARY not in caplog.text
