"""Issue 37 through the real google-genai SDK against the fake Gemini server: what is read is decided
by the documents' text. On a test corpus (French request, English documents), a planner that
excludes everything, places everything, invents ids or proposes one sub-task gets the same documents read as a
sensible planner; a planner's search terms reach the axes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.fake_gemini import FakeGemini, Reply
from tests.gemini_env import use_fake_gemini
from veille.backends import build_client
from veille.corpus.request import load_request
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.catalogue import planner_catalogue
from veille.steps.plan import make_plan
from veille.steps.plan_reading import read_by_text
from veille.store.ingest import ingest_corpus
from veille.store.readers import fetch_documents, read_catalogue

CORPUS = Path(__file__).resolve().parent / "corpora" / "passerelles-api-en"


def _read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answer: Callable[[list[str]], dict[str, Any]]
) -> Any:
    """The plan after make_plan and read_by_text, the planner answering ``answer(catalogue ids)``."""
    with FakeGemini() as fake:
        use_fake_gemini(monkeypatch, fake, tmp_path / "wh")
        settings = Settings.from_params(corpus=str(CORPUS), backend="gemini", use_cache=False)
        ingest_corpus(settings.corpus_dir, settings.database, strict=True)
        listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
        shown = planner_catalogue(load_request(CORPUS), listing.entries, settings)
        ids = [e.id for e in shown.data.catalogue]
        fake.responder = lambda body, model: Reply.json(answer(ids), model_version=model)
        with build_client(settings, run_id=new_run_id()) as client:
            outcome = make_plan(client, shown.data)
        bodies = {d.id: d.body for d in fetch_documents(settings.database, ids)}
        return read_by_text(outcome, shown.data, bodies).plan


def _sensible(ids: list[str]) -> dict[str, Any]:
    return {
        "sub_tasks": [
            {"id": "st-1", "question": "Latence et débit ?", "doc_ids": ids[:5]},
            {"id": "st-2", "question": "Coût ?", "doc_ids": ids[5:11]},
        ],
        "excluded": [],
    }


PLANNERS: dict[str, Callable[[list[str]], dict[str, Any]]] = {
    "excludes everything": lambda ids: {"sub_tasks": [], "excluded": ids},
    "invents ids": lambda ids: {
        "sub_tasks": [{"id": "st-1", "question": "Tout ?", "doc_ids": ["doc-404", "note-x"]}],
        "excluded": [],
    },
    "places everything": lambda ids: {
        "sub_tasks": [
            {
                "id": f"st-{k + 1}",
                "question": "Que disent ces documents ?",
                "doc_ids": ids[k * 8 : (k + 1) * 8],
            }
            for k in range((len(ids) + 7) // 8)
        ],
        "excluded": [],
    },
    "one sub-task": lambda ids: {
        "sub_tasks": [{"id": "st-1", "question": "Que disent les documents ?", "doc_ids": ids[:8]}],
        "excluded": [],
    },
}


def _used(plan: Any) -> set[str]:
    return {i for st in plan.sub_tasks for i in st.doc_ids}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_a_broken_planner_gets_the_documents_a_sensible_one_gets(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sensible = _read(monkeypatch, tmp_path / "a", _sensible)
    broken = _read(monkeypatch, tmp_path / "b", PLANNERS[name])
    assert _used(broken) == _used(sensible), (name, sorted(_used(broken) ^ _used(sensible)))
    assert sensible.reading["measured"] and broken.reading["measured"]
    # Every axis with documents is read by a branch of its own, whatever sub-tasks were proposed.
    served = set(broken.reading["sub_task_axes"].values())
    assert {a["key"] for a in broken.reading["axes"] if a["documents"]} <= served


@pytest.mark.slow
def test_the_planners_search_terms_reach_the_axes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def answer(ids: list[str]) -> dict[str, Any]:
        plan = _sensible(ids)
        plan["sub_tasks"][0]["search_terms"] = ["throughput", "p99 latency"]
        return plan

    plan = _read(monkeypatch, tmp_path, answer)
    terms = [t for axis in plan.reading["axes"] for t in axis["terms"]]
    assert "throughput" in terms and "p99 latency" in terms
    assert any("throughput" in st.search_terms for st in plan.sub_tasks)
