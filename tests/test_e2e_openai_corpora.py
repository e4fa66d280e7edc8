"""A night with ``--backend openai`` against the fake OpenAI-compatible server on the bundled
corpus and on every corpus of tests/corpora (issue 38, « Done when »): a dossier each time, every
HTTP request the server received journaled with its tokens, $0 at the default local prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit.fake_openai import FAULTS, FakeOpenAI, corpus_responder, small_model
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.settings import PROJECT_ROOT
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

# Every section a model writes; the recommendation only when the request asks for a choice, which
# code decides from the request (veille.corpus.request_reading), whatever the provider.
REQUIRED = tuple(name for name in MODEL_SECTIONS if name != "Recommandation")
CORPORA = [
    PROJECT_ROOT / "corpus",
    *sorted(p for p in (PROJECT_ROOT / "tests" / "corpora").iterdir() if (p / "request.md").is_file()),
]


@pytest.mark.parametrize("corpus", CORPORA, ids=[p.name for p in CORPORA])
def test_a_dossier_on_every_corpus_through_the_openai_provider(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(models=("local-model",)) as server:
        server.responder = corpus_responder()
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
        monkeypatch.setenv("VEILLE_HTTP_RETRY_INITIAL_DELAY_S", "0.01")
        state = veille_flow(corpus=str(corpus), backend="openai", return_state=True)
        assert state.is_completed(), state.message
        received = len(server.requests)
    run_dir = Path(state.result())
    calls = read_journal(run_dir / "calls.jsonl")
    assert calls and {c.backend for c in calls} == {"openai"}
    assert sum(c.http_requests or 0 for c in calls) == received
    answered = [c for c in calls if c.status in ("ok", "schema_error") and not c.cache_hit]
    assert answered and all(c.input_tokens > 0 and c.output_tokens > 0 and c.http_requests for c in answered)
    assert all(c.http_requests == 0 and c.input_tokens == 0 for c in calls if c.cache_hit)
    assert all(c.cost_usd == 0.0 for c in calls)
    sections = split_sections((run_dir / "report.md").read_text(encoding="utf-8"))
    assert [name for name in (*REQUIRED, "Sources") if not sections.get(name)] == []


SMALL_MODEL_CORPORA = [PROJECT_ROOT / "corpus", PROJECT_ROOT / "tests" / "corpora" / "passerelles-api-en"]


@pytest.mark.parametrize("corpus", SMALL_MODEL_CORPORA, ids=[p.name for p in SMALL_MODEL_CORPORA])
def test_a_small_models_night_keeps_every_branch_with_salvage_alerts(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38's small local model on the bundled corpus and an English one: its answers fenced after a sentence,
    with a string past its limit, an id that does not exist, or cut at the token limit, in turn.
    The caller keeps what is valid (veille.models.salvage): a dossier, every branch kept, the
    dropped items named in alerts, every request journaled."""
    with FakeOpenAI(models=("tiny-local",)) as server:
        server.responder = spoiled = small_model(corpus_responder())
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
        monkeypatch.setenv("VEILLE_HTTP_RETRY_INITIAL_DELAY_S", "0.01")
        state = veille_flow(corpus=str(corpus), backend="openai", return_state=True)
        assert state.is_completed(), state.message
        received = len(server.requests)
    assert set(spoiled.spoiled) == set(FAULTS)  # type: ignore[attr-defined]  # every fault was served
    run_dir = Path(state.result())
    calls = read_journal(run_dir / "calls.jsonl")
    assert sum(c.http_requests or 0 for c in calls) == received
    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    assert findings and all(branch["status"] == "ok" for branch in findings.values()), findings  # by sub-task
    codes = [a["code"] for a in json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))]
    assert "model.items_dropped" in codes
    sections = split_sections((run_dir / "report.md").read_text(encoding="utf-8"))
    assert [name for name in (*REQUIRED, "Sources") if not sections.get(name)] == []
