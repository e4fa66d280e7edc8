"""Issue 38 item 4, the budget a hard cap, through the real google-genai SDK against the fake Gemini.

The writer answers without end (testkit.gemini_script.endless): its text stops only at the
request's maxOutputTokens, and it is billed that many output tokens. Without a cap, issue 38's
writer answered 534,700 tokens ($4.82) and was re-asked with that whole answer echoed back: $10.47
on a $5 budget. Here every request carries its ceiling, leaves only if the spend, the requests in
flight and its own most fit ``max_cost_usd``, a re-ask quotes the errors (never the answer), and
the night's spend stays within the budget; code finishes what the budget refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import write_corpus
from testkit.gemini_script import ENDLESS_TOKENS, endless, gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.models.budget import BUDGET_ERROR_CLASS
from veille.settings import Settings

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BUDGET = 0.75  # USD: room for the planner, the analysts and one cut writer answer, not two


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = endless(gemini_responder())
        yield fake


def test_a_writer_without_end_spends_at_most_max_cost_usd(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    monkeypatch.setenv("VEILLE_MAX_COST_USD", str(BUDGET))
    monkeypatch.setenv("VEILLE_MAX_CONCURRENT_CALLS", "3")
    corpus = write_corpus(tmp_path / "corpus")

    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)

    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    assert (run_dir / "report.md").read_text(encoding="utf-8").strip()
    records = read_journal(run_dir / "calls.jsonl")
    spent = sum(r.cost_usd or 0.0 for r in records)
    assert 0 < spent <= BUDGET, spent
    # Every request carried its ceiling, within the settings' bound: none ran to 534,700 tokens.
    bound = Settings().max_output_tokens
    caps = [r.body["generationConfig"]["maxOutputTokens"] for r in server.settled()]
    assert caps and all(0 < cap <= bound < ENDLESS_TOKENS for cap in caps)
    writer = [r for r in records if r.role == "writer"]
    cut = [r for r in writer if r.error_class == "MaxTokens"]
    assert cut and all(r.output_tokens <= bound for r in cut)
    # The writer's re-ask, when the budget let one leave, quoted the errors, not the cut answer.
    writer_requests = [r for r in server.settled() if role_of(r.body) == "writer"]
    for request in writer_requests[1:]:
        assert "Kestrel Kestrel" not in json.dumps(request.body["contents"])
    # What the budget refused is journaled (no HTTP request) and said in the summary's alert.
    refused = [r for r in records if r.error_class == BUDGET_ERROR_CLASS]
    assert refused and {r.http_requests for r in refused} == {0}
    alerts = {a["code"]: a for a in json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))}
    assert "sortie maximale" in alerts["cost.budget_exceeded"]["message"]
    assert "write.rendered_by_code" in alerts  # the writer's answers were unusable: code wrote it
    assert len(server.requests) == sum(r.http_requests or 0 for r in records)
