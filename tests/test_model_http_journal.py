"""Every HTTP request is journaled: the real google-genai SDK against the fake server on loopback.

The server's own request log is the reference: ``sum(http_requests)`` over the journal, over the
Parquet ``llm_calls`` table (read through the warehouse's SQL path, as ``veille sql`` does) and in
the run summary must equal what the server received, 429s, 5xx and client time-outs included; and
no logical call may send more than its documented bound (veille/models/retry.py).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from testkit.fake_gemini import FakeGemini, Reply
from veille.backends import build_client
from veille.journal import read_journal
from veille.models.base import ModelError, SchemaValidationError, TransientModelError
from veille.models.caller import ModelClient
from veille.models.retry import RetryPolicy, RetryRefusedError
from veille.run.summary import format_summary, role_usage
from veille.settings import Settings
from veille.warehouse import query, record_run_dir

CANARY = "CANARY-7d2e41aa-never-journal-me"
RUN_ID = "20261203T220000Z-a1b2c3"


class Verdict(BaseModel):
    verdict: str
    score: int = Field(ge=1, le=5)


VALID = {"verdict": "ok", "score": 4}


@pytest.fixture(autouse=True)
def _canary_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


def _client(base_url: str, warehouse: Path, journal: Path, **overrides: Any) -> ModelClient:
    values: dict[str, Any] = {
        "backend": "gemini",
        "gemini_base_url": base_url,
        "gemini_api_version": "v1beta",
        "warehouse_dir": warehouse,
        "http_attempts": 3,
        "reask_attempts": 2,
        "http_retry_initial_delay_s": 0.001,
        "http_retry_max_delay_s": 2.0,
        "request_timeout_ms": 2000,
        "use_cache": False,
    }
    values.update(overrides)
    return build_client(Settings(**values), run_id=RUN_ID, journal_path=journal)


def _ask(client: ModelClient, role: str) -> Any:
    return client.call(role, "Tu notes un brouillon.", "Note ce brouillon.", Verdict)


def _summary_counts(run_dir: Path) -> dict[str, int]:
    """HTTP requests per role as the printed run summary states them."""
    lines = format_summary(run_dir).splitlines()
    found = (re.match(r"\s+(\w+)\s+\d+ appel\(s\),\s+(\d+) requête\(s\) HTTP", line) for line in lines)
    return {m[1]: int(m[2]) for m in found if m}


def test_every_request_of_a_faulty_run_is_counted_in_the_journal_parquet_and_summary(
    server: FakeGemini, tmp_path: Path
) -> None:
    run_dir = tmp_path / "runs" / RUN_ID
    run_dir.mkdir(parents=True)
    client = _client(server.base_url, tmp_path / "warehouse", run_dir / "calls.jsonl", request_timeout_ms=400)
    server.script(
        # critic, call 1: rate limited (with a retryDelay), then unavailable, then answered
        Reply.error(429, "quota", retry_delay="0.05s"),
        Reply.error(503, "unavailable"),
        Reply.json(VALID),
        # critic, call 2: the reply comes after our time-out (sent, maybe billed), then answered
        Reply.slow(1.5, Reply.json(VALID)),
        Reply.json(VALID),
        # judge, call 1: 503, an answer outside the schema (re-asked), then a valid one
        Reply.error(503),
        Reply.json({"verdict": "ok", "score": 9}),
        Reply.json(VALID),
        # judge, call 2: 503 on every request: the call gives up after http_attempts
        Reply.error(503),
        Reply.error(500),
        Reply.error(503),
    )
    with client:
        assert _ask(client, "critic").output.score == 4
        assert _ask(client, "critic").output.score == 4
        assert _ask(client, "judge").attempts == 2  # two answers: one re-ask
        with pytest.raises(ModelError):
            _ask(client, "judge")

    received = server.settled()
    assert len(received) == 11 and server.pending == 0
    records = read_journal(run_dir / "calls.jsonl")
    assert sum(r.http_requests or 0 for r in records) == len(received)
    # Each record's status agrees with what the server did with that request, in order.
    statuses = [(r.status, r.error_class) for r in records]
    assert statuses[:5] == [
        ("transient_error", "RateLimited"),
        ("transient_error", "HTTP503"),
        ("ok", None),
        ("transient_error", "ReadTimeout"),
        ("ok", None),
    ]
    judge = ["transient_error", "schema_error", "ok"] + ["transient_error"] * 3
    assert [r.status for r in records[5:]] == judge
    assert [r.input_tokens for r in records if r.status in ("ok", "schema_error")] == [100] * 4

    record_run_dir(run_dir, tmp_path / "parquet")
    _, [(total,)] = query(tmp_path / "parquet", "SELECT sum(http_requests) FROM llm_calls")
    assert total == len(received)
    _, by_role = query(
        tmp_path / "parquet", "SELECT role, sum(http_requests) FROM llm_calls GROUP BY role ORDER BY role"
    )
    server_by_role = {"critic": 5, "judge": 6}
    assert dict(by_role) == server_by_role
    assert {u.role: u.http_requests for u in role_usage(run_dir / "calls.jsonl")} == server_by_role
    assert _summary_counts(run_dir) == server_by_role


def test_an_error_echoing_the_api_key_is_scrubbed_in_the_journal_and_parquet(
    server: FakeGemini, tmp_path: Path
) -> None:
    run_dir = tmp_path / "runs" / RUN_ID
    run_dir.mkdir(parents=True)
    client = _client(server.base_url, tmp_path / "warehouse", run_dir / "calls.jsonl", reask_attempts=0)
    server.script(
        # a server error quoting the key it was sent
        Reply.error(400, f"API key not valid: {CANARY}"),
        # a validation error quoting a wrong-typed field: the model echoed the key into "score"
        Reply.json({"verdict": "ok", "score": CANARY}),
    )
    with client:
        with pytest.raises(ModelError) as server_error:
            _ask(client, "critic")
        with pytest.raises(SchemaValidationError) as schema_error:
            _ask(client, "critic")
    assert CANARY not in str(server_error.value) and CANARY not in str(schema_error.value)

    journal = (run_dir / "calls.jsonl").read_text(encoding="utf-8")
    records = read_journal(run_dir / "calls.jsonl")
    assert [(r.error_class, r.http_requests) for r in records] == [("HTTP400", 1), ("ValidationError", 1)]
    assert "score" in (records[1].error_message or "") and "***" in (records[1].error_message or "")
    assert CANARY not in journal
    record_run_dir(run_dir, tmp_path / "parquet")
    _, rows = query(tmp_path / "parquet", "SELECT error_message FROM llm_calls ORDER BY seq")
    assert len(rows) == 2 and all(CANARY not in (message or "") for (message,) in rows)
    for parquet in (tmp_path / "parquet").rglob("*.parquet"):
        assert CANARY.encode() not in parquet.read_bytes()


# --- the bound, over any mix of faults -----------------------------------------------------------

FAULTS = {
    "429": lambda: Reply.error(429, "quota"),
    "429-delay": lambda: Reply.error(429, "quota", retry_delay="0.002s"),
    "500": lambda: Reply.error(500),
    "503": lambda: Reply.error(503),
    "hangup": Reply.hangup,
    "invalid": lambda: Reply.json({"verdict": "ok", "score": 0}),
    "truncated": lambda: Reply.max_tokens('{"verdict": "o'),
    "ok": lambda: Reply.json(VALID),
}


def _expected(script: list[str], policy: RetryPolicy) -> tuple[int, str]:
    """Requests the policy lets one call send for ``script``, and how the call ends."""
    failures = answers = 0
    for sent, kind in enumerate(script, start=1):
        if kind == "ok":
            return sent, "ok"
        if kind in ("invalid", "truncated"):
            answers += 1
            if answers >= policy.answers(grounded=False):
                return sent, "schema"
        else:
            failures += 1
            if failures >= policy.http_attempts:
                return sent, "transient"
    raise AssertionError("script too short")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=st.lists(st.sampled_from(sorted(FAULTS)), min_size=0, max_size=8),
    http_attempts=st.integers(1, 4),
    reask_attempts=st.integers(0, 2),
)
def test_requests_are_bounded_and_all_journaled_whatever_the_faults(
    server: FakeGemini, script: list[str], http_attempts: int, reask_attempts: int
) -> None:
    script = [*script, *["503"] * 4, *["invalid"] * 3, "ok"]  # long enough to reach an end
    policy = RetryPolicy(http_attempts=http_attempts, reask_attempts=reask_attempts)
    expected_requests, expected_end = _expected(script, policy)
    server.reset()
    server.script(*(FAULTS[kind]() for kind in script))
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp) / "calls.jsonl"
        client = _client(
            server.base_url,
            Path(tmp) / "warehouse",
            journal,
            http_attempts=http_attempts,
            reask_attempts=reask_attempts,
        )
        with client:
            try:
                _ask(client, "critic")
                end = "ok"
            except SchemaValidationError:
                end = "schema"
            except ModelError as exc:
                assert exc.retryable
                end = "transient"
        records = read_journal(journal)
    received = server.settled()
    assert (len(received), end) == (expected_requests, expected_end), json.dumps(script)
    assert len(received) <= policy.max_requests()
    assert sum(r.http_requests or 0 for r in records) == len(received)
    assert [r.attempt for r in records] == list(range(1, len(records) + 1))
    assert len({r.call_id for r in records}) == 1


# --- the policy alone ----------------------------------------------------------------------------


@given(
    http_attempts=st.integers(1, 6),
    initial=st.floats(0.0, 5.0),
    max_delay=st.floats(0.0, 120.0),
    asked=st.none() | st.floats(0.0, 200.0),
)
def test_the_policy_waits_what_the_server_asks_within_its_limit_and_stops_at_the_budget(
    http_attempts: int, initial: float, max_delay: float, asked: float | None
) -> None:
    policy = RetryPolicy(http_attempts=http_attempts, initial_delay_s=initial, max_delay_s=max_delay)
    error = TransientModelError("429")
    error.retry_after_s = asked
    for failures in range(1, http_attempts + 2):
        if failures >= http_attempts:
            assert policy.delay_before_resend(error, failures) is None
        elif asked is not None and asked > max_delay:
            with pytest.raises(RetryRefusedError, match="quota"):
                policy.delay_before_resend(error, failures)
        else:
            delay = policy.delay_before_resend(error, failures)
            assert delay is not None and delay >= 0
            if asked is not None:
                assert delay == asked
            else:
                assert delay <= max_delay + min(1.0, initial)
    assert policy.delay_before_resend(ModelError("400"), 1) is None  # not retryable: never resent
    assert policy.max_requests() == 1 + policy.reask_attempts + http_attempts - 1


@pytest.mark.parametrize(
    "error",
    [
        TransientModelError("503"),
        RetryRefusedError(TransientModelError("429"), 3600, 60),
        SchemaValidationError("critic", 3, "score"),
        ModelError("400"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_tasks_never_resend_a_model_error(error: ModelError) -> None:
    from veille.tasks.clients import is_retryable

    assert not is_retryable(error)
    assert is_retryable(OSError("disk busy"))  # I/O errors keep their task retries
