"""The offline planner reads the documents' text; an LLM planner still sees the catalogue only.

``PlannerInput.texts`` carries the bodies of the catalogue documents for a planner that pays no
token for them (a free backend: ``veille.steps.catalogue.planner_reads_texts``). The prompt never
renders them, the plan's reuse basis ignores them, and on the engine's side the text only adds
documents to what the catalogue lines keep, never a document that uses no word of the request's
title in its text (a name clash).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.backends import build_backend
from veille.corpus.request import load_request
from veille.models.base import ModelDefaults
from veille.offline.authority import AuthorityRanking
from veille.offline.planner import plan
from veille.roles.planner import CatalogueEntry, PlannerInput, build_prompt
from veille.settings import Settings
from veille.steps.catalogue import planner_catalogue, planner_reads_texts, planner_tokens, with_texts
from veille.steps.plan_reuse import planner_basis
from veille.store.ingest import ingest_corpus
from veille.store.readers import fetch_documents, read_catalogue

ROOT = Path(__file__).resolve().parents[1]
CORPORA = sorted(p for p in (ROOT / "tests" / "corpora").iterdir() if (p / "request.md").is_file())

ENTRIES = [
    CatalogueEntry(id=f"doc-{n:02d}", date="2026-01-0{n}", source_type="forum", title=f"Titre {n}")
    for n in range(1, 5)
]
BASE = PlannerInput(
    request_title="Bases de données", request="Que choisir ?", catalogue=ENTRIES, max_subtasks=4, max_docs=6
)


@settings(max_examples=50, deadline=None)
@given(bodies=st.lists(st.text(min_size=1, max_size=200), min_size=len(ENTRIES), max_size=len(ENTRIES)))
def test_the_prompt_and_the_reuse_basis_never_carry_the_texts(bodies: list[str]) -> None:
    with_bodies = BASE.model_copy(update={"texts": {e.id: b for e, b in zip(ENTRIES, bodies, strict=True)}})
    assert build_prompt(with_bodies) == build_prompt(BASE)
    assert planner_tokens(with_bodies) == planner_tokens(BASE)
    assert planner_basis(with_bodies, "m") == planner_basis(BASE, "m")


def test_only_a_free_backend_reads_the_texts() -> None:
    offline = Settings.from_params(backend="offline")
    assert planner_reads_texts(build_backend(offline))
    # Any backend that does not declare itself free plans on the catalogue alone (Gemini, openai).
    assert not planner_reads_texts(ModelDefaults())  # type: ignore[arg-type]
    from veille.models.openai_compat import OpenAICompatModel

    assert not planner_reads_texts(OpenAICompatModel(offline))


def _prepared(corpus: Path, tmp: str) -> PlannerInput:
    s = Settings.from_params(corpus=str(corpus), backend="offline", use_cache=False, warehouse=tmp)
    ingest_corpus(s.corpus_dir, s.database, max_doc_bytes=s.max_doc_bytes)
    listing = read_catalogue(s.database, with_summaries=s.planner_sees_summaries)
    shown = with_texts(planner_catalogue(load_request(corpus), listing.entries, s), s.database)
    ids = [e.id for e in shown.data.catalogue]
    assert list(shown.data.texts) == ids  # every document shown, read from the store
    assert [d.body for d in fetch_documents(s.database, ids)] == list(shown.data.texts.values())
    return shown.data


@pytest.mark.parametrize("corpus", CORPORA, ids=[p.name for p in CORPORA])
def test_the_text_only_adds_documents(corpus: Path, authority: AuthorityRanking) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = _prepared(corpus, tmp)
    framing = authority.framing()
    without = plan(data.model_copy(update={"texts": {}}), framing_types=framing)
    with_bodies = plan(data, framing_types=framing, bodies=data.texts)
    placed = {i for s in with_bodies.sub_tasks for i in s.doc_ids}
    assert {i for s in without.sub_tasks for i in s.doc_ids} <= placed
    assert set(with_bodies.excluded) <= set(without.excluded)
