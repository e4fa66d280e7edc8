"""The mixed folder of tests/test_corpus_mixed.py end to end through the real google-genai SDK against
the loopback fake Gemini: the converted PDF, DOCX, HTML and Hugo post reach the analyst as text, the
broken PDF is the one ingest error, and every readable file is in the catalogue."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from tests.test_corpus_mixed import READABLE, mixed_corpus
from veille.flows.veille import veille_flow
from veille.store.readers import fetch_documents, read_catalogue

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

# A passage of each converted file (tests/fixtures/real, SOURCES.md) and the id derived from its path.
READ = {
    "fournisseurs-outline": "Hello, here is some text without a meaning.",  # PDF
    "notes-styles": "Body Text",  # DOCX
    "pages-the-basics": "The first thing you must do is create an",  # HTML
    "blog-hugo-kestrel-2": "Kestrel 2.0 sert 1 180 tokens par seconde",  # Hugo TOML front matter
    "wiki-reunion": "Orvet reste en évaluation jusqu'en juin.",  # Markdown without front matter
}


@pytest.fixture()
def server() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = gemini_responder(
            axes=[
                ("Que disent les documents des fournisseurs ?", ["fournisseurs-outline", "notes-styles"]),
                (
                    "Que disent les pages et notes ?",
                    ["pages-the-basics", "blog-hugo-kestrel-2", "wiki-reunion"],
                ),
            ]
        )
        yield fake


def test_mixed_folder_runs_end_to_end_against_the_fake_gemini(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = mixed_corpus(tmp_path / "corpus")
    mini = Path(__file__).parent / "fixtures" / "mini_corpus"
    shutil.copytree(mini / "docs", corpus / "docs" / "veille")
    shutil.copy(mini / "request.md", corpus / "request.md")
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")

    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())

    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    errors = [
        (a["code"], a["subject"])
        for a in alerts
        if a["severity"] == "error" and a["code"].startswith("ingest.")
    ]
    assert errors == [("ingest.invalid_document", "docs/fournisseurs/broken.pdf")]
    assert not [a for a in alerts if a["code"] == "injection.suspected"], alerts
    assert len(read_catalogue(tmp_path / "warehouse" / "veille.duckdb").entries) == READABLE + 4

    # Each planned file reached an analyst as its converted text: no markup, its passage there.
    blocks: dict[str, str] = {}
    for request in server.requests:
        if role_of(request.body) == "analyst":
            prompt = "".join(part.get("text", "") for part in request.body["contents"][0]["parts"])
            for doc_id, text in re.findall(
                r'<document id="([^"]+)"[^>]*>(.*?)</document>', prompt, re.DOTALL
            ):
                blocks[doc_id] = text
    # The real PDF, DOCX and HTML fixtures say nothing of inference engines: the planner placed them,
    # code removed them as off topic (issue 23, item 2); their converted text is in the store.
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    off_topic = {e["id"] for e in plan["exclusions"] if e["reason"] == "off_topic"}
    assert {"blog-hugo-kestrel-2", "wiki-reunion"} <= set(blocks) and not off_topic & set(blocks)
    assert set(READ) <= set(blocks) | off_topic, sorted(blocks)
    stored = {d.id: d.body for d in fetch_documents(tmp_path / "warehouse" / "veille.duckdb", list(READ))}
    for doc_id, passage in READ.items():
        text = blocks.get(doc_id, stored[doc_id])
        assert passage in text, (doc_id, text[:300])
        assert "<html" not in text.lower() and "+++" not in text
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Sources" in report
