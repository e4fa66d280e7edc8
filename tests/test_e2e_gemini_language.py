"""Issue 36 item 4 through the real google-genai SDK against the fake Gemini server: the request's
language is a hard criterion of the grid. A writer and a reviser that answer in English a French
request (schema-valid, every citation and section right, the critic's scores perfect) give a
dossier that is never validated; the same night answered in French is validated (the control: the
only difference is the language)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import read_json, write_corpus
from testkit.gemini_script import gemini_responder
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_dossier_written_in_another_language_than_the_request_is_never_validated(
    language: str, server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    server.responder = gemini_responder(language=language)
    corpus = write_corpus(tmp_path / "corpus")
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    folder = Path(state.result())
    review = read_json(folder / "review.json")
    codes = [a["code"] for a in read_json(folder / "alerts.json")]
    report = (folder / "report.md").read_text(encoding="utf-8")
    if language == "fr":
        assert review["validated"] is True, review["rounds"][-1]["instructions"]
        assert "review.not_validated" not in codes
        return
    assert "Kestrel leads on the throughput" in report  # the English answer was kept (alerted)…
    assert "write.foreign_language" in codes
    assert review["validated"] is False  # …but never validated,
    assert "review.not_validated" in codes
    rounds = review["rounds"]
    assert len(rounds) > 1  # the reviser was asked to rewrite it,
    assert all(not r["valid"] for r in rounds)  # and no round passed the grid,
    # for its language alone: the critic scored every criterion 5/5.
    assert all(set(r["scores"].values()) == {5} for r in rounds)
    assert all(
        any(i.startswith("Langue : le dossier est rédigé en « en »") for i in r["instructions"])
        for r in rounds
    )
