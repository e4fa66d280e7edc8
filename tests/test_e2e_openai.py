"""End to end through the real ``openai`` SDK against the loopback fake OpenAI-compatible server
(what Ollama, vLLM and llama.cpp's server speak), alone and mixed with the fake Gemini per role."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from testkit.fake_gemini import FakeGemini
from testkit.fake_openai import FakeOpenAI, from_gemini
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

KEY = "sk-local-canary-0123456789-never-written"


@pytest.fixture()
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=("qwen-local:7b", "other")) as fake:
        fake.responder = from_gemini(gemini_responder())
        yield fake


def _llm_calls(warehouse: Path) -> list[dict[str, object]]:
    files = sorted((warehouse / "parquet").rglob("*.parquet"))
    rows: list[dict[str, object]] = []
    for path in files:
        if "llm_calls" in path.parts or path.stem.startswith("llm_calls"):
            rows += pq.read_table(path).to_pylist()
    return rows


def test_a_night_with_backend_openai_through_the_sdk_variables(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse"
    # The SDK's own variables, nothing of veille's but the warehouse: no model named anywhere.
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
    monkeypatch.setenv("VEILLE_HTTP_RETRY_INITIAL_DELAY_S", "0.01")
    corpus = write_corpus(tmp_path / "corpus")

    state = veille_flow(corpus=str(corpus), backend="openai", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    completions = server.completions()
    listings = [r for r in server.requests if r.method == "GET"]
    assert len(listings) == 1  # the model asked of GET /models once, then kept
    assert all(r.body["model"] == "qwen-local:7b" for r in completions)  # the first one listed
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    assert all(r.body["response_format"]["type"] == "json_schema" for r in completions)
    roles = [role_of({"systemInstruction": {"parts": [{"text": r.system}]}}) for r in completions]
    assert roles.count("planner") == 1 and roles.count("analyst") == 3 and roles.count("writer") == 1

    calls = read_journal(run_dir / "calls.jsonl")
    # Every HTTP request the server received is journaled, with its tokens, at $0 (a local server).
    assert sum(c.http_requests or 0 for c in calls) == len(server.requests)
    assert {c.backend for c in calls} == {"openai"} and {c.model for c in calls} == {"qwen-local:7b"}
    assert all(c.input_tokens > 0 and c.output_tokens > 0 and not c.estimated for c in calls)
    assert all(c.cost_usd == 0.0 for c in calls)
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["backend"] == "openai" and run["status"] == "completed"
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(split_sections(report).get(name) for name in (*MODEL_SECTIONS, "Sources"))
    for path in warehouse.rglob("*"):  # the key reaches the server and nothing else
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_a_mixed_night_is_recorded_per_role_provider_and_model(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse"
    with FakeGemini() as gemini:
        gemini.responder = gemini_responder()
        use_fake_gemini(monkeypatch, gemini, warehouse)
        # Analysts on the local server (a model named for them), everything else on Gemini.
        monkeypatch.setenv("VEILLE_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("VEILLE_ROLES__ANALYST__PROVIDER", "openai")
        monkeypatch.setenv("VEILLE_ROLES__ANALYST__MODEL", "other")
        corpus = write_corpus(tmp_path / "corpus")
        state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
        assert state.is_completed(), state.message
        run_dir = Path(state.result())
        gemini_roles = {role_of(r.body) for r in gemini.requests}

    completions = server.completions()
    assert len(completions) == 3 and all(r.body["model"] == "other" for r in completions)
    assert not [r for r in server.requests if r.method == "GET"]  # a model was named: no listing
    assert "analyst" not in gemini_roles and {"planner", "writer", "critic"} <= gemini_roles

    calls = read_journal(run_dir / "calls.jsonl")
    by_role = {(c.role, c.backend, c.model) for c in calls}
    assert {(r, b) for r, b, _ in by_role if r == "analyst"} == {("analyst", "openai")}
    assert ("analyst", "openai", "other") in by_role
    assert all(b == "gemini" for r, b, _ in by_role if r != "analyst")
    # The warehouse's llm_calls keep the provider (its backend column) and the model of each call.
    rows = _llm_calls(warehouse)
    assert rows, "no llm_calls rows recorded"
    recorded = {(row["role"], row["backend"], row["model"]) for row in rows}
    assert ("analyst", "openai", "other") in recorded
    assert {b for r, b, _ in recorded if r in ("planner", "writer", "critic")} == {"gemini"}
