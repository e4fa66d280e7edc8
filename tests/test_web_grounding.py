"""Google Search grounding through the real google-genai SDK against the fake server (issue 14).

The researcher's request carries the search tool and no JSON mode; the answer's groundingMetadata
(chunks, supports, queries) is read by code into findings and sources: duplicate chunks, supports,
a chunk without uri, empty metadata, a blocked search and a 429 on a grounded call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from veille.backends import build_client
from veille.journal import read_journal
from veille.models.caller import ModelClient
from veille.models.grounding import GroundedAnswer
from veille.roles.planner import SubTask
from veille.roles.researcher import RESEARCHER, ResearcherInput
from veille.settings import RoleModel, Settings
from veille.steps.research import research_plan, research_subtask, web_source_id

CANARY = "CANARY-web-7d1e-never-print-me"
PRO = "https://exemple.org/kestrel-3-4"
BLOG = "https://blog.exemple.net/bench"
TEXT = (
    "Kestrel 3.4 atteint 1 420 tokens/s par GPU. "
    "Orvet publie sa version 2.0 en mars 2026. "
    "Tamaris reste le plus cher du marché."
)
SUB_TASK = SubTask(
    id="st-1", question="Quelles performances publiées pour Kestrel et Orvet ?", doc_ids=["doc-01"]
)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


@pytest.fixture()
def client(server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelClient]:
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)
    settings = Settings(
        backend="gemini",
        gemini_base_url=server.base_url,
        gemini_api_version="v1beta",
        warehouse_dir=tmp_path / "warehouse",
        http_attempts=3,
        http_retry_initial_delay_s=0.01,
        http_retry_max_delay_s=2.0,
        use_cache=False,
        web_budget=3,
        roles={"researcher": RoleModel(model="gemini-3.5-flash", thinking="low", temperature=1.0)},
    )
    with build_client(settings, run_id="run-web", journal_path=tmp_path / "calls.jsonl") as built:
        yield built


def _ask(client: ModelClient) -> Any:
    return research_subtask(client, SUB_TASK, request_title="Moteurs d'inférence", date="2026-12-02")


def _reply(**kwargs: Any) -> Reply:
    defaults: dict[str, Any] = {
        "chunks": [{"uri": PRO, "title": "exemple.org"}, {"uri": BLOG, "title": "Banc d'essai"}],
        "supports": [
            ("Kestrel 3.4 atteint 1 420 tokens/s par GPU.", [0, 1]),
            ("Orvet publie sa version 2.0 en mars 2026.", [1]),
        ],
        "queries": ["kestrel 3.4 débit", "orvet 2.0 sortie"],
    }
    return Reply.grounded(TEXT, **{**defaults, **kwargs})


def test_the_request_carries_the_search_tool_and_no_json_mode(
    server: FakeGemini, client: ModelClient
) -> None:
    server.script(_reply())
    _ask(client)
    body = server.requests[0].body
    assert body["tools"] == [{"googleSearch": {}}]
    config = body.get("generationConfig", {})
    assert "responseMimeType" not in config and "responseJsonSchema" not in config
    assert config["temperature"] == 1.0 and "thinkingConfig" in config
    assert "Date du jour : 2026-12-02" in body["contents"][0]["parts"][0]["text"]


def test_supports_become_findings_mapped_to_their_chunks(server: FakeGemini, client: ModelClient) -> None:
    server.script(_reply())
    research = _ask(client)
    assert research.status == "ok" and research.queries == ["kestrel 3.4 débit", "orvet 2.0 sortie"]
    assert [(f.statement, f.chunks) for f in research.findings] == [
        ("Kestrel 3.4 atteint 1 420 tokens/s par GPU.", [0, 1]),
        ("Orvet publie sa version 2.0 en mars 2026.", [1]),
    ]
    assert research.findings[0].source_ids == [web_source_id(PRO), web_source_id(BLOG)]
    assert [(s.uri, s.title, s.domain) for s in research.sources] == [
        (PRO, "exemple.org", "exemple.org"),
        (BLOG, "Banc d'essai", "blog.exemple.net"),  # no domain from the API: the URI's host
    ]
    assert all(s.retrieved_at[:10] == research.sources[0].date for s in research.sources)
    # The third sentence has no support: dropped, with an alert naming it.
    assert [a.code for a in research.alerts] == ["web.unsupported_claim"]
    assert "Tamaris reste le plus cher" in research.alerts[0].message


def test_duplicate_chunks_are_one_source(server: FakeGemini, client: ModelClient) -> None:
    chunks = [{"uri": PRO, "title": "exemple.org"}, {"uri": PRO, "title": "exemple.org"}, {"uri": BLOG}]
    supports = [
        ("Kestrel 3.4 atteint 1 420 tokens/s par GPU.", [0, 1]),
        ("Orvet publie sa version 2.0 en mars 2026.", [1, 2]),
    ]
    server.script(_reply(chunks=chunks, supports=supports))
    research = _ask(client)
    assert [s.uri for s in research.sources] == [PRO, BLOG]
    assert research.findings[0].source_ids == [web_source_id(PRO)]  # two chunks, one page
    assert research.findings[1].source_ids == [web_source_id(PRO), web_source_id(BLOG)]


def test_a_chunk_without_uri_supports_nothing(server: FakeGemini, client: ModelClient) -> None:
    chunks = [
        {"title": "sans lien"},
        None,
        {"uri": BLOG, "title": "Banc d'essai"},
        {"uri": "javascript:alert(1)"},
    ]
    supports = [
        ("Kestrel 3.4 atteint 1 420 tokens/s par GPU.", [0, 1, 3]),
        ("Orvet publie sa version 2.0 en mars 2026.", [0, 2]),
    ]
    server.script(_reply(chunks=chunks, supports=supports))
    research = _ask(client)
    assert [f.statement for f in research.findings] == ["Orvet publie sa version 2.0 en mars 2026."]
    assert research.findings[0].chunks == [2]
    assert [s.uri for s in research.sources] == [BLOG]
    codes = {a.code: a.message for a in research.alerts}
    assert "3 source(s)" in codes["web.chunk_without_uri"]
    assert "2 affirmation(s)" in codes["web.unsupported_claim"]  # Kestrel's segment and Tamaris


def test_segments_sent_as_byte_offsets_only(server: FakeGemini, client: ModelClient) -> None:
    text = "Le débit mesuré à Genève atteint 1 420 tokens/s. Élevé."
    server.script(Reply.grounded(text, chunks=[{"uri": PRO}], supports=[("Élevé.", [0])], segment_text=False))
    research = _ask(client)
    assert [f.statement for f in research.findings] == ["Élevé."]  # UTF-8 byte offsets, not characters


def test_empty_metadata_gives_no_finding(server: FakeGemini, client: ModelClient, tmp_path: Path) -> None:
    server.script(Reply.grounded(TEXT))  # groundingMetadata: {}
    research = _ask(client)
    assert research.status == "ok" and research.findings == [] and research.sources == []
    assert [a.code for a in research.alerts] == ["web.no_grounding"]  # one alert, naming the 3 claims
    assert "3 affirmation(s)" in research.alerts[0].message
    (record,) = read_journal(tmp_path / "calls.jsonl")
    assert record.search_queries == 0 and record.grounding_cost_usd == 0.0  # no search, no fee (Gemini 3)


def test_no_metadata_at_all(server: FakeGemini, client: ModelClient) -> None:
    server.script(Reply.text(TEXT))
    research = _ask(client)
    assert research.findings == [] and "web.no_grounding" in {a.code for a in research.alerts}


def test_a_blocked_search_is_an_alert_not_a_failed_run(server: FakeGemini, client: ModelClient) -> None:
    server.script(Reply.blocked("SAFETY"))
    research = _ask(client)
    assert research.status == "failed" and research.findings == []
    assert [a.code for a in research.alerts] == ["web.blocked"]
    assert len(server.requests) == 1  # not re-asked


def test_a_429_on_a_grounded_call_is_paced_then_answered(
    server: FakeGemini, client: ModelClient, tmp_path: Path
) -> None:
    server.script(Reply.error(429, retry_delay="0.2s"), _reply())
    research = _ask(client)
    assert research.status == "ok" and len(research.findings) == 2
    first, second = server.requests
    assert second.received_at - first.received_at >= 0.19
    assert all(r.body["tools"] == [{"googleSearch": {}}] for r in server.requests)
    # One call, two requests: the 429 is journaled too, and the resend is no second search budget.
    records = read_journal(tmp_path / "calls.jsonl")
    assert [(r.status, r.http_requests) for r in records] == [("transient_error", 1), ("ok", 1)]
    assert len({r.call_id for r in records}) == 1


def test_a_429_that_persists_fails_the_research_only(server: FakeGemini, client: ModelClient) -> None:
    server.script(*[Reply.error(429, retry_delay="0.01s")] * 3)
    research = _ask(client)
    assert research.status == "failed" and [a.code for a in research.alerts] == ["web.failed"]
    assert "RateLimited" in (research.error or "") or "429" in (research.error or "")


def test_grounding_cost_per_query_is_added_to_the_call(
    server: FakeGemini, client: ModelClient, tmp_path: Path
) -> None:
    server.script(_reply(prompt_tokens=1000, output_tokens=200))
    _ask(client)
    (record,) = read_journal(tmp_path / "calls.jsonl")
    price = client.prices.get("gemini-3.5-flash")
    assert price is not None and price.google_search is not None and price.google_search.unit == "query"
    tokens = (1000 * price.input + 200 * price.output) / 1_000_000
    assert record.search_queries == 2
    assert record.grounding_cost_usd == pytest.approx(2 * price.google_search.per_1000 / 1000)
    assert record.cost_usd == pytest.approx(tokens + record.grounding_cost_usd)
    assert record.role == "researcher" and record.subtask_id == "st-1"


def test_a_model_without_grounding_price_has_no_cost(
    server: FakeGemini, client: ModelClient, tmp_path: Path
) -> None:
    from veille.models.pricing import ModelPrice, PriceTable

    price = ModelPrice("gemini-3.5-flash", 1.5, 0.15, 9.0, "test", "2026-12-02")  # tokens only
    client.prices = PriceTable({"gemini-3.5-flash": price})
    server.script(_reply())
    _ask(client)
    (record,) = read_journal(tmp_path / "calls.jsonl")
    assert record.cost_usd is None and record.grounding_cost_usd is None
    assert [a.code for a in client.alerts()] == ["cost.unknown_grounding"]


def test_the_budget_stops_grounded_calls_at_the_seam(server: FakeGemini, client: ModelClient) -> None:
    server.responder = lambda body, model: _reply()
    results = [_ask(client) for _ in range(4)]  # web_budget = 3
    assert [r.status for r in results] == ["ok", "ok", "ok", "failed"]
    assert results[-1].alerts[0].code == "web.budget_exhausted" and len(server.requests) == 3


def test_the_answer_json_is_code_written(server: FakeGemini, client: ModelClient) -> None:
    server.script(_reply())
    result = client.ask(
        RESEARCHER, ResearcherInput(subtask_id="st-1", question="q", request_title="t", date="d")
    )
    answer = GroundedAnswer.model_validate_json(result.raw_text)
    assert answer.text == TEXT and len(answer.chunks) == 2 and json.loads(result.raw_text)["supports"]


def test_research_plan_budget_and_offline() -> None:
    subs = [SubTask(id=f"st-{i}", question="q", doc_ids=["d"]) for i in range(1, 5)]
    assert research_plan(subs, web=False, searches=True, budget=2) == ([], [])
    chosen, alerts = research_plan(subs, web=True, searches=True, budget=2)
    assert [s.id for s in chosen] == ["st-1", "st-2"]
    assert alerts[0].code == "web.budget_exhausted" and alerts[0].subjects == ["st-3", "st-4"]
    chosen, alerts = research_plan(subs, web=True, searches=False, budget=2)
    assert chosen == [] and [a.code for a in alerts] == ["web.offline"]
