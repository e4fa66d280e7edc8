"""Issue 37 item 5 through the real google-genai SDK against the fake Gemini server, on the inventory
corpus tests/corpora/services-emploi (public service sheets): whatever the writer writes — here one
key point naming no service, citing the first source only, and a recommendation nobody asked for —
the shipped report has one entry per item read (a key point citing one of its sheets and naming the
service), no « Recommandation » section, and no axis « Aucun constat sourcé »."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini
from testkit.flowkit import dossier_from, read_json
from testkit.gemini_script import gemini_responder
from tests.gemini_env import use_fake_gemini
from veille.corpus.document import parse_document
from veille.dossier import EMPTY_AXIS, RECOMMENDATION_SECTION
from veille.flows.veille import veille_flow
from veille.numbers import read_numbers
from veille.roles.analyst import Finding, Findings

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

CORPUS = Path(__file__).resolve().parent / "corpora" / "services-emploi"
_SOURCE_RE = re.compile(r"^- \[(\d+)\] \*\*([^*]+)\*\*", re.MULTILINE)


def quoting_analyst(prompt: str) -> Findings:
    """Per document shown, its first sentence holding a figure (else its first sentence), verbatim."""
    findings = []
    for doc_id, text in re.findall(r'<document id="([^"]+)"[^>]*>(.*?)</document>', prompt, re.S):
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text) if len(s.strip()) > 20]
        with_figure = [s for s in sentences if any(r.role == "figure" for r in read_numbers(s))]
        chosen = " ".join((with_figure or sentences or [f"Document {doc_id}."])[0].split())[:400]
        findings.append(Finding(statement=chosen, doc_ids=[doc_id]))
    return Findings(findings=findings)


def careless_writer(prompt: str) -> Any:
    """One key point citing source 1, naming no service, and a recommendation (not in its schema)."""
    axes = re.findall(r"^### (st-\d+) \(axe", prompt, flags=re.MULTILINE)
    return dossier_from([1], axes[:1] or ["st-1"])


def _key(text: str) -> str:
    return " ".join(re.sub(r"\W+", " ", text.casefold()).split())


@pytest.fixture()
def server() -> Any:
    with FakeGemini() as fake:
        yield fake


def test_an_inventory_gets_one_entry_per_item_read_whatever_the_writer_wrote(
    server: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "services-emploi"
    shutil.copytree(CORPUS, corpus)
    use_fake_gemini(monkeypatch, server, tmp_path / "warehouse")
    server.responder = gemini_responder(analyst=quoting_analyst, writer=careless_writer)
    state = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert state.is_completed(), state.message
    folder = Path(state.result())
    plan = read_json(folder / "plan.json")
    assert plan["request"]["kind"] == "inventory"
    report = (folder / "report.md").read_text(encoding="utf-8")
    read = {i for st in plan["sub_tasks"] for i in st["doc_ids"]}
    documents = {
        p.stem: parse_document(p, relative_to=corpus / "docs") for p in (corpus / "docs").glob("*.md")
    }
    items: dict[str, list[str]] = {}  # an item is a title of its own; two sheets of one service, one item
    for doc_id in sorted(read):
        if documents[doc_id].origins.get("title") != "file name":
            items.setdefault(documents[doc_id].title, []).append(doc_id)
    assert len(items) >= 10  # the plan reads the on-topic sheets (issue 37 items 2–4)
    numbers = {doc_id: n for n, doc_id in _SOURCE_RE.findall(report)}
    body = report.split("## Points clés", 1)[1].split("\n## ", 1)[0]
    points = [line for line in body.splitlines() if line.startswith("- ")]
    for title, docs in items.items():
        marks = [f"[{numbers[d]}]" for d in docs if d in numbers]
        assert marks, (title, docs)  # each item's sheet is a cited source…
        assert any(_key(title) in _key(p) and any(m in p for m in marks) for p in points), title  # …named
    assert f"## {RECOMMENDATION_SECTION}" not in report  # no choice asked, whatever the writer wrote
    assert EMPTY_AXIS not in report
    codes = [a["code"] for a in read_json(folder / "alerts.json")]
    assert "report.owed_entries" in codes  # the entries the writer left out were code's
