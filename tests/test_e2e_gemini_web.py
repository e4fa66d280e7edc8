"""``--web`` end to end through the real google-genai SDK against the fake Gemini server (issue 14).

Done when: the report's Sources list numbers each distinct page once, every web citation resolves to
a grounding chunk of that run, grounding costs are in the journal and the warehouse, no URL is
fetched, and the same run without ``--web`` is unchanged (report.md and sources.json as written by
the code before web research existed: tests/fixtures/web/, captured from commits 7b8529d and
268d1cb, identical).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import write_corpus
from testkit.gemini_script import gemini_responder, role_of
from tests.gemini_env import use_fake_gemini
from veille.citations import cited_numbers, invalid_citations
from veille.dossier import without_news
from veille.flows.veille import veille_flow
from veille.journal import read_journal
from veille.roles.writer import SourceRef
from veille.steps.research import web_source_id
from veille.textstats import split_sections
from veille.warehouse.queries import query

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

FIXTURES = Path(__file__).parent / "fixtures" / "web"
CANARY = "AIza-web-canary-0123456789-never-logged"


class _Trap:
    """A loopback HTTP server the chunk URIs point to: any request to it is a URL fetched by code."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        trap = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                trap.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_HEAD = do_POST = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, page: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{page}"


@pytest.fixture()
def trap() -> Iterator[_Trap]:
    served = _Trap()
    served.thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


def _researcher(trap: _Trap) -> tuple[Any, set[str]]:
    """Grounded answers per sub-task: page B is found by st-1 and st-2, page A twice by st-1, a chunk
    of st-2 has no URI, st-3's answer comes without metadata."""
    a, b, c = trap.url("kestrel-3-4"), trap.url("tarifs"), trap.url("support")
    answers = {
        "st-1": Reply.grounded(
            "Kestrel 3.4 atteint 1 420 tokens/s par GPU. Kestrel publie sa feuille de route 2027. "
            "Une rumeur prête à Tamaris un rachat.",
            chunks=[
                {"uri": a, "title": "exemple.org"},
                {"uri": a, "title": "exemple.org"},
                {"uri": b, "title": "Tarifs"},
            ],
            supports=[
                ("Kestrel 3.4 atteint 1 420 tokens/s par GPU.", [0, 1]),
                ("Kestrel publie sa feuille de route 2027.", [2]),
            ],
            queries=["kestrel 3.4 débit", "kestrel feuille de route"],
        ),
        "st-2": Reply.grounded(
            "La licence Tamaris coûte 9 500 EUR par GPU. Le support Tamaris coûte 1 200 EUR par an.",
            chunks=[
                {"uri": b, "title": "Tarifs"},
                {"uri": c, "title": "support.exemple.com"},
                {"title": "sans lien"},
            ],
            supports=[
                ("La licence Tamaris coûte 9 500 EUR par GPU.", [0]),
                ("Le support Tamaris coûte 1 200 EUR par an.", [1, 2]),
            ],
            queries=["tamaris licence prix"],
        ),
        "st-3": Reply.grounded("Aucune information récente sur Orvet."),
    }

    def respond(prompt: str) -> Reply:
        subtask = re.search(r"Question \((st-\d+)\)", prompt)
        assert subtask is not None, prompt
        return answers[subtask.group(1)]

    return respond, {a, b, c}


def _env(monkeypatch: pytest.MonkeyPatch, server: FakeGemini, warehouse: Path) -> None:
    use_fake_gemini(monkeypatch, server, warehouse, key=CANARY)


def _sources_section(report: str) -> list[str]:
    return [line for line in split_sections(report)["Sources"].splitlines() if line.startswith("- [")]


def test_a_web_run_numbers_each_page_once_and_cites_chunks_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trap: _Trap
) -> None:
    respond, pages = _researcher(trap)
    with FakeGemini() as server:
        server.responder = gemini_responder(researcher=respond)
        _env(monkeypatch, server, tmp_path / "warehouse")
        state = veille_flow(
            corpus=str(write_corpus(tmp_path / "corpus")), backend="gemini", web=True, return_state=True
        )
        assert state.is_completed(), state.message
        run_dir = Path(state.result())
        grounded = [r for r in server.requests if role_of(r.body) == "researcher"]
        assert len(grounded) == 3 and all(r.body["tools"] == [{"googleSearch": {}}] for r in grounded)
        assert all("tools" not in r.body for r in server.requests if r not in grounded)
    assert trap.hits == []  # URLs are text: never requested

    sources = [SourceRef.model_validate(s) for s in json.loads((run_dir / "sources.json").read_text("utf-8"))]
    web = [s for s in sources if s.kind == "web"]
    assert sorted(s.url for s in web if s.url) == sorted(pages)  # A, B, C: each distinct page once
    assert all(s.id == web_source_id(s.url or "") and s.retrieved_at for s in web)
    assert {s.kind for s in sources} == {"corpus", "web"}
    assert [s.number for s in sources] == list(range(1, len(sources) + 1))

    report = (run_dir / "report.md").read_text(encoding="utf-8")
    listed = _sources_section(report)
    assert len(listed) == len(sources)
    for url in pages:
        assert sum(f"<{url}>" in line for line in listed) == 1, url
    body = report.split("\n## Sources", 1)[0]
    assert invalid_citations(body, sources) == []
    by_number = {s.number: s for s in sources}
    cited_web = [by_number[n] for n in cited_numbers(body) if by_number[n].kind == "web"]
    assert {s.url for s in cited_web} == pages  # every web citation resolves to a chunk of the run

    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    st1 = findings["st-1"]["web"]
    assert [(f["chunks"], f["source_ids"]) for f in st1["findings"]] == [
        ([0, 1], [web_source_id(trap.url("kestrel-3-4"))]),
        ([2], [web_source_id(trap.url("tarifs"))]),
    ]
    assert findings["st-3"]["web"]["findings"] == []
    alerts = {a["code"] for a in json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))}
    assert {"web.unsupported_claim", "web.chunk_without_uri", "web.no_grounding"} <= alerts

    calls = [c for c in read_journal(run_dir / "calls.jsonl") if c.role == "researcher"]
    assert sorted(c.search_queries for c in calls) == [0, 1, 2]
    assert sum(c.grounding_cost_usd or 0 for c in calls) == pytest.approx(3 * 14.0 / 1000)
    assert all((c.cost_usd or 0) > (c.grounding_cost_usd or 0) >= 0 for c in calls)

    parquet = tmp_path / "warehouse" / "parquet"
    _, rows = query(
        parquet,
        "SELECT sum(search_queries), sum(grounding_cost_usd) FROM llm_calls WHERE role = 'researcher'",
    )
    assert rows[0][0] == 3 and rows[0][1] == pytest.approx(0.042)
    _, rows = query(
        parquet, "SELECT kind, count(*), count(DISTINCT url) FROM sources GROUP BY kind ORDER BY kind"
    )
    assert rows == [("corpus", len(sources) - 3, 0), ("web", 3, 3)]
    for path in (tmp_path / "warehouse").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_the_same_run_without_web_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeGemini() as server:
        server.responder = gemini_responder()  # a grounded request would be refused (400)
        _env(monkeypatch, server, tmp_path / "warehouse")
        state = veille_flow(
            corpus=str(write_corpus(tmp_path / "corpus")), backend="gemini", return_state=True
        )
        assert state.is_completed(), state.message
        assert all("tools" not in r.body and role_of(r.body) != "researcher" for r in server.requests)
    run_dir = Path(state.result())
    report = (run_dir / "report.md").read_text("utf-8")
    # The dossier as before the web research existed; the first night's news section is code's.
    assert without_news(report) == (FIXTURES / "no_web_report.md").read_text("utf-8")
    assert "\n## Nouveautés\n\nPremier dossier de veille" in report
    before = json.loads((FIXTURES / "no_web_sources.json").read_text("utf-8"))
    after = json.loads((run_dir / "sources.json").read_text("utf-8"))
    # The same entries; only the new fields are added, with their corpus values.
    assert [{k: v for k, v in s.items() if k in before[0]} for s in after] == before
    assert all(s["kind"] == "corpus" and s["domain"] is None and s["retrieved_at"] is None for s in after)
    assert all(
        "web" not in branch for branch in json.loads((run_dir / "findings.json").read_text("utf-8")).values()
    )
    assert all(
        c.search_queries == 0 and c.grounding_cost_usd == 0 for c in read_journal(run_dir / "calls.jsonl")
    )
