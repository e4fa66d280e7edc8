"""Issue 36 through the real google-genai SDK against the fake Gemini server: a writer that swaps
figures between products, or invents them, gives a dossier with none of them left (the verifier in
code, the same for every backend); a truthful writer's figures stay, each key point with its source
passage under it in report.html (the e-mail's body)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import DOCS, write_corpus
from testkit.gemini_script import (
    alter_figures,
    copying_analyst,
    findings_dossier,
    gemini_responder,
    wrong_figures_writer,
)
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.textstats import split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

NAMES = ["Kestrel", "Tamaris", "Orvet"]
# The documents' sentences that carry a measured figure (a unit after the number), by document.
MEASURED_BY_DOC = {
    doc_id: " ".join(body.split())
    for doc_id, *_, body in DOCS
    if re.search(r"\d[\d ]* (?:tokens/s|EUR|GPU)", body)
}
MEASURED = list(MEASURED_BY_DOC.values())


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


def _night(server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: Any) -> Path:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    server.responder = gemini_responder(writer=writer, analyst=copying_analyst)
    state = veille_flow(corpus=str(write_corpus(tmp_path / "corpus")), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    return Path(state.result())


def _alerts(run: Path) -> dict[str, list[str]]:
    return {a["code"]: a["subjects"] for a in json.loads((run / "alerts.json").read_text(encoding="utf-8"))}


@pytest.mark.parametrize(
    ("mode", "code"), [("swap", "report.misattributed"), ("invent", "report.unsupported_figure")]
)
def test_swapped_or_invented_figures_are_never_left(
    mode: str, code: str, server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _night(server, tmp_path, monkeypatch, wrong_figures_writer(mode, NAMES))
    report = (run / "report.md").read_text(encoding="utf-8")
    altered = [alter_figures(s, mode, NAMES) for s in MEASURED]  # the sentences as the writer wrote them
    altered = [s for s in altered if s not in MEASURED]  # a sentence naming no product stays true
    assert altered
    for sentence in altered:
        assert sentence.rstrip(".") not in report, sentence
    assert code in _alerts(run), _alerts(run)
    messages = [a["message"] for a in json.loads((run / "alerts.json").read_text(encoding="utf-8"))]
    assert any(m.startswith("élément(s) retiré(s)") for m in messages)  # French, naming the points
    # The review verified its structure too: no round kept an altered sentence.
    review = json.loads((run / "review.json").read_text(encoding="utf-8"))
    assert all(sentence.rstrip(".") not in json.dumps(review, ensure_ascii=False) for sentence in altered)


def test_true_figures_stay_with_their_passage_one_click_away(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _night(server, tmp_path, monkeypatch, findings_dossier)
    report = (run / "report.md").read_text(encoding="utf-8")
    points = split_sections(report)["Points clés"]
    read = {s["id"] for s in json.loads((run / "sources.json").read_text(encoding="utf-8"))}
    kept = [sentence for doc_id, sentence in MEASURED_BY_DOC.items() if doc_id in read]  # the plan's choice
    assert len(kept) >= 3
    for sentence in kept:
        assert sentence.rstrip(".") in points, sentence
    assert not {"report.misattributed", "report.unsupported_figure"} & set(_alerts(run))
    assert "<details" not in report and "Passage" not in report  # report.md keeps evidence out of the prose
    page = (run / "report.html").read_text(encoding="utf-8")
    assert page.count('<details class="evidence">') >= len(kept)
    assert (
        "<blockquote>Le banc mesure 1 180 tokens/s pour Kestrel et 950 tokens/s pour Tamaris.</blockquote>"
        in page
    )
    assert "Banc d&#39;essai de juillet : Kestrel et Tamaris — 2026-07-08" in page
