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
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.corpora.generate import generate_corpus
from veille.backends import build_client
from veille.citations import invalid_citations
from veille.corpus.reference import load_reference
from veille.corpus.request import load_request
from veille.roles.planner import Plan
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.catalogue import (
    PlannerCatalogue,
    planner_catalogue,
    planner_reads_texts,
    text_relevance,
    with_texts,
)
from veille.steps.plan import PlanOutcome, make_plan
from veille.steps.plan_settle import settle_plan
from veille.steps.screen_cache import screen_corpus
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
        assert client.backend == "offline" and planner_reads_texts(client.role_backend("planner"))
        prepared = with_texts(prepared, settings.database)  # as the flow does for a free planner
        text = text_relevance(prepared, settings.database)
        outcome = make_plan(client, prepared.data, text=text)
    outcome = settle_plan(  # as the plan step does
        outcome, prepared.data, prepared.data.texts, authority_file=settings.authority_file, text=text
    )
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


def _gaps(p: Planned, kind: str) -> set[str]:
    """What the offline planner is known not to do on a corpus written after it (traps.yaml
    ``offline_gaps``, documented in the corpus's README): checked to still hold."""
    return set((p.traps.get("offline_gaps") or {}).get(kind) or [])


def test_keep_and_framing_documents_are_placed(planned: Planned) -> None:
    """Except the gaps listed under ``offline_gaps.not_placed``, checked to be still unplaced."""
    placed = _placed(planned)
    gaps = _gaps(planned, "not_placed")
    assert not gaps & placed, f"{sorted(gaps & placed)} now placed: remove from offline_gaps in traps.yaml"
    keep = set(planned.facts.keep) - gaps
    assert keep <= placed, sorted(keep - placed)
    framing = set(planned.traps.get("framing") or []) - gaps
    assert framing <= placed, sorted(framing - placed)


def test_off_topic_documents_are_not_placed(planned: Planned) -> None:
    """Except the gaps listed under ``offline_gaps.placed_off_topic``, checked to be still placed."""
    off_topic = set(planned.facts.exclude) | set(planned.traps.get("off_topic") or [])
    off_topic |= set(planned.traps.get("name_clash") or [])
    gaps = _gaps(planned, "placed_off_topic")
    assert gaps <= _placed(planned), (
        f"{sorted(gaps - _placed(planned))} no longer placed: remove from offline_gaps"
    )
    assert not (off_topic - gaps) & _placed(planned), sorted((off_topic - gaps) & _placed(planned))


def test_contradictions_and_groups_are_read_together(planned: Planned) -> None:
    """Except the gaps a corpus's traps.yaml lists under ``offline_gaps.read_apart`` (a held-out
    corpus's contradiction the offline planner cannot see, documented in its README): those are
    checked to be still apart, so the entry goes when the planner learns to pair them."""
    scopes = _scopes(planned)
    gaps = _gaps(planned, "read_apart")
    for c in planned.facts.contradictions:
        together = any(set(c.docs) <= s for s in scopes)
        if c.id in gaps:
            assert not together, f"{c.id} is now read together: remove it from offline_gaps in traps.yaml"
        else:
            assert together, (c.id, c.docs, scopes)
    apart = [set(c.docs) for c in planned.facts.contradictions if c.id in gaps]
    shown = {e.id for e in planned.prepared.data.catalogue}
    for group in planned.facts.groups:
        members = set(group) & shown  # a collapsed copy is read through its line's document
        if set(group) in apart or set(group) & _gaps(planned, "not_placed"):
            continue  # the same documents as a listed gap, or one of them never placed: checked above
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
    # Case-folded: « Le » of the request allows « le » of the question's own template.
    allowed = {w.lower() for w in vocabulary(placed) | set(words(f"{request.title} {request.text}"))}
    stray = {w.lower() for w in vocabulary(set(p.outcome.plan.excluded))} - allowed
    for st in p.outcome.plan.sub_tasks:
        used = {w.lower() for w in words(st.question)}
        assert not used & stray, (st.question, sorted(used & stray))


def test_a_new_corpus_runs_to_a_complete_report() -> None:
    """The library pipeline after the plan (analysts, writer, review) on a corpus whose request states
    its axes in a sentence: every section, no orphan citation, every listed source cited."""
    from testkit.offline_pipeline import run_bundled_pipeline

    out = run_bundled_pipeline(CORPORA_DIR / "bases-vectorielles")
    report = out["report"]
    sections = split_sections(report)
    for name in (*MODEL_SECTIONS, "Sources"):
        assert sections.get(name), f"section {name!r} missing or empty"
    body = report.split("\n## Sources")[0]
    assert invalid_citations(body, [None] * len(out["report_sources"])) == []
    assert out["removed_orphans"] == []


class _NoPlanner:
    """The plan is reused: asking the planner is a defect."""

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> Any:
        raise AssertionError(f"{role.name} asked although the previous plan was reused")


def test_the_next_night_with_one_new_document_reuses_the_plan(planned: Planned) -> None:
    """Issue 13 on every corpus: each placed document in turn plays tonight's new one (last night's
    plan without it). The reused plan is valid, asks no planner, puts the document back in the
    sub-task it was in (or names it as crowded out, then the planner is asked) and leaves every
    other sub-task as it was, so only one branch is read again."""
    from veille.steps.news import PreviousDossier, compare_snapshots
    from veille.steps.plan_reuse import crowded_out, planner_basis, reusable_plan

    p = planned
    data = p.prepared.data
    shown = [e.id for e in data.catalogue]
    # A later night reuses the planner's validated plan (plan.json reading.validated) and code
    # settles it again with the new document (veille.steps.plan_settle), as tonight's was.
    tonight = Plan.model_validate(p.outcome.plan.reading.get("validated") or p.outcome.plan.model_dump())
    basis = planner_basis(data, "offline")
    checked = 0
    not_reused = _gaps(p, "not_reused")  # documents the reused plan is known to drop (traps.yaml)
    for new in sorted({i for st in tonight.sub_tasks for i in st.doc_ids}):
        if sum(new in st.doc_ids for st in tonight.sub_tasks) != 1:
            continue  # a document read by two sub-tasks: its second place is the planner's call
        last_night = tonight.model_copy(
            update={
                "sub_tasks": [
                    st.model_copy(update={"doc_ids": [i for i in st.doc_ids if i != new]})
                    for st in tonight.sub_tasks
                ]
            }
        )
        recorded = {
            "sub_tasks": [s.model_dump(exclude={"flags"}) for s in last_night.sub_tasks if s.doc_ids],
            "excluded": list(last_night.excluded),
            "exclusions": [e.model_dump() for e in last_night.exclusions],
            "basis": basis,
        }
        previous = PreviousDossier("r", date(2026, 12, 1), {i: "h" for i in shown if i != new}, plan=recorded)
        changes = compare_snapshots(previous, [(i, "h") for i in shown])
        assert changes.new == (new,)
        proposal, why = reusable_plan(changes, basis, shown, max_new=5)
        if proposal is None:  # its sub-task held only this document: nothing of it is left
            assert "none of the previous plan's documents" in why or len(recorded["sub_tasks"]) < len(
                tonight.sub_tasks
            )
            continue
        outcome = make_plan(
            _NoPlanner(), data, flagged=dict.fromkeys(p.flagged, "injection suspectée"), previous=proposal
        )
        plan = outcome.plan
        used = {i for st in plan.sub_tasks for i in st.doc_ids}
        assert used | set(plan.excluded) == set(shown) and not used & set(plan.excluded)
        if crowded_out(outcome, changes):
            continue  # tasks/plan.py asks the planner then
        if new in not_reused:
            assert new not in used, f"{new} is now put back: remove it from offline_gaps.not_reused"
            continue
        assert new in used, (p.corpus.name, new, plan.exclusions)
        before = [set(st.doc_ids) for st in proposal.sub_tasks]
        after = [set(st.doc_ids) for st in plan.sub_tasks]
        changed = [a for b, a in zip(before, after, strict=False) if a != b] + after[len(before) :]
        assert len(changed) == 1 and new in changed[0], (p.corpus.name, new, before, after)
        checked += 1
    # The loop exercised the whole path on this corpus (a plan of one sub-task has nothing to reuse).
    assert checked >= 1 or len(tonight.sub_tasks) < 2
