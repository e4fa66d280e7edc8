"""The offline planner on every test corpus under tests/corpora/ (and a generated 200-document one).

Each corpus goes through what the flow does before the analysts, without Prefect: strict ingestion
into a temporary DuckDB -> catalogue -> screen -> catalogue step (token budget, duplicates,
shortlist) -> make_plan over a real ModelClient whose backend is the offline engine. The checks are
structural and come from the corpus's own reference/facts.yaml and traps.yaml, never from literals:

- every catalogue document is accounted for (placed, excluded, or left out before planning);
- every ``keep`` document is placed, framing documents included;
- off-topic documents (name clashes included) are not placed;
- each contradiction's documents, and each group's documents shown to the planner, are in one sub-task;
- the screen flags the injection documents;
- the sub-tasks' questions use no word found only in off-topic documents (labels come from the request).

One corpus also runs through the rest of the library pipeline (analysts, writer, review): every
section is there and no citation is orphaned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.corpora.generate import generate_corpus
from veille.citations import invalid_citations
from veille.corpus.reference import load_reference
from veille.corpus.request import load_request
from veille.models.factory import build_client
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.catalogue import PlannerCatalogue, planner_catalogue
from veille.steps.plan import PlanOutcome, make_plan
from veille.steps.screen import screen_corpus
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue
from veille.textstats import MODEL_SECTIONS, split_sections, words

CORPORA_DIR = Path(__file__).resolve().parent / "corpora"
CORPORA = sorted(p for p in CORPORA_DIR.iterdir() if (p / "request.md").is_file())
GENERATED = "generated-200"


@dataclass
class Planned:
    corpus: Path
    prepared: PlannerCatalogue
    outcome: PlanOutcome
    flagged: set[str]
    traps: dict[str, Any]
    facts: Any


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_corpus(tmp_path_factory.mktemp("generated") / "corpus", n_docs=200, seed=7)


def _plan_corpus(corpus: Path, warehouse: Path) -> Planned:
    settings = Settings.from_params(
        corpus=str(corpus), backend="offline", use_cache=False, warehouse=str(warehouse)
    )
    report = ingest_corpus(settings.corpus_dir, settings.database, strict=True)
    assert report.skipped == 0, report.alerts
    listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
    flagged = {str(a.subject) for a in screen_corpus(settings.database, listing.entries)}
    prepared = planner_catalogue(load_request(corpus), listing.entries, settings)
    with build_client(settings, run_id=new_run_id()) as client:
        assert client.backend == "offline"
        outcome = make_plan(client, prepared.data)
    traps = yaml.safe_load((corpus / "traps.yaml").read_text(encoding="utf-8")) or {}
    reference = load_reference(corpus)
    assert reference is not None
    return Planned(corpus, prepared, outcome, flagged, traps, reference.facts)


@pytest.fixture(params=[*CORPORA, GENERATED], ids=[*(p.name for p in CORPORA), GENERATED], scope="module")
def planned(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    corpus = request.getfixturevalue("generated") if request.param == GENERATED else request.param
    yield _plan_corpus(corpus, tmp_path_factory.mktemp("warehouse"))


def _scopes(p: Planned) -> list[set[str]]:
    return [set(st.doc_ids) for st in p.outcome.plan.sub_tasks]


def _placed(p: Planned) -> set[str]:
    return set().union(*_scopes(p))


def test_every_document_is_accounted_for(planned: Planned) -> None:
    p = planned
    shown = {e.id for e in p.prepared.data.catalogue}
    left_out = {o.id for o in p.prepared.left_out}
    assert not shown & left_out
    assert shown | left_out == {path.stem for path in (p.corpus / "docs").glob("*.md")}
    assert _placed(p) | set(p.outcome.plan.excluded) == shown
    assert p.prepared.tokens <= p.prepared.budget


def test_keep_and_framing_documents_are_placed(planned: Planned) -> None:
    placed = _placed(planned)
    assert set(planned.facts.keep) <= placed, sorted(set(planned.facts.keep) - placed)
    framing = set(planned.traps.get("framing") or [])
    assert framing <= placed, sorted(framing - placed)


def test_off_topic_documents_are_not_placed(planned: Planned) -> None:
    off_topic = set(planned.facts.exclude) | set(planned.traps.get("off_topic") or [])
    off_topic |= set(planned.traps.get("name_clash") or [])
    assert not off_topic & _placed(planned), sorted(off_topic & _placed(planned))


def test_contradictions_and_groups_are_read_together(planned: Planned) -> None:
    scopes = _scopes(planned)
    for c in planned.facts.contradictions:
        assert any(set(c.docs) <= s for s in scopes), (c.id, c.docs, scopes)
    shown = {e.id for e in planned.prepared.data.catalogue}
    for group in planned.facts.groups:
        members = set(group) & shown  # a collapsed copy is read through its line's document
        assert any(members <= s for s in scopes), (group, scopes)


def test_injections_are_flagged(planned: Planned) -> None:
    injection = set(planned.traps.get("injection") or [])
    assert injection <= planned.flagged, sorted(injection - planned.flagged)


def test_questions_use_no_off_topic_word(planned: Planned) -> None:
    p = planned
    entries = {e.id: e for e in p.prepared.data.catalogue}
    placed = _placed(p)

    def vocabulary(ids: set[str]) -> set[str]:
        return {
            w for i in ids if i in entries for w in words(f"{entries[i].title} {entries[i].summary or ''}")
        }

    request = load_request(p.corpus)
    allowed = vocabulary(placed) | set(words(f"{request.title} {request.text}"))
    stray = vocabulary(set(p.outcome.plan.excluded)) - allowed
    for st in p.outcome.plan.sub_tasks:
        assert not set(words(st.question)) & stray, (st.question, sorted(set(words(st.question)) & stray))


def test_a_new_corpus_runs_to_a_complete_report() -> None:
    """The library pipeline after the plan (analysts, writer, review) on a corpus whose request states
    its axes in a sentence: every section, no orphan citation, every listed source cited."""
    from tests.test_offline_engine import run_bundled_pipeline

    out = run_bundled_pipeline(CORPORA_DIR / "bases-vectorielles")
    report = out["report"]
    sections = split_sections(report)
    for name in (*MODEL_SECTIONS, "Sources"):
        assert sections.get(name), f"section {name!r} missing or empty"
    body = report.split("\n## Sources")[0]
    assert invalid_citations(body, [None] * len(out["report_sources"])) == []
    assert out["removed_orphans"] == []
