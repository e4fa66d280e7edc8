"""The OpenAI-compatible provider through the real ``openai`` SDK against the loopback fake server:
structured output per model, the model the server lists, errors mapped to the seam's, every
request journaled with its tokens, prices, the key kept out of every record, small-model faults."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from testkit.fake_gemini import closed_port_url
from testkit.fake_openai import FAULTS, FakeOpenAI, Reply, degrade, small_model
from veille.backends import build_client
from veille.journal import read_journal
from veille.models.base import ModelError, SchemaValidationError, TransientModelError
from veille.models.caller import ModelClient
from veille.models.openai_compat import is_local_url
from veille.settings import Settings

KEY = "sk-test-canary-abcdef0123456789"


class Answer(BaseModel):
    verdict: str = Field(max_length=50)
    score: int = Field(ge=1, le=5)


GOOD = Answer(verdict="ok", score=3)


@pytest.fixture()
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=("listed-first", "listed-second")) as fake:
        yield fake


def _client(server_url: str, tmp_path: Path, **fields: object) -> ModelClient:
    settings = Settings(
        warehouse_dir=tmp_path / "warehouse",
        backend="openai",
        openai_base_url=server_url,
        http_retry_initial_delay_s=0.01,
        use_cache=False,
        **fields,  # type: ignore[arg-type]
    )
    return build_client(settings, run_id="run-1", journal_path=tmp_path / "calls.jsonl")


def _ask(client: ModelClient) -> object:
    return client.call("critic", "Tu évalues.", "Évalue ceci.", Answer).output


def test_the_first_listed_model_answers_with_the_roles_schema(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.script(Reply.json(GOOD, prompt_tokens=321, completion_tokens=45, reasoning_tokens=5))
    with _client(server.base_url, tmp_path) as client:
        assert _ask(client) == GOOD
        records = client.journal.records()
    listing, completion = server.requests
    assert (listing.method, listing.path) == ("GET", "/v1/models")
    assert completion.body["model"] == "listed-first"
    fmt = completion.body["response_format"]
    assert (
        fmt["type"] == "json_schema"
        and fmt["json_schema"]["schema"]["properties"]["verdict"]["maxLength"] == 50
    )
    assert completion.headers["authorization"] == f"Bearer {KEY}"
    (record,) = records
    # Both HTTP requests on the one record; reasoning tokens split out of completion_tokens.
    assert record.http_requests == 2 and record.backend == "openai" and record.model == "listed-first"
    assert (record.input_tokens, record.output_tokens, record.reasoning_tokens) == (321, 40, 5)
    assert record.cost_usd == 0.0 and not record.estimated  # unpriced, on a loopback server


def test_json_mode_states_the_schema_and_a_named_model_lists_nothing(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.script(Reply.json(GOOD))
    with _client(server.base_url, tmp_path, openai_model="m", openai_output={"m": "json_object"}) as client:
        assert _ask(client) == GOOD
    (completion,) = server.requests
    assert completion.body["response_format"] == {"type": "json_object"}
    assert '"verdict"' in completion.body["messages"][0]["content"]  # the schema, told in the system message


def test_a_truncated_answer_is_re_asked_with_the_error_and_a_missing_usage_is_estimated(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.script(Reply.text('{"verdict": "o', finish_reason="length"), Reply.json(GOOD, prompt_tokens=None))
    with _client(server.base_url, tmp_path, openai_model="m") as client:
        assert _ask(client) == GOOD
        first, second = client.journal.records()
    assert (first.status, first.error_class) == ("schema_error", "MaxTokens")
    reask = server.requests[1].body["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert "MAX_TOKENS" in reask[-1]["content"]
    assert second.status == "ok" and second.estimated and second.input_tokens > 0


def test_errors_map_to_the_seams_and_every_request_is_journaled(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.script(
        Reply.error(429, "slow down", retry_after="0.05"),
        Reply.error(503, f"overloaded, key {KEY}"),
        Reply.json(GOOD),
        Reply.error(400, f"bad request echoing {KEY}"),
    )
    with _client(server.base_url, tmp_path, openai_model="m") as client:
        assert _ask(client) == GOOD
        with pytest.raises(ModelError) as refused:
            _ask(client)
        assert not refused.value.retryable and KEY not in str(refused.value)
    records = read_journal(tmp_path / "calls.jsonl")
    assert [r.error_class for r in records] == ["RateLimited", "HTTP503", None, "HTTP400"]
    assert sum(r.http_requests or 0 for r in records) == len(server.requests) == 4
    assert KEY not in (tmp_path / "calls.jsonl").read_text(encoding="utf-8")


def test_a_closed_port_sent_nothing_and_names_the_address(tmp_path: Path) -> None:
    url = closed_port_url() + "v1"
    with _client(url, tmp_path, openai_model="m", http_attempts=2) as client:
        with pytest.raises(TransientModelError, match="OPENAI_BASE_URL"):
            _ask(client)
        records = client.journal.records()
    assert len(records) == 2 and all(r.http_requests == 0 for r in records)


def test_an_unpriced_model_of_a_remote_server_is_null_not_zero(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.models.openai_compat import OpenAICompatModel

    settings = Settings(warehouse_dir=tmp_path, openai_base_url="https://llm.example.com/v1")
    assert not OpenAICompatModel(settings).unpriced_is_free
    # The same server seen as remote: its unpriced model costs null, with the alert.
    server.script(Reply.json(GOOD))
    monkeypatch.setattr("veille.models.openai_compat.is_local_url", lambda url: False)
    with _client(server.base_url, tmp_path, openai_model="mystery") as client:
        result = client.call("critic", "s", "p", Answer)
        assert result.cost_usd is None
        assert [a.code for a in client.alerts()] == ["cost.unknown_model"]


def test_a_priced_model_costs_its_price_even_on_a_local_server(server: FakeOpenAI, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "prices.toml").write_text(
        '[models."local-priced"]\ninput = 1.0\ncached_input = 0.5\noutput = 2.0\n'
        'source = "test"\nas_of = "2026-12-06"\n',
        encoding="utf-8",
    )
    server.script(Reply.json(GOOD, prompt_tokens=1_000_000, completion_tokens=1_000_000))
    with _client(server.base_url, tmp_path, openai_model="local-priced", config_dir=config) as client:
        assert client.call("critic", "s", "p", Answer).cost_usd == pytest.approx(3.0)


@pytest.mark.parametrize("fault", FAULTS)
def test_each_small_model_fault_is_produced_and_refused_by_the_schema(fault: str) -> None:
    text = json.dumps({"findings": [{"statement": "Un constat.", "doc_ids": ["doc-01"]}]})
    spoilt, finish = degrade(text, fault)
    assert spoilt != text
    if fault == "fenced":
        assert spoilt.startswith("Voici") and "```json\n" + text in spoilt
    elif fault == "truncated":
        assert finish == "length" and text.startswith(spoilt)
    elif fault == "overlong":
        assert len(json.loads(spoilt)["findings"][0]["statement"]) > 2000
    else:
        assert "doc-inexistant-999" in json.loads(spoilt)["findings"][0]["doc_ids"]


def test_a_small_model_answers_are_re_asked_then_refused_whole(server: FakeOpenAI, tmp_path: Path) -> None:
    """Without the salvage of issue 38 item 3, a spoilt answer earns a re-ask like any invalid one."""
    server.responder = small_model(lambda body: Reply.json(GOOD), faults=("fenced", "truncated"))
    with _client(server.base_url, tmp_path, openai_model="m") as client:
        with pytest.raises(SchemaValidationError):
            _ask(client)
        records = client.journal.records()
    assert [r.status for r in records] == ["schema_error"] * 3
    assert server.responder.spoiled == ["fenced", "truncated", "fenced"]  # type: ignore[attr-defined]


_LOCAL = st.one_of(
    st.ip_addresses(network="127.0.0.0/8"),
    st.ip_addresses(network="10.0.0.0/8"),
    st.ip_addresses(network="192.168.0.0/16"),
    st.ip_addresses(network="172.16.0.0/12"),
    st.just(ipaddress.ip_address("::1")),
)


@hsettings(max_examples=200, deadline=None)
@given(address=_LOCAL, port=st.integers(1, 65535))
def test_a_server_on_a_loopback_or_private_address_is_local(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int
) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    assert is_local_url(f"http://{host}:{port}/v1")


@hsettings(max_examples=200, deadline=None)
@given(address=st.ip_addresses(v=4))
def test_a_public_address_is_never_local(address: ipaddress.IPv4Address) -> None:
    assert is_local_url(f"https://{address}/v1") == (
        address.is_loopback or address.is_private or address.is_link_local
    )
    assert not is_local_url("https://api.openai.com/v1")
