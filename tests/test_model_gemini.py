"""The Gemini backend through the real google-genai SDK, against the fake server on loopback."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from testkit.fake_gemini import FakeGemini, Reply, closed_port_url
from veille.backends import build_client
from veille.journal import read_journal
from veille.models.attempts import BlockedPromptError
from veille.models.base import ModelError, SchemaValidationError, TransientModelError
from veille.models.caller import ModelClient
from veille.models.outcap import THINKING_TOKENS, schema_tokens
from veille.models.pricing import ModelPrice, PriceTable
from veille.roles.critic import evaluation_schema
from veille.settings import RoleModel, Settings

CANARY = "CANARY-4f1c9e2b-never-print-me"

Evaluation = evaluation_schema({"clarte": "Phrases courtes et claires", "precision": "Chiffres sourcés"})
VALID = {"clarte": 4, "precision": 5, "remarks": ["Raccourcir la phrase 3."]}


class Summary(BaseModel):
    title: str
    score: int = Field(ge=1, le=5)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _canary_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)


def make_settings(server_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "backend": "gemini",
        "gemini_base_url": server_url,
        "gemini_api_version": "v1beta",
        "warehouse_dir": tmp_path / "warehouse",
        "http_attempts": 3,
        "http_retry_initial_delay_s": 0.01,
        "http_retry_max_delay_s": 2.0,
        "request_timeout_ms": 3000,
        "use_cache": False,
        # Pinned here, not taken from the defaults: these tests check the gemini-2.5 wire format
        # (thinking budget) and the paths/journal rows that carry the model id.
        "roles": {
            **Settings().roles,
            "critic": RoleModel(model="gemini-2.5-flash", thinking="low", temperature=0.0),
        },
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture()
def client_factory(server: FakeGemini, tmp_path: Path) -> Iterator[Any]:
    clients: list[ModelClient] = []

    def make(**overrides: Any) -> ModelClient:
        url = overrides.pop("base_url", server.base_url)
        prices = overrides.pop("prices", None)
        settings = make_settings(url, tmp_path, **overrides)
        client = build_client(settings, run_id="run-test", journal_path=tmp_path / "calls.jsonl")
        if prices is not None:
            client.prices = prices
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def camel(value: Any) -> Any:
    """Keys in camelCase: the SDK sends some nested fields in snake_case, which the API also accepts."""
    if isinstance(value, dict):
        return {
            (k.split("_")[0] + "".join(w.title() for w in k.split("_")[1:])): camel(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def critic_call(client: ModelClient, prompt: str = "Évalue ce brouillon.") -> Any:
    return client.call("critic", "Tu es un critique exigeant.", prompt, Evaluation, subtask_id="st-1")


# --- structured output and the request body -----------------------------------------------------


def test_structured_output_is_parsed_and_request_carries_schema_system_and_thinking(
    server: FakeGemini, client_factory: Any
) -> None:
    server.script(Reply.json(VALID))
    client = client_factory()

    result = critic_call(client)

    assert result.output.clarte == 4 and result.output.precision == 5
    assert result.output.remarks == ["Raccourcir la phrase 3."]
    assert result.attempts == 1 and not result.cache_hit
    [request] = server.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == CANARY  # the SDK authenticated with our key
    body = request.body
    assert body["systemInstruction"]["parts"][0]["text"] == "Tu es un critique exigeant."
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Évalue ce brouillon."}]}]
    config = camel(body["generationConfig"])
    assert config["responseMimeType"] == "application/json"
    schema = config["responseJsonSchema"]
    assert set(schema["properties"]) == {"clarte", "precision", "remarks"}
    assert schema["properties"]["clarte"]["minimum"] == 1 and schema["properties"]["clarte"]["maximum"] == 5
    assert config["temperature"] == 0.0  # the critic's temperature in the default settings
    assert config["thinkingConfig"] == {"thinkingBudget": 1024}  # gemini-2.5 + "low"
    # The output cap (issue 38): the longest valid answer and "low"'s thinking, within the bound.
    assert config["maxOutputTokens"] == schema_tokens(Evaluation) + THINKING_TOKENS["low"]
    assert config["maxOutputTokens"] < Settings().max_output_tokens


def test_gemini_3_models_get_a_thinking_level(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.json(VALID))
    roles = dict(Settings().roles)
    roles["critic"] = RoleModel(model="gemini-3-flash-preview", thinking="high", temperature=0.3)
    client = client_factory(roles=roles)

    critic_call(client)

    config = camel(server.requests[0].body["generationConfig"])
    assert config["thinkingConfig"] == {"thinkingLevel": "HIGH"}
    assert config["temperature"] == 0.3
    assert server.requests[0].model == "gemini-3-flash-preview"


def test_vertex_ai_mode_uses_the_vertex_path(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.json(VALID))
    client = client_factory(vertexai=True, gemini_api_version=None)

    critic_call(client)

    [request] = server.requests
    assert request.vertex, request.path
    assert request.model == "gemini-2.5-flash"


# --- schema violations and re-asks -------------------------------------------------------------------


def test_schema_violation_is_re_asked_with_the_error_then_succeeds(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    invalid = json.dumps({"clarte": 7, "precision": 5, "remarks": []})
    server.script(Reply.text(invalid), Reply.json(VALID))
    client = client_factory()

    result = critic_call(client)

    assert result.output.clarte == 4
    assert result.attempts == 2
    assert len(server.requests) == 2
    contents = server.requests[1].body["contents"]
    # The errors are fed back after the prompt, the invalid answer is not (issue 38: an answer
    # echoed back is billed again as input).
    assert [turn["role"] for turn in contents] == ["user"]
    assert invalid not in json.dumps(server.requests[1].body)
    reask = contents[0]["parts"][-1]["text"]
    assert "clarte" in reask and "less than or equal to 5" in reask and "7" in reask
    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.status for r in records] == ["schema_error", "ok"]
    assert records[0].call_id == records[1].call_id
    assert [r.attempt for r in records] == [1, 2]
    # Both attempts were billed: the result's usage and cost cover the two.
    assert result.usage.input_tokens == 200
    assert result.cost_usd == pytest.approx(sum(r.cost_usd or 0 for r in records))


def test_three_violations_end_in_a_typed_error(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(
        Reply.text("{pas du json"),  # malformed JSON
        Reply.max_tokens('{"clarte": 4, "precis'),  # truncated by the token limit
        Reply.json({"clarte": 0, "precision": 5}),  # out of range
    )
    client = client_factory()

    with pytest.raises(SchemaValidationError) as caught:
        critic_call(client)

    assert caught.value.attempts == 3 and caught.value.role == "critic"
    assert "clarte" in caught.value.last_error
    assert len(server.requests) == 3
    truncation_feedback = server.requests[2].body["contents"][-1]["parts"][-1]["text"]
    assert "MAX_TOKENS" in truncation_feedback
    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.status for r in records] == ["schema_error"] * 3
    assert [r.error_class for r in records] == ["ValidationError", "MaxTokens", "ValidationError"]


def test_blocked_prompt_is_a_typed_error_without_re_ask(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(Reply.blocked("SAFETY"))
    client = client_factory()

    with pytest.raises(BlockedPromptError) as caught:
        critic_call(client)

    assert caught.value.reason == "SAFETY"
    assert len(server.requests) == 1
    [record] = read_journal(tmp_path / "calls.jsonl")
    assert record.status == "error" and record.error_class == "BlockedPromptError"


# --- HTTP retries, pacing, timeouts ----------------------------------------------------------------


def test_503_503_200_succeeds_after_two_resends_each_journaled(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(Reply.error(503), Reply.error(503), Reply.json(VALID))
    client = client_factory(http_attempts=3)

    result = critic_call(client)

    assert result.output.precision == 5
    assert [r.status for r in server.requests] == [503, 503, 200]
    assert result.attempts == 1  # HTTP resends are not schema attempts
    records = read_journal(tmp_path / "calls.jsonl")
    assert [(r.attempt, r.status, r.error_class) for r in records] == [
        (1, "transient_error", "HTTP503"),
        (2, "transient_error", "HTTP503"),
        (3, "ok", None),
    ]
    assert [r.http_requests for r in records] == [1, 1, 1]
    assert [r.input_tokens for r in records] == [0, 0, 100]  # tokens where the server reported them


def test_5xx_beyond_the_attempt_budget_is_transient(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(Reply.error(503), Reply.error(500), Reply.error(503), Reply.json(VALID))
    client = client_factory(http_attempts=3)

    with pytest.raises(TransientModelError):
        critic_call(client)

    assert len(server.requests) == 3
    records = read_journal(tmp_path / "calls.jsonl")
    assert [(r.status, r.error_class) for r in records] == [
        ("transient_error", "HTTP503"),
        ("transient_error", "HTTP500"),
        ("transient_error", "HTTP503"),
    ]
    assert sum(r.http_requests or 0 for r in records) == len(server.requests)


def test_client_error_is_not_retried(server: FakeGemini, client_factory: Any, reliability: Any) -> None:
    server.script(Reply.error(400, "Invalid JSON payload"), Reply.json(VALID))
    client = client_factory()

    with pytest.raises(ModelError) as caught:
        critic_call(client)

    assert not caught.value.retryable
    assert len(server.requests) == 1
    reliability.record(
        "400 client error (model call)",
        "not sent again; non-retryable ModelError (tasks never retry a model error)",
        f"{len(server.requests)} request, {type(caught.value).__name__} retryable=False",
    )


def test_429_retry_delay_from_the_body_is_honoured(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.error(429, "quota", retry_delay="0.4s"), Reply.json(VALID))
    client = client_factory()  # backoff without RetryInfo would be ~0.01–0.02 s

    critic_call(client)

    first, second = server.settled()
    assert first.status == 429 and second.status == 200
    assert first.finished_at is not None
    assert second.received_at - first.finished_at >= 0.4


def test_429_retry_after_header_is_honoured(
    server: FakeGemini, client_factory: Any, reliability: Any
) -> None:
    server.script(Reply.error(429, "quota", retry_after="0.3"), Reply.json(VALID))
    client = client_factory()

    critic_call(client)

    first, second = server.requests
    assert first.finished_at is not None
    waited = second.received_at - first.finished_at
    assert waited >= 0.3
    reliability.record(
        "429 with a Retry-After header (no RetryInfo; model call)",
        "wait the header's delay, then retry",
        f"retry sent {waited:.2f} s after the 429 (asked 0.3 s), then 200",
    )


def test_429_without_retry_info_backs_off_and_succeeds(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.error(429), Reply.error(429), Reply.json(VALID))
    client = client_factory(http_attempts=3)

    critic_call(client)

    assert [r.status for r in server.requests] == [429, 429, 200]


def test_429_asking_longer_than_the_limit_fails_at_once(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.error(429, "daily quota", retry_delay="3600s"), Reply.json(VALID))
    client = client_factory(http_retry_max_delay_s=1.0)

    with pytest.raises(TransientModelError, match="3600"):
        critic_call(client)

    assert len(server.requests) == 1


def test_timeout_is_retried(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.slow(1.5), Reply.json(VALID))
    client = client_factory(request_timeout_ms=300)

    result = critic_call(client)

    assert result.output.clarte == 4
    assert len(server.requests) == 2


def test_timeouts_beyond_the_budget_are_transient(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(Reply.slow(1.0), Reply.slow(1.0))
    client = client_factory(request_timeout_ms=200, http_attempts=2)

    with pytest.raises(TransientModelError):
        critic_call(client)

    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.status for r in records] == ["transient_error"] * 2
    assert all("Timeout" in (r.error_class or "") for r in records)
    # Timed out on our side, yet sent (and maybe billed): each one is counted.
    assert [r.http_requests for r in records] == [1, 1] and len(server.settled()) == 2


def test_connection_refused_names_the_url_and_fails_fast(client_factory: Any, tmp_path: Path) -> None:
    import time

    from veille.models.gemini import GeminiConnectionError
    from veille.tasks.clients import is_retryable

    url = closed_port_url()
    client = client_factory(base_url=url, http_attempts=2)

    started = time.monotonic()
    with pytest.raises(GeminiConnectionError) as info:
        critic_call(client)
    assert time.monotonic() - started < 10
    assert isinstance(info.value, TransientModelError)  # what it is; tasks never retry a model error
    assert f"cannot connect to the Gemini API at {url}" in str(info.value)
    assert not is_retryable(info.value)  # a wrong base URL: task retries would only make it a minute

    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.error_class for r in records] == ["ConnectError"] * 2  # resent once, within http_attempts
    assert [r.http_requests for r in records] == [0, 0]  # nothing reached a server


def test_server_hang_up_is_retried(server: FakeGemini, client_factory: Any, reliability: Any) -> None:
    server.script(Reply.hangup(), Reply.json(VALID))
    client = client_factory()

    result = critic_call(client)

    assert result.output.clarte == 4
    assert len(server.requests) == 2
    reliability.record(
        "server closes the connection without answering (model call)",
        "sent again with backoff within http_attempts (the one retry layer)",
        f"{len(server.requests)} requests (hang-up, then 200); validated answer returned",
    )


def test_body_that_is_not_json_is_a_transient_error(
    server: FakeGemini, client_factory: Any, reliability: Any
) -> None:
    server.script(*[Reply.raw("<html>bad gateway</html>")] * 3)
    client = client_factory(http_attempts=3)

    with pytest.raises(TransientModelError) as caught:
        critic_call(client)
    assert "not JSON" in str(caught.value) and len(server.requests) == 3
    reliability.record(
        "HTTP 200 whose body is not JSON (proxy or gateway page; model call)",
        "transient error, sent again within http_attempts, not a schema re-ask",
        f"{type(caught.value).__name__} after {len(server.requests)} request(s)",
    )


# --- usage and cost --------------------------------------------------------------------------------


def test_usage_and_cost_are_computed_from_usage_metadata(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(
        Reply.json(VALID, prompt_tokens=1000, output_tokens=200, thoughts_tokens=300, cached_tokens=400)
    )
    prices = PriceTable(
        {
            "gemini-2.5-flash": ModelPrice(
                "gemini-2.5-flash", 1.0, 0.1, 10.0, source="test", as_of="2026-01-01"
            )
        }
    )
    client = client_factory(prices=prices)

    result = critic_call(client)

    assert (result.usage.input_tokens, result.usage.output_tokens) == (1000, 200)
    assert (result.usage.reasoning_tokens, result.usage.cache_read_tokens) == (300, 400)
    assert not result.usage.estimated
    # 600 fresh input × $1 + 400 cached × $0.1 + (200 + 300) output × $10, per million tokens
    assert result.cost_usd == pytest.approx(5640 / 1_000_000)
    [record] = read_journal(tmp_path / "calls.jsonl")
    assert (record.input_tokens, record.output_tokens, record.reasoning_tokens, record.cache_read_tokens) == (
        1000,
        200,
        300,
        400,
    )
    assert record.cost_usd == pytest.approx(5640 / 1_000_000)
    assert record.backend == "gemini" and record.model == "gemini-2.5-flash"
    assert record.role == "critic" and record.subtask_id == "st-1" and record.run_id == "run-test"


def test_missing_usage_fields_count_as_zero(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.json(VALID, prompt_tokens=None, output_tokens=None))
    client = client_factory()

    result = critic_call(client)

    assert result.usage.input_tokens == 0 and result.usage.output_tokens == 0
    assert result.cost_usd == 0.0


def test_unknown_model_has_no_cost_and_raises_an_alert(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(Reply.json(VALID))
    roles = dict(Settings().roles)
    roles["critic"] = RoleModel(model="gemini-9-imaginary", thinking="low")
    client = client_factory(roles=roles)

    result = critic_call(client)

    assert result.cost_usd is None
    assert client.unknown_models == ["gemini-9-imaginary"]
    [alert] = client.alerts()
    assert alert.code == "cost.unknown_model" and alert.subject == "gemini-9-imaginary"
    [record] = read_journal(tmp_path / "calls.jsonl")
    assert record.cost_usd is None and record.status == "ok"


# --- response cache --------------------------------------------------------------------------------


def test_cache_hit_makes_no_call_and_costs_nothing(
    server: FakeGemini, client_factory: Any, tmp_path: Path
) -> None:
    server.script(
        Reply.json({"clarte": 9}), Reply.json(VALID)
    )  # invalid then valid: only the valid is cached
    client = client_factory(use_cache=True)

    first = critic_call(client)
    second = critic_call(client)

    assert len(server.requests) == 2  # the re-ask, not the second call
    assert second.cache_hit and second.cost_usd == 0.0 and second.output == first.output
    records = read_journal(tmp_path / "calls.jsonl")
    assert [(r.status, r.cache_hit) for r in records] == [
        ("schema_error", False),
        ("ok", False),
        ("ok", True),
    ]
    assert records[-1].cost_usd == 0.0 and records[-1].input_tokens == 0

    # A rerun (new client, same warehouse) with the same inputs: 0 API calls.
    rerun = client_factory(use_cache=True)
    again = critic_call(rerun)
    assert again.cache_hit and again.output == first.output
    assert len(server.requests) == 2

    # Another prompt is another key.
    server.script(Reply.json(VALID))
    critic_call(rerun, prompt="Un autre brouillon.")
    assert len(server.requests) == 3


def test_no_cache_bypasses_the_cache(server: FakeGemini, client_factory: Any) -> None:
    server.script(Reply.json(VALID), Reply.json(VALID))
    cached = client_factory(use_cache=True)
    critic_call(cached)

    uncached = client_factory(use_cache=False)
    result = critic_call(uncached)

    assert not result.cache_hit
    assert len(server.requests) == 2


# --- concurrency --------------------------------------------------------------------------------------


def test_concurrency_cap_is_respected(server: FakeGemini, client_factory: Any) -> None:
    server.latency_s = 0.15
    server.responder = lambda body, model: Reply.json(VALID)
    client = client_factory(max_concurrent_calls=2)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            critic_call(client, prompt=f"Brouillon {index}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors
    assert len(server.requests) == 6
    assert server.max_in_flight == 2  # capped, and the cap was reached (the calls did overlap)


# --- the key never leaks ----------------------------------------------------------------------------


def test_canary_key_never_appears_in_logs_errors_or_journal(
    server: FakeGemini,
    client_factory: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    # A misbehaving proxy echoes the key in error bodies: retried 503s, then a 400.
    server.script(
        Reply.error(503, f"upstream rejected key={CANARY}"),
        Reply.error(503, f"upstream rejected {CANARY}"),
        Reply.error(400, f"API key {CANARY} not valid"),
    )
    client = client_factory(http_attempts=2)
    caught: list[BaseException] = []
    for _ in range(2):
        try:
            critic_call(client)
        except ModelError as exc:
            caught.append(exc)

    assert len(caught) == 2
    assert len(server.requests) == 3
    for exc in caught:
        assert CANARY not in str(exc) and CANARY not in repr(exc)
        assert CANARY not in "".join(traceback.format_exception(exc))
    assert CANARY not in caplog.text
    for record in caplog.records:
        assert CANARY not in record.getMessage()
    captured = capsys.readouterr()
    assert CANARY not in captured.out and CANARY not in captured.err
    assert CANARY not in (tmp_path / "calls.jsonl").read_text()
    assert CANARY not in repr(client.model) and CANARY not in repr(client.settings.model_dump())


# --- every role's output schema goes through the SDK -----------------------------------------------


def _role_schemas() -> list[type[BaseModel]]:
    from veille.dossier import dossier_schema
    from veille.roles.analyst import Findings
    from veille.roles.judge import JudgeVerdict, verdict_schema
    from veille.roles.planner import Plan

    return [
        Plan,
        Findings,
        dossier_schema([1, 2, 3], ["st-1", "st-2"]),
        Evaluation,
        JudgeVerdict,
        verdict_schema(3),
    ]


@pytest.mark.parametrize("schema", _role_schemas(), ids=lambda s: s.__name__)
def test_every_role_schema_is_sent_as_response_json_schema(
    server: FakeGemini, tmp_path: Path, schema: type[BaseModel]
) -> None:
    from veille.models.base import ModelRequest
    from veille.models.gemini import GeminiModel
    from veille.secrets import SecretValue

    server.script(Reply.text("{}"))
    backend = GeminiModel(make_settings(server.base_url, tmp_path), api_key=SecretValue(CANARY))
    request = ModelRequest(
        role="analyst", model="gemini-2.5-flash", system="S", prompt="P", output_schema=schema
    )

    async def once() -> Any:
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()

    raw = asyncio.run(once())

    assert raw.text == "{}" and raw.finish_reason == "STOP"
    sent = server.requests[0].body["generationConfig"]["responseJsonSchema"]
    # Fields code owns (SkipJsonSchema, e.g. the plan's exclusions) are not the model's to fill.
    assert set(sent["properties"]) == set(schema.model_json_schema()["properties"])
