"""Issue 37 through the real google-genai SDK against the fake Gemini server: what is read is decided
by the documents' text. A planner that excludes everything, places everything, invents ids or
proposes one sub-task gets the same documents read as the offline engine's plan of the same corpus
(code's own proposal stands in for a plan with nothing to honour, veille.steps.plan_screen) and as a
sensible planner; homonym and injection documents stay out; a planner's search terms reach the axes.
The scripted planner's own exclusion (doc-07) gives way where the text supports reading it, and is
said in plan.json; the homonyms it used to read by their words (spared from code's screen) stay out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.fake_gemini import FakeGemini, Reply
from testkit.flowkit import AXES as FLOW_AXES
from tests.gemini_env import use_fake_gemini
from veille.backends import build_client
from veille.corpus.request import load_request
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.catalogue import planner_catalogue, text_relevance, with_texts
from veille.steps.plan import make_plan
from veille.steps.plan_reading import read_by_text
from veille.steps.plan_settle import settle_plan
from veille.store.ingest import ingest_corpus
from veille.store.readers import fetch_documents, read_catalogue

CORPORA = Path(__file__).resolve().parent / "corpora"
CORPUS = CORPORA / "passerelles-api-en"
# Corpora whose off-topic documents (traps.yaml) are homonyms or injections naming a compared option:
# a plan with nothing to honour used to read them (code overruled its exclusions wholesale).
WITH_HOMONYMS = (
    "bases-vectorielles",
    "capteurs-co2",
    "clients-http",
    "passerelles-api-en",
    "pompes-chaleur",
    "visio-salles",
)


def _read(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    answer: Callable[[list[str]], dict[str, Any]],
    corpus: Path = CORPUS,
    settle: bool = True,
) -> Any:
    """The plan after make_plan and read_by_text, the planner answering ``answer(catalogue ids)``."""
    with FakeGemini() as fake:
        use_fake_gemini(monkeypatch, fake, tmp_path / "wh")
        settings = Settings.from_params(corpus=str(corpus), backend="gemini", use_cache=False)
        ingest_corpus(settings.corpus_dir, settings.database, strict=True)
        listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
        shown = planner_catalogue(load_request(corpus), listing.entries, settings)
        ids = [e.id for e in shown.data.catalogue]
        fake.responder = lambda body, model: Reply.json(answer(ids), model_version=model)
        with build_client(settings, run_id=new_run_id()) as client:
            text = text_relevance(shown, settings.database)
            outcome = make_plan(client, shown.data, text=text)
        bodies = {d.id: d.body for d in fetch_documents(settings.database, ids)}
        if not settle:  # the interim reading: request terms and the planner's search terms
            return read_by_text(outcome, shown.data, bodies).plan
        settled = settle_plan(outcome, shown.data, bodies, authority_file=settings.authority_file, text=text)
        return settled.plan


def _offline(tmp_path: Path, corpus: Path) -> Any:
    """The offline backend's plan of ``corpus``, as the flow's plan step makes it."""
    settings = Settings.from_params(
        corpus=str(corpus), backend="offline", use_cache=False, warehouse=str(tmp_path / "wh")
    )
    ingest_corpus(settings.corpus_dir, settings.database, strict=True)
    listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
    shown = with_texts(planner_catalogue(load_request(corpus), listing.entries, settings), settings.database)
    with build_client(settings, run_id=new_run_id()) as client:
        text = text_relevance(shown, settings.database)
        outcome = make_plan(client, shown.data, text=text)
    assert shown.data.texts is not None
    settled = settle_plan(
        outcome, shown.data, shown.data.texts, authority_file=settings.authority_file, text=text
    )
    return settled.plan


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
@pytest.mark.parametrize("corpus", WITH_HOMONYMS)
def test_a_planner_with_nothing_to_honour_reads_what_the_offline_plan_reads(
    corpus: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = CORPORA / corpus
    offline = _used(_offline(tmp_path / "offline", folder))
    traps = yaml.safe_load((folder / "traps.yaml").read_text(encoding="utf-8"))
    off_topic = set(traps["off_topic"]) | set(traps["injection"])
    for name, planner in sorted(PLANNERS.items()):
        plan = _read(monkeypatch, tmp_path / name.replace(" ", "-"), planner, folder)
        used = _used(plan)
        # Code's own proposal stood in: what the offline plan reads, nothing less; more only where
        # the document's own words carry the request's subject (code's screen alone never takes
        # those out), so no homonym or injection is placed by code merely for naming an option.
        spared = set(plan.reading.get("screen", {}).get("spared", []))
        assert offline <= used, (name, sorted(offline - used))
        assert used - offline <= spared, (name, sorted(used - offline - spared))
        assert not (used & off_topic) - offline - spared, (name, sorted(used & off_topic))


@pytest.mark.slow
def test_the_planners_search_terms_reach_the_axes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def answer(ids: list[str]) -> dict[str, Any]:
        plan = _sensible(ids)
        plan["sub_tasks"][0]["search_terms"] = ["throughput", "p99 latency"]
        return plan

    plan = _read(monkeypatch, tmp_path, answer, settle=False)
    terms = [t for axis in plan.reading["axes"] for t in axis["terms"]]
    assert "throughput" in terms and "p99 latency" in terms
    assert any("throughput" in st.search_terms for st in plan.sub_tasks)


def _script_planner(ids: list[str]) -> dict[str, Any]:
    """testkit/gemini_script.py's planner: the flowkit corpus's sub-tasks, doc-07 explicitly excluded
    (a plan reading most of what the text asks for on these corpora: its exclusions are honoured)."""
    return {
        "sub_tasks": [
            {"id": f"st-{i}", "question": q, "doc_ids": d} for i, (q, d) in enumerate(FLOW_AXES, 1)
        ],
        "excluded": ["doc-07"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["capteurs-co2", "streaming-en"])
def test_a_planners_exclusion_the_text_contradicts_is_overruled_and_said(
    corpus: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """doc-07 is on topic in these corpora (its text carries the request's subject and a passage
    relevant to an axis): read whatever the planner said, the override said in plan.json."""
    plan = _read(monkeypatch, tmp_path, _script_planner, CORPORA / corpus)
    assert "doc-07" in _used(plan)
    assert "planificateur" in plan.reading["overruled"]["doc-07"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "corpus", ["bases-vectorielles", "passerelles-api-en", "traduction-auto", "visio-salles"]
)
def test_a_homonym_is_not_read_on_the_scripted_planners_path(
    corpus: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A homonym naming a compared option (a crèche, a sailing line, a board game, a headland) used to
    be spared from code's screen by its words; its other words are not the comparison's."""
    folder = CORPORA / corpus
    traps = yaml.safe_load((folder / "traps.yaml").read_text(encoding="utf-8"))
    plan = _read(monkeypatch, tmp_path, _script_planner, folder)
    assert not _used(plan) & set(traps["off_topic"]), sorted(_used(plan) & set(traps["off_topic"]))
    assert not set(plan.reading["overruled"]) & set(traps["off_topic"])
