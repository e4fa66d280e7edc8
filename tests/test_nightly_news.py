"""Two nights of the watch (issue 13, "Done when"): a copy of the bundled corpus, a loopback feed
that gains one item between the nights, the flow through the real google-genai SDK against the
fake Gemini server. The second report says what is new and cites the new item; the second night
asks no planner and at most two analysts; the warehouse keeps the document's history."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from testkit.fake_gemini import FakeGemini, Reply
from testkit.gemini_script import gemini_responder, role_of
from tests.collectkit import rss, web, write_sources
from veille.collect.write import document_id
from veille.dossier import NEWS_SECTION
from veille.textstats import split_sections
from veille.warehouse.queries import query

__all__ = ["web"]

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.slow]

BUNDLED = Path(__file__).resolve().parents[1] / "corpus"
ITEM = {
    "title": "Kestrel 2.1 annonce 2 900 tokens/s par GPU",
    "description": "Kestrel 2.1 atteint 2 900 tokens/s par GPU sur la charge de référence de l'éditeur.",
    "pubDate": "Tue, 01 Dec 2026 08:00:00 GMT",
}


def _catalogue_planner(writer: Any = None) -> Any:
    """The scripted answers of tests/gemini_script, with a planner over whatever catalogue it is
    shown: its ids in groups of six, one sub-task each (the bundled corpus is not the flowkit one);
    ``writer``: gemini_responder's."""
    base = gemini_responder(writer=writer)

    def respond(body: dict[str, Any], model: str) -> Reply:
        if role_of(body) != "planner":
            return base(body, model)
        prompt = "".join(p.get("text", "") for p in body["contents"][0]["parts"])
        ids = re.findall(r"^([\w-]+) \| \d{4}-\d{2}-\d{2} \|", prompt, flags=re.MULTILINE)
        groups = [ids[i : i + 6] for i in range(0, min(len(ids), 36), 6)]
        plan = {
            "sub_tasks": [
                {"id": f"st-{n}", "question": f"Que disent les documents {g[0]} à {g[-1]} ?", "doc_ids": g}
                for n, g in enumerate(groups, 1)
            ],
            "excluded": ids[36:],
        }
        return Reply.json(plan, prompt_tokens=len(prompt) // 4, output_tokens=50, model_version=model)

    return respond


@pytest.fixture()
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as fake:
        fake.responder = _catalogue_planner()
        yield fake


def test_two_nights_the_second_says_what_is_new_and_reads_only_it(
    tmp_path: Path, web: HTTPServer, gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.flows.veille import veille_flow

    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED, corpus)
    items: list[dict[str, str]] = []  # the feed: empty the first night
    web.expect_request("/feed.xml").respond_with_handler(
        lambda _request: Response(rss(items), content_type="application/rss+xml")
    )
    page = web.url_for("/kestrel-2-1")
    web.expect_request("/kestrel-2-1").respond_with_handler(_page)
    write_sources(
        corpus, [{"name": "kestrel", "kind": "feed", "url": web.url_for("/feed.xml"), "source_type": "blog"}]
    )
    warehouse = tmp_path / "warehouse"
    for name, value in {
        "GEMINI_API_KEY": "test-key",
        "VEILLE_WAREHOUSE_DIR": str(warehouse),
        "VEILLE_GEMINI_BASE_URL": gemini.base_url,
        "VEILLE_GEMINI_API_VERSION": "v1beta",
        "VEILLE_HTTP_RETRY_INITIAL_DELAY_S": "0.01",
    }.items():
        monkeypatch.setenv(name, value)

    first = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert first.is_completed(), first.message
    first_report = (Path(first.result()) / "report.md").read_text(encoding="utf-8")
    assert "Premier dossier de veille" in split_sections(first_report)[NEWS_SECTION]
    night_one = [role_of(r.body) for r in gemini.requests]
    assert night_one.count("planner") == 1 and night_one.count("analyst") == 6

    items.append({**ITEM, "link": page})
    before = len(gemini.requests)
    second = veille_flow(corpus=str(corpus), backend="gemini", return_state=True)
    assert second.is_completed(), second.message
    folder = Path(second.result())
    night_two = [role_of(r.body) for r in gemini.requests[before:]]
    analysts = night_two.count("analyst") + night_two.count("analyst_update")  # full or incremental
    assert night_two.count("planner") == 0 and 1 <= analysts <= 2, night_two

    new_id = document_id(page)
    report = (folder / "report.md").read_text(encoding="utf-8")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    number = next(s["number"] for s in sources if s["id"] == new_id)
    heading = next(h for h in split_sections(report) if h.startswith(NEWS_SECTION))
    assert heading.startswith(f"{NEWS_SECTION} depuis le ")
    news = split_sections(report)[heading]
    assert f"Nouveau : « {ITEM['title']}" in news and f"[{number}]" in news
    assert "1 document(s) nouveau(x), 0 modifié(s), 0 retiré(s)" in news
    codes = [a["code"] for a in json.loads((folder / "alerts.json").read_text(encoding="utf-8"))]
    assert "plan.reused" in codes

    _, rows = query(
        warehouse / "parquet",
        "SELECT first_seen_run, runs, cited_runs FROM document_history WHERE doc_id = ?",
        [new_id],
    )
    assert rows == [(folder.name, 1, 1)]
    _, rows = query(warehouse / "parquet", "SELECT runs FROM document_history WHERE doc_id = 'doc-01'")
    assert rows == [(2,)]


def _page(_request: Request) -> Response:
    html = (
        "<html><head><title>Kestrel 2.1</title></head><body><article><h1>Kestrel 2.1</h1>"
        "<p>Kestrel 2.1 atteint 2 900 tokens/s par GPU sur la charge de référence de l'éditeur, "
        "mesurés sur douze GPU avec des requêtes de 2 000 tokens en entrée.</p>"
        "<p>La latence au 99e centile baisse de 12 % selon les notes de version.</p></article></body></html>"
    )
    return Response(html, content_type="text/html")
