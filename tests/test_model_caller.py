"""The model client above the backends: re-asks, journal, cache, threads, loops, pickling (scripted backend)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from veille.backends import build_client
from veille.journal import CallJournal, read_journal
from veille.models.base import (
    ModelRequest,
    RawResponse,
    SchemaValidationError,
    TransientModelError,
    Usage,
)
from veille.models.cache import ResponseCache, cache_key
from veille.models.caller import ModelClient
from veille.models.scripted import ScriptedModel, ScriptExhaustedError
from veille.settings import RoleModel, Settings
from veille.tokens import estimate_tokens

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class Answer(BaseModel):
    verdict: str
    score: int = Field(ge=1, le=5)


class Question(BaseModel):
    text: str
    doc_ids: list[str]


GOOD = Answer(verdict="ok", score=3)


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(warehouse_dir=tmp_path / "warehouse", backend="offline")


@pytest.fixture()
def make_client(settings: Settings, tmp_path: Path) -> Iterator[Any]:
    clients: list[ModelClient] = []

    def make(model: Any, *, journal: bool = True, **overrides: Any) -> ModelClient:
        these = settings.model_copy(update=overrides) if overrides else settings
        path = tmp_path / "calls.jsonl" if journal else None
        client = build_client(these, run_id="run-1", journal_path=path, model=model)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def ask(client: ModelClient, role: str = "analyst", prompt: str = "Question ?", **kwargs: Any) -> Any:
    return client.call(role, "Système.", prompt, Answer, **kwargs)


# --- the scripted backend --------------------------------------------------------------------------


def test_scripted_model_answers_per_role_then_shared_queue_then_function(make_client: Any) -> None:
    def fallback(request: ModelRequest) -> str:
        return json.dumps({"verdict": f"fn:{request.role}", "score": 5})

    model = ScriptedModel(
        {"planner": [Answer(verdict="plan", score=1)], "*": ['{"verdict": "shared", "score": 2}']},
        function=fallback,
    )
    client = make_client(model)

    assert ask(client, "planner").output.verdict == "plan"
    assert ask(client, "planner").output.verdict == "shared"
    assert ask(client, "planner").output.verdict == "fn:planner"
    assert [r.role for r in model.requests] == ["planner"] * 3
    assert model.requests[0].model == settings_model(client, "planner")


def settings_model(client: ModelClient, role: str) -> str:
    return client.settings.roles[role].model


def test_scripted_model_without_answers_fails_loudly(make_client: Any) -> None:
    client = make_client(ScriptedModel({"critic": [GOOD]}))

    with pytest.raises(ScriptExhaustedError, match="analyst"):
        ask(client, "analyst")


def test_scripted_usage_is_estimated_and_free(make_client: Any, tmp_path: Path) -> None:
    client = make_client(ScriptedModel({"writer": [GOOD]}))

    result = client.call("writer", "Système.", "Une invite de test.", Answer)

    assert result.usage.estimated
    assert result.usage.input_tokens == estimate_tokens("Système.") + estimate_tokens("Une invite de test.")
    assert result.usage.output_tokens == estimate_tokens(GOOD.model_dump_json())
    assert result.cost_usd == 0.0
    [record] = read_journal(tmp_path / "calls.jsonl")
    assert record.estimated and record.cost_usd == 0.0 and record.backend == "scripted"
    assert client.unknown_models == []


def test_request_carries_role_settings_input_and_subtask(make_client: Any, settings: Settings) -> None:
    roles = dict(settings.roles)
    roles["analyst"] = RoleModel(model="gemini-3-flash-preview", thinking="medium", temperature=0.7)
    model = ScriptedModel({"analyst": [GOOD]})
    client = make_client(model, roles=roles)

    ask(client, input=Question(text="Quoi ?", doc_ids=["d1"]), subtask_id="st-2")

    [request] = model.requests
    assert (request.model, request.thinking, request.temperature) == ("gemini-3-flash-preview", "medium", 0.7)
    assert request.input == Question(text="Quoi ?", doc_ids=["d1"])
    assert request.subtask_id == "st-2" and request.output_schema is Answer
    assert request.system == "Système." and request.prompt == "Question ?"


def test_unknown_role_is_a_clear_error(make_client: Any) -> None:
    client = make_client(ScriptedModel())

    with pytest.raises(ValueError, match=r"unknown role 'poet'.*planner"):
        ask(client, "poet")


# --- validation and re-asks -------------------------------------------------------------------------


def test_re_ask_feeds_back_every_error_never_the_answer(make_client: Any, tmp_path: Path) -> None:
    model = ScriptedModel({"critic": ['{"verdict": "x", "score": 9}', "pas du json", GOOD]})
    client = make_client(model)

    result = ask(client, "critic")

    assert result.output == GOOD and result.attempts == 3
    first, second, third = model.requests
    assert first.feedback == ()
    # The errors go back, the answers do not (issue 38: a runaway answer echoed is billed twice).
    assert len(second.feedback) == 1 and second.feedback[0][0] == ""
    assert "score" in second.feedback[0][1] and "less than or equal to 5" in second.feedback[0][1]
    assert [f[0] for f in third.feedback] == ["", ""]
    assert "Invalid JSON" in third.feedback[1][1]
    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.status for r in records] == ["schema_error", "schema_error", "ok"]
    assert len({r.call_id for r in records}) == 1


def test_re_asks_are_bounded_by_settings(make_client: Any) -> None:
    model = ScriptedModel({"critic": ['{"score": 1}', GOOD]})
    client = make_client(model, reask_attempts=0)

    with pytest.raises(SchemaValidationError) as caught:
        ask(client, "critic")

    assert caught.value.attempts == 1 and "verdict" in caught.value.last_error
    assert model.remaining("critic") == 1


def test_transient_error_is_journalled_then_sent_again_by_the_one_retry_layer(
    make_client: Any, tmp_path: Path
) -> None:
    model = ScriptedModel({"judge": [TransientModelError("503 upstream"), GOOD]})
    client = make_client(model, http_retry_initial_delay_s=0.001)

    result = ask(client, "judge")

    assert result.output == GOOD and result.attempts == 1  # one answer: the resend is no re-ask
    records = read_journal(tmp_path / "calls.jsonl")
    assert [(r.attempt, r.status, r.error_class) for r in records] == [
        (1, "transient_error", "TransientModelError"),
        (2, "ok", None),
    ]
    assert records[0].error_message == "503 upstream"
    assert [r.http_requests for r in records] == [0, 0]  # a local backend sends no HTTP
    assert model.remaining("judge") == 0


def test_transient_errors_past_the_budget_are_raised_not_re_asked(make_client: Any, tmp_path: Path) -> None:
    errors = [TransientModelError(f"503 #{i}") for i in range(3)]
    model = ScriptedModel({"judge": [*errors, GOOD]})
    client = make_client(model, http_attempts=3, http_retry_initial_delay_s=0.001)

    with pytest.raises(TransientModelError, match="503 #2"):
        ask(client, "judge")

    assert [r.status for r in read_journal(tmp_path / "calls.jsonl")] == ["transient_error"] * 3
    assert model.remaining("judge") == 1


def test_backend_bug_is_journalled_and_raised_unchanged(make_client: Any, tmp_path: Path) -> None:
    client = make_client(ScriptedModel({"judge": [KeyError("doc-7")]}))

    with pytest.raises(KeyError):
        ask(client, "judge")

    [record] = read_journal(tmp_path / "calls.jsonl")
    assert record.status == "error" and record.error_class == "KeyError"


def test_unpriced_model_of_a_paid_backend_is_flagged(make_client: Any, settings: Settings) -> None:
    class PaidScripted(ScriptedModel):
        name = "paid"
        free = False  # declared, not guessed from the name (veille.models.base.Model)

    roles = dict(settings.roles)
    roles["writer"] = RoleModel(model="mystery-model")
    model = PaidScripted(
        {
            "writer": [
                RawResponse(text=GOOD.model_dump_json(), usage=Usage(input_tokens=10), model="mystery-model")
            ]
        }
    )
    client = make_client(model, roles=roles)

    result = ask(client, "writer")

    assert result.cost_usd is None
    assert client.unknown_models == ["mystery-model"]
    assert [a.code for a in client.alerts()] == ["cost.unknown_model"]


# --- journal ---------------------------------------------------------------------------------------------


def test_journal_lines_are_written_as_calls_happen(make_client: Any, tmp_path: Path) -> None:
    client = make_client(ScriptedModel({"analyst": [GOOD, GOOD]}))
    path = tmp_path / "calls.jsonl"

    ask(client)
    assert len(path.read_text().splitlines()) == 1  # flushed before close: a crash keeps it
    ask(client)
    lines = path.read_text().splitlines()

    assert len(lines) == 2
    assert [json.loads(line)["status"] for line in lines] == ["ok", "ok"]
    assert read_journal(path) == client.journal.records()


def test_journal_is_thread_safe_under_concurrent_calls(make_client: Any, tmp_path: Path) -> None:
    model = ScriptedModel(function=lambda request: GOOD)
    client = make_client(model, max_concurrent_calls=3)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            for call in range(20):
                ask(client, prompt=f"{index}-{call}", subtask_id=f"st-{index}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors
    records = read_journal(tmp_path / "calls.jsonl")  # every line parses: no interleaving
    assert len(records) == 160 == len(client.journal)
    assert len({r.call_id for r in records}) == 160
    assert sorted({r.subtask_id for r in records}) == [f"st-{i}" for i in range(8)]


def test_read_journal_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    journal = CallJournal(path)
    client_record = _record()
    journal.append(client_record)
    journal.close()
    with path.open("a") as handle:
        handle.write("{not a record}\n")

    with pytest.raises(ValueError, match=r"calls\.jsonl:2"):
        read_journal(path)


def _record() -> Any:
    from veille.journal import CallRecord

    return CallRecord(
        run_id="r",
        call_id="c",
        attempt=1,
        role="analyst",
        backend="scripted",
        model="m",
        status="ok",
        started_at="2026-01-01T00:00:00+00:00",
    )


def test_prefect_flow_and_task_run_ids_are_recorded(
    prefect_harness: None, make_client: Any, tmp_path: Path
) -> None:
    from prefect import flow, task
    from prefect.runtime import flow_run, task_run

    client = make_client(ScriptedModel(function=lambda request: GOOD))

    @task
    def analyse(index: int) -> tuple[str, str]:
        ask(client, prompt=f"q{index}")
        return str(flow_run.id), str(task_run.id)

    @flow
    def pipeline() -> list[tuple[str, str]]:
        return [future.result() for future in analyse.map([1, 2])]

    ids = pipeline()

    records = read_journal(tmp_path / "calls.jsonl")
    assert sorted((r.flow_run_id, r.task_run_id) for r in records) == sorted(ids)
    assert len({task_id for _, task_id in ids}) == 2


# --- event loops ---------------------------------------------------------------------------------------


def test_acall_works_from_several_foreign_event_loops(make_client: Any) -> None:
    client = make_client(ScriptedModel(function=lambda request: GOOD))
    results: list[int] = []
    errors: list[BaseException] = []

    async def several() -> None:
        answers = await asyncio.gather(*(client.acall("analyst", "S", f"p{i}", Answer) for i in range(5)))
        results.extend(a.output.score for a in answers)

    def in_thread() -> None:
        try:
            asyncio.run(several())
        except BaseException as exc:
            errors.append(exc)

    asyncio.run(several())
    threads = [threading.Thread(target=in_thread) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors
    assert results == [3] * 20


def test_call_from_a_thread_with_a_running_loop(make_client: Any) -> None:
    client = make_client(ScriptedModel(function=lambda request: GOOD))

    async def blocking_inside_a_loop() -> int:
        return int(client.call("analyst", "S", "p", Answer).output.score)

    assert asyncio.run(blocking_inside_a_loop()) == 3


def test_closed_client_refuses_calls_and_close_is_idempotent(make_client: Any) -> None:
    client = make_client(ScriptedModel(function=lambda request: GOOD))
    ask(client)

    client.close()
    client.close()

    with pytest.raises(RuntimeError, match="closed"):
        ask(client)


# --- cache ----------------------------------------------------------------------------------------------


def test_cache_key_changes_with_each_input() -> None:
    base = ModelRequest(
        role="critic",
        model="m",
        system="s",
        prompt="p",
        output_schema=Answer,
        temperature=0.2,
        thinking="low",
    )
    variants = [
        ModelRequest(role="judge", model="m", system="s", prompt="p", output_schema=Answer),
        ModelRequest(role="critic", model="m2", system="s", prompt="p", output_schema=Answer),
        ModelRequest(role="critic", model="m", system="s2", prompt="p", output_schema=Answer),
        ModelRequest(role="critic", model="m", system="s", prompt="p2", output_schema=Answer),
        ModelRequest(role="critic", model="m", system="s", prompt="p", output_schema=Question),
        ModelRequest(role="critic", model="m", system="s", prompt="p", output_schema=Answer, temperature=0.3),
        ModelRequest(role="critic", model="m", system="s", prompt="p", output_schema=Answer, thinking="high"),
    ]
    keys = (
        {cache_key(base, "gemini")} | {cache_key(v, "gemini") for v in variants} | {cache_key(base, "other")}
    )
    assert len(keys) == len(variants) + 2
    same = ModelRequest(role="critic", model="m", system="s", prompt="p", output_schema=Answer, input=GOOD)
    assert cache_key(same, "gemini") == cache_key(base, "gemini")


def test_scripted_cache_hit_and_corrupt_entry(make_client: Any, settings: Settings) -> None:
    model = ScriptedModel({"analyst": [GOOD, Answer(verdict="second", score=2)]}, cacheable=True)
    client = make_client(model)

    first = ask(client)
    hit = ask(client)

    assert hit.cache_hit and hit.output == first.output and len(model.requests) == 1
    entries = list(settings.cache_dir.rglob("*.json"))
    assert len(entries) == 1 and not list(settings.cache_dir.rglob(".tmp-*"))

    entries[0].write_text("{truncated")  # a corrupt entry is a miss, then rewritten
    again = ask(client)
    assert not again.cache_hit and again.output.verdict == "second"
    assert json.loads(entries[0].read_text())["text"] == again.raw_text


def test_free_backends_are_not_cached_by_default(make_client: Any, settings: Settings) -> None:
    model = ScriptedModel(function=lambda request: GOOD)
    client = make_client(model)

    ask(client)
    ask(client)

    assert len(model.requests) == 2
    assert not settings.cache_dir.exists() or not list(settings.cache_dir.rglob("*.json"))


def test_cache_entries_are_written_atomically(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    cache.put("ab" + "0" * 62, '{"x": 1}', "m", Usage(input_tokens=3))

    entry = cache.get("ab" + "0" * 62)

    assert entry is not None and entry.text == '{"x": 1}' and entry.usage.input_tokens == 3
    assert [p.name for p in (tmp_path / "cache" / "ab").iterdir()] == ["ab" + "0" * 62 + ".json"]
    assert cache.get("cd" + "0" * 62) is None


def test_close_cancels_calls_in_flight(make_client: Any) -> None:
    started = threading.Event()

    async def slow(request: ModelRequest) -> Answer:
        started.set()
        await asyncio.sleep(30)
        return GOOD

    client = make_client(ScriptedModel(function=slow))
    outcome: list[BaseException] = []

    def caller() -> None:
        try:
            ask(client)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    assert started.wait(5)
    client.close()
    thread.join(timeout=5)

    assert not thread.is_alive()  # the caller was released, not left waiting on a dead loop
    assert len(outcome) == 1
