"""Issue 23 item 4, the cost budget, through the real google-genai SDK against the fake Gemini server.

A model whose every answer is huge but valid (the most findings the schema allows, long statements,
60,000 output tokens billed per request) meets a small ``max_cost_usd``: the night still completes
with a dossier; code finishes what the budget refused (offline analysts, dossier rendered by code);
an error alert says so; and the journaled spend respects the hard cap of veille/models/budget.py:
at most ``max_cost_usd`` (each request priced at its most before it leaves; the fake bills no more
output than the request allowed, as a provider does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.models.budget import BUDGET_ERROR_CLASS
from veille.run.summary import format_summary
from veille.settings import Settings

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BILLED_OUTPUT = 60_000  # tokens per answer: $0.54 on gemini-3.5-flash, $0.72 on gemini-3.1-pro-preview
BUDGET = 1.0
LONG = " ".join(["Kestrel débit mesuré"] * 30)  # 90 words: long, within every bound


def _text(content: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in content.get("parts", []))


def _billed(reply: Reply, body: dict[str, Any]) -> Reply:
    """``reply`` with a huge bill: every request costs as if the model wrote BILLED_OUTPUT tokens,
    or as many as the request allowed (``maxOutputTokens``: a provider bills no more, issue 38)."""
    payload = json.loads(reply.body)
    if "candidates" not in payload:
        return reply
    output = min(BILLED_OUTPUT, body.get("generationConfig", {}).get("maxOutputTokens") or BILLED_OUTPUT)
    payload["usageMetadata"] = {
        "promptTokenCount": 2_000,
        "candidatesTokenCount": output,
        "totalTokenCount": 2_000 + output,
    }
    return Reply.raw(json.dumps(payload))


def _respond(body: dict[str, Any], model: str, others: Any) -> Reply:
    if role_of(body) == "analyst":  # 200 long findings (the schema says 30), blanks and repeats
        ids = re.findall(r'<document id="([^"]+)"', _text(body["contents"][0]))
        statements = [f"{LONG} {n}." for n in range(200)] + ["", ".", f"{LONG} 0."]
        findings = [{"statement": s, "doc_ids": ids[:1], "figures": []} for s in statements]
        reply = Reply.json({"findings": findings, "contradictions": [], "open_questions": []})
        return _billed(reply, body)
    return _billed(others(body, model), body)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    others = gemini_responder()
    with FakeGemini() as fake:
        fake.responder = lambda body, model: _respond(body, model, others)
        yield fake


def test_a_spent_budget_stops_model_calls_and_code_finishes_the_night(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "GEMINI_API_KEY": "AIza-test-key",
        "VEILLE_WAREHOUSE_DIR": str(tmp_path / "warehouse"),
        "VEILLE_GEMINI_BASE_URL": server.base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
        "VEILLE_MAX_COST_USD": str(BUDGET),
        "VEILLE_MAX_CONCURRENT_CALLS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    corpus = write_corpus(tmp_path / "corpus")
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    assert (run_dir / "report.md").read_text(encoding="utf-8").strip()

    records = read_journal(run_dir / "calls.jsonl")
    paid = [r for r in records if r.backend == "gemini" and r.http_requests]
    refused = [r for r in records if r.error_class == BUDGET_ERROR_CLASS]
    spent = sum(r.cost_usd or 0.0 for r in records)
    dearest = max(r.cost_usd or 0.0 for r in paid)
    assert paid and refused and {r.http_requests for r in refused} == {0}
    # The hard cap (veille/models/budget.py, issue 38): each request left only if its most fit.
    assert 0 < dearest <= spent <= BUDGET, (spent, dearest)
    # Every request the server received is a paid, journaled one: none was sent past the budget.
    assert len(server.requests) == sum(r.http_requests or 0 for r in records) == len(paid)
    assert all(r.started_at < refused[0].started_at for r in paid)

    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    codes = {a["code"]: a for a in alerts}
    assert codes["cost.budget_exceeded"]["severity"] == "error"
    assert "write.rendered_by_code" in codes  # the writer was refused: the dossier is code's
    offline = [a for a in alerts if a["code"] == "analyse.offline_budget"]
    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    assert offline and all(findings[a["subject"]]["status"] == "ok" for a in offline)
    # The paid branches: 200 findings answered, the first max_findings_per_branch kept, with an alert.
    paid_branches = {r.subtask_id for r in paid if r.role == "analyst"}
    limit = Settings().max_findings_per_branch
    assert paid_branches and all(len(findings[b]["findings"]) == limit for b in paid_branches)
    assert {a["subject"] for a in alerts if a["code"] == "analyse.bounded"} >= paid_branches
    assert {r.backend for r in records} == {"gemini", "offline"}
    assert "ATTENTION [cost.budget_exceeded]" in format_summary(run_dir)  # heads the summary
