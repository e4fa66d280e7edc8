"""Issue 38 item 3 through the real google-genai SDK: a schema-following but mediocre model.

Every analyst answer carries a figure past its 200 characters and a contradiction citing a single
document, every writer and reviser answer a key point citing no known source, each written after
a sentence in a ``` fence (testkit.gemini_script.mediocre). Before issue 38 each such answer was
refused whole and asked again until the branch failed (« axe absent du rapport »). Now the invalid
items are dropped with one ``model.items_dropped`` alert per answer, no branch fails, and the night
sends one request per call (the issue's bar: at most 1.2, counted from calls.jsonl).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import write_corpus
from testkit.gemini_script import MEDIOCRE_FIGURE, gemini_responder, mediocre
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.journal import read_journal

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = mediocre(gemini_responder())
        yield fake


def test_a_mediocre_model_loses_its_invalid_items_not_its_branches(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    corpus = write_corpus(tmp_path / "corpus")

    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)

    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    records = read_journal(run_dir / "calls.jsonl")
    sent = [r for r in records if r.http_requests]
    calls = {r.call_id for r in sent}
    assert sent and len(sent) / len(calls) <= 1.2, (len(sent), len(calls))
    assert {r.status for r in sent} == {"ok"}  # every answer kept as it came

    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    assert not [a for a in alerts if a["code"] in ("analyse.branch_failed", "write.rendered_by_code")]
    dropped = [a for a in alerts if a["code"] == "model.items_dropped"]
    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    analysed = {branch for branch, entry in findings.items() if entry["status"] == "ok"}
    assert analysed and {a["subject"] for a in dropped if a["stage"] == "analyse"} == analysed
    assert any(a["stage"] == "write" for a in dropped)
    for entry in findings.values():  # the figure past its limit went, the findings stayed
        assert entry["findings"] and all(MEDIOCRE_FIGURE not in f["figures"] for f in entry["findings"])
        assert all(len(set(c["doc_ids"])) >= 2 for c in entry["contradictions"])
    assert "999" not in (run_dir / "report.md").read_text(encoding="utf-8")
