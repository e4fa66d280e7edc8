"""Issue 23 item 5 through the real google-genai SDK against the fake Gemini server: a document's
sentence in another language than the request's, shown verbatim in the dossier, is marked as a
quotation with its language, « … » (en), as the offline writer marks it; a sentence in the request's
language is left as it is. Both ways a model's path shows a document's words: the writer quoting an
analyst's finding, and the dossier code renders from the findings when the writer fails. Standing
alone as its sentence, such a quotation is then an instruction of the arbiter (issue 36)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import DOCS, read_json, write_corpus
from testkit.gemini_script import findings_dossier, gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.flows.veille import veille_flow
from veille.roles.analyst import Finding, Findings
from veille.textstats import split_sections

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

# doc-02 is an English benchmark report (the request is French); the analyst copies its sentence.
ENGLISH = "The July benchmark measured 1 180 tokens per second for Kestrel under our production load"
FRENCH = "Kestrel annonce 1 400 tokens/s par GPU sur des invites courtes"  # doc-01 says so (the verifier)
ENGLISH_DOCS = [(i, d, t, title, f"{ENGLISH}." if i == "doc-02" else body) for i, d, t, title, body in DOCS]


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        yield fake


def _responder(writer_fails: bool) -> Any:
    others = gemini_responder(writer=findings_dossier)

    def respond(body: dict[str, Any], model: str) -> Reply:
        role = role_of(body)
        prompt = "".join(p.get("text", "") for p in body["contents"][0]["parts"])
        if role == "analyst" and '<document id="doc-02"' in prompt:
            findings = Findings(
                findings=[
                    Finding(statement=f"{FRENCH}.", doc_ids=["doc-01"]),
                    Finding(statement=f"{ENGLISH}.", doc_ids=["doc-02"]),
                ]
            )
            return Reply.json(findings, prompt_tokens=500, output_tokens=50)
        if role == "writer" and writer_fails:
            return Reply.max_tokens('{"synthesis": [{"text": "Kestrel mè')
        return others(body, model)

    return respond


@pytest.mark.parametrize("writer_fails", [False, True], ids=["writer-quotes", "rendered-by-code"])
def test_an_english_document_sentence_is_marked_as_a_quote_a_french_one_is_not(
    writer_fails: bool, server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    server.responder = _responder(writer_fails)
    corpus = write_corpus(tmp_path / "corpus", ENGLISH_DOCS)
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    folder = Path(state.result())
    report = (folder / "report.md").read_text(encoding="utf-8")
    first = read_json(folder / "review.json")["rounds"][0]  # the written draft, as the arbiter read it
    key_points = split_sections(first["draft"])["Points clés"]

    assert f"« {ENGLISH} » (en)" in key_points, key_points
    assert FRENCH in key_points and f"« {FRENCH}" not in first["draft"]
    # Marked, but standing alone as its sentence: the request's language is a hard criterion
    # (issue 36), so the arbiter asks for a sentence saying who says it and when.
    assert any(
        i.startswith(f"Citation sans phrase qui l'introduit : « {ENGLISH[:20]}")
        for i in first["instructions"]
    )
    for text in (first["draft"], report):  # the written draft and the shipped report
        assert text.count(ENGLISH) == text.count(f"« {ENGLISH} » (en)")  # nowhere unmarked
        assert "(fr)" not in text  # the request's own language is never marked
