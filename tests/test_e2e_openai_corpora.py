"""A night with ``--backend openai`` against the fake OpenAI-compatible server on the bundled
corpus and on every corpus of tests/corpora (issue 38, « Done when »): a dossier each time, every
HTTP request the server received journaled with its tokens, $0 at the default local prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.fake_openai import FakeOpenAI, corpus_responder
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.settings import PROJECT_ROOT
from veille.textstats import MODEL_SECTIONS, split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

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
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(split_sections(report).get(name) for name in (*MODEL_SECTIONS, "Sources"))
