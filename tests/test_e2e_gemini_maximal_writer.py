"""Issue 23 item 4 through the real google-genai SDK: a maximal writer — every list of the schema it
is sent filled to its ``maxItems``, every text ``max_item_words`` words long and distinct — leaves a
dossier within code's bounds (points per axis, words per item, the items' words within
``report_words_factor`` × the grid's ``max_words``) and a night within its cost budget.

The answer is built from the ``responseJsonSchema`` the fake server receives, so it is as large as
that schema lets any model be.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.dossier import Dossier
from veille.flows.veille import veille_flow
from veille.grid import load_grid
from veille.journal import read_journal
from veille.settings import Settings
from veille.steps.bounds import item_words

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


def _maximal(schema: dict[str, Any], words: int, counter: Iterator[int]) -> Any:
    """The largest instance of ``schema`` code may keep: lists at maxItems, texts of ``words`` words."""
    if "enum" in schema:
        return schema["enum"][next(counter) % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object":
        return {k: _maximal(v, words, counter) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_maximal(schema["items"], words, counter) for _ in range(schema["maxItems"])]
    if kind == "string":
        n = next(counter)
        # Distinct by its first word; no figure: an invented one is the verifier's to drop (issue 36,
        # tests/test_e2e_gemini_verify.py), and this test is about code's bounds on what stays.
        text = " ".join(f"Kestrel{n}" if i == 0 else "débit" for i in range(words - 1)) + " mesuré."
        return text[: schema["maxLength"]]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    raise AssertionError(f"unexpected schema node {schema}")


def _respond(body: dict[str, Any], model: str, others: Any) -> Reply:
    if role_of(body) in ("writer", "reviser"):
        schema = body["generationConfig"]["responseJsonSchema"]
        answer = _maximal(schema, Settings().max_item_words, itertools.count())
        return Reply.json(answer)
    return others(body, model)


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    others = gemini_responder()
    with FakeGemini() as fake:
        fake.responder = lambda body, model: _respond(body, model, others)
        yield fake


def test_a_maximal_writer_leaves_a_bounded_dossier_within_the_budget(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse", key="AIza-test-key")
    corpus = write_corpus(tmp_path / "corpus")
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    settings, grid = Settings(), load_grid(corpus / "grid.toml")

    writer_calls = [r for r in read_journal(run_dir / "calls.jsonl") if r.role == "writer"]
    assert [r.status for r in writer_calls] == ["ok"]  # schema-valid: validated on arrival, kept
    review = json.loads((run_dir / "review.json").read_text(encoding="utf-8"))
    final = Dossier.model_validate(review["rounds"][-1]["structure"])
    assert item_words(final) <= settings.bounds().report_words(grid.max_words)
    assert all(len(s.points) <= settings.max_points_per_axis for s in final.sections)
    texts = [t.text for t in (*final.synthesis, *final.uncertainties, *final.recommendation)]
    texts += [p.text for s in final.sections for p in s.points]
    assert texts and all(len(t.split()) <= settings.max_item_words for t in texts)
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert all(t.rstrip(".") in report for t in texts[:3])  # whole items (citations before the period)
    codes = {a["code"] for a in json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))}
    assert {"report.bounded", "report.words_bounded"} <= codes
    spent = sum(r.cost_usd or 0.0 for r in read_journal(run_dir / "calls.jsonl"))
    assert 0 < spent <= settings.max_cost_usd
