"""The analyst's input budget (issue 27 item 2): what one analyst call is shown of its documents,
what is recorded of what was left out, and the planner's re-ask within its budget. Token counts
only (veille.tokens estimates), never timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plankit import PlannerScript, entry, planner_input
from veille.models.base import ModelResult, Usage
from veille.roles.analyst import ANALYST, AnalystInput, DocumentText, Finding, Findings
from veille.roles.planner import SubTask
from veille.run.summary import format_summary
from veille.steps.analyse import analyse_subtask
from veille.steps.analyse_update import PreviousBranch, carried_analysis, decide, previous_branches
from veille.steps.catalogue import planner_tokens as planner_input_tokens
from veille.steps.plan import make_plan
from veille.steps.reading import PartRead, read_documents, reading_alert
from veille.tasks.outputs import findings_document
from veille.tokens import estimate_tokens

QUESTION = "Quel débit annoncent les moteurs d'inférence Kestrel et Tamaris ?"
FILLER = (
    "Les archives de la bibliothèque municipale rouvrent après travaux ; horaires d'été et "
    "prêts prolongés pour les lecteurs inscrits avant juin. "
)
RELEVANT = "Kestrel annonce un débit de 2 100 tokens/s par GPU ; Tamaris annonce 1 800 tokens/s."


def _long_body(sections: int, relevant_at: int) -> str:
    parts = []
    for k in range(sections):
        text = RELEVANT if k == relevant_at else FILLER * 30
        parts.append(f"## Partie {k}\n\n{text}")
    return "\n\n".join(parts)


def _doc(doc_id: str, body: str) -> DocumentText:
    return DocumentText(id=doc_id, date="2026-11-01", source_type="blog", title=doc_id, body=body)


class Capture:
    """An Asker that records what the analyst is shown and answers one finding per document."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> ModelResult[Any]:
        self.inputs.append(data)
        findings = Findings(findings=[Finding(statement="x", doc_ids=[d.id]) for d in data.documents])
        return ModelResult(
            output=findings,
            raw_text="",
            usage=Usage(),
            latency_s=0.0,
            cost_usd=None,
            model="m",
            attempts=1,
            cache_hit=False,
        )


bodies = st.lists(
    st.tuples(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=11)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies, st.integers(min_value=500, max_value=20_000))
def test_documents_are_whole_while_they_fit_else_sections_of_themselves(
    shapes: list[tuple[int, int]], budget: int
) -> None:
    documents = [_doc(f"d-{i}", _long_body(n, at % n)) for i, (n, at) in enumerate(shapes)]
    shown, parts = read_documents(documents, QUESTION, budget)
    assert [d.id for d in shown] == [d.id for d in documents]  # every document, in order
    total = sum(estimate_tokens(d.body) for d in documents)
    if total <= budget:
        assert shown == documents and parts == {}
        return
    for before, after in zip(documents, shown, strict=True):
        if before.id not in parts:
            assert after.body == before.body and after.read_percent is None
            continue
        part = parts[before.id]
        assert (
            part.tokens_read < part.tokens_total
        )  # per-section estimates: within a few tokens of the body's
        assert after.read_percent == part.percent < 100
        for piece in after.body.split("\n\n[…]\n\n"):  # only text of the document, no invention
            assert piece.strip() in before.body


def test_the_section_that_answers_the_question_is_read_and_the_rest_recorded() -> None:
    documents = [_doc(f"doc-{i}", _long_body(12, relevant_at=i + 3)) for i in range(4)]
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=[d.id for d in documents])
    client = Capture()
    analysis = analyse_subtask(client, sub_task, documents, budget=2_000)
    shown = client.inputs[0].documents
    assert sum(estimate_tokens(d.body) for d in shown) <= 2_000
    assert all(RELEVANT in d.body for d in shown)  # BM25 picked the section about the question
    assert set(analysis.read) == {d.id for d in documents}
    prompt = ANALYST.build_prompt(client.inputs[0])
    assert prompt.count('lecture="extraits, ') == 4
    codes = [a.code for a in analysis.alerts]
    assert codes.count("analyse.partial_read") == 1
    # findings.json and the summary say how much of each document was read.
    entry = findings_document([analysis])["st-1"]
    assert entry["read"] == {i: p.model_dump() for i, p in sorted(analysis.read.items())}


def test_no_budget_or_a_large_one_changes_nothing() -> None:
    documents = [_doc(f"doc-{i}", _long_body(3, 1)) for i in range(3)]
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=[d.id for d in documents])
    for budget in (None, 10_000):
        client = Capture()
        analysis = analyse_subtask(client, sub_task, documents, budget=budget)
        assert [d.body for d in client.inputs[0].documents] == [d.body for d in documents]
        assert analysis.read == {}
        assert "read" not in findings_document([analysis])["st-1"]


def test_summary_line_says_lu_a_n_pourcent(tmp_path: Path) -> None:
    plan = {
        "sub_tasks": [{"id": "st-1", "question": QUESTION, "doc_ids": ["doc-1", "doc-2"]}],
        "excluded": [],
    }
    findings = {
        "st-1": {
            "status": "ok",
            "findings": [],
            "read": {"doc-2": {"tokens_read": 400, "tokens_total": 1000}},
        }
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    (tmp_path / "findings.json").write_text(json.dumps(findings), encoding="utf-8")
    summary = format_summary(tmp_path)
    assert "doc-1, doc-2 (lu à 40 %)" in summary


def test_the_summary_of_a_part_read_imports_no_reading_module(tmp_path: Path) -> None:
    """An unchanged night prints the kept dossier's summary (« lu à N % » at real size) and runs no
    reading: the summary must not pull in the analyst's reading module, the offline engine's text
    rules nor the markdown parser (issue 40 item 4), checked in a fresh interpreter."""
    test_summary_line_says_lu_a_n_pourcent(tmp_path)  # the same run folder
    script = f"""
import sys
from pathlib import Path
from veille.run.summary import format_summary
assert "(lu à 40 %)" in format_summary(Path({str(tmp_path)!r}))
heavy = ("veille.steps.reading", "veille.offline.text", "markdown_it")
print(sorted(name for name in heavy if name in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_percent_of_a_part_is_never_100_nor_0() -> None:
    assert PartRead(tokens_read=999, tokens_total=1000).percent == 99
    assert PartRead(tokens_read=1, tokens_total=100_000).percent == 1


@pytest.mark.parametrize("margin", [50, 400, 2_000])
def test_the_planners_reask_stays_within_its_token_budget(margin: int) -> None:
    # 60 documents naming a request term; the planner places one: 59 are questioned on the re-ask.
    catalogue = [entry(f"doc-{k:02d}", f"Zorblax : débit mesuré et latence, note {k}") for k in range(60)]
    data = planner_input(catalogue, max_subtasks=8, max_docs=8)
    first = {"sub_tasks": [{"id": "st-1", "question": "Quel débit ?", "doc_ids": ["doc-00"]}], "excluded": []}
    client = PlannerScript(first)
    budget = planner_input_tokens(data) + margin
    outcome = make_plan(client, data, token_budget=budget)
    assert len(client.inputs) == 2  # re-asked once
    reask = client.inputs[1]
    assert planner_input_tokens(reask) <= budget or len(reask.findings) == 2  # proposal + one document
    unbounded = PlannerScript(first)
    make_plan(unbounded, data)
    assert len(reask.findings) <= len(unbounded.inputs[1].findings)
    assert planner_input_tokens(unbounded.inputs[1]) > budget  # the bound really cut something
    # Every document is still placed or excluded with a reason (code places what was not listed).
    placed = {i for st in outcome.plan.sub_tasks for i in st.doc_ids}
    assert placed | {e.id for e in outcome.plan.exclusions} == {e.id for e in catalogue}


def test_a_partial_read_is_still_named_when_the_branch_is_carried_or_updated() -> None:
    part = {"tokens_read": 300, "tokens_total": 1000}
    findings_json = {"st-1": {"status": "ok", "findings": [], "analyst_basis": "b", "read": {"doc-1": part}}}
    plan_json = {"sub_tasks": [{"id": "st-1", "question": QUESTION, "doc_ids": ["doc-1", "doc-2"]}]}
    previous = previous_branches(findings_json, plan_json, {"doc-1": "h1", "doc-2": "h2"})["st-1"]
    assert previous.read == {"doc-1": PartRead(**part)}
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-1", "doc-2"])
    carried = decide(sub_task, {"doc-1": "h1", "doc-2": "h2"}, "b", previous)
    assert carried.kind == "carry" and carried.carry is not None
    assert carried_analysis(sub_task, carried.carry, previous.read).read == previous.read
    grown = sub_task.model_copy(update={"doc_ids": ["doc-1", "doc-2", "doc-3"]})
    update = decide(grown, {"doc-1": "h1", "doc-2": "h2", "doc-3": "h3"}, "b", previous).update
    assert update is not None and update.previous_read == {"doc-1": PartRead(**part)}


def test_findings_read_within_another_budget_are_not_built_on() -> None:
    from veille.settings import Settings
    from veille.tasks.analyse import analyst_basis

    under_10k = analyst_basis(Settings(analyst_token_budget=10_000))
    under_5k = analyst_basis(Settings(analyst_token_budget=5_000))
    previous = PreviousBranch(
        subtask_id="st-1",
        question=QUESTION,
        doc_ids=("doc-1",),
        doc_hashes={"doc-1": "h1"},
        flags={},
        status="ok",
        basis=under_10k,
        findings=Findings(findings=[]),
    )
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-1"])
    assert decide(sub_task, {"doc-1": "h1"}, under_10k, previous).kind == "carry"
    assert decide(sub_task, {"doc-1": "h1"}, under_5k, previous).kind == "full"


# -------------------------------------------- any size and shape: the request stays within budget
SENTENCE = st.sampled_from(
    [
        "Kestrel annonce un débit de 2 100 tokens/s par GPU.",
        "M. Martin, p. ex., mesure 1.5 ms sur la v2.3 du moteur.",
        "Les archives rouvrent après travaux ; horaires d'été et prêts prolongés.",
        "Tamaris annonce 1 800 tokens/s, selon le banc publié en juin !",
        "Pourquoi la latence double-t-elle au-delà de 64 requêtes ?",
    ]
)
RUN_ON = st.integers(1, 4_000).map(lambda n: "débit" + " sans-fin" * n)  # no sentence end at all
PARAGRAPH = st.one_of(
    st.lists(SENTENCE, min_size=1, max_size=40).map(" ".join),  # ends with its last sentence
    st.lists(SENTENCE, min_size=1, max_size=400).map("\n".join),  # one paragraph, many lines
    RUN_ON,
)
BLOCK = st.one_of(PARAGRAPH, st.sampled_from(["## Résultats", "# Annexe", "### Débit"]))
BODY = st.lists(BLOCK, min_size=1, max_size=30).map("\n\n".join)


def _ends_cleanly(piece: str, body: str) -> bool:
    """``piece`` is whole sentences of ``body``: it starts where a sentence or a block starts and
    ends at a sentence end or where its block ends."""
    at = body.find(piece)
    while at >= 0:  # any occurrence of it (the same words may stand elsewhere, inside a sentence)
        before, after = body[:at].rstrip(" "), body[at + len(piece) :]
        starts = not before or before.endswith(("\n", ".", "!", "?"))
        ends = piece.endswith((".", "!", "?")) or not after.strip() or after.startswith("\n")
        if starts and ends:
            return True
        at = body.find(piece, at + 1)
    return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BODY, min_size=1, max_size=6), st.integers(min_value=500, max_value=6_000))
def test_any_documents_are_shown_within_the_budget_in_whole_sentences(texts: list[str], budget: int) -> None:
    documents = [_doc(f"d-{i}", body) for i, body in enumerate(texts)]
    shown, parts = read_documents(documents, QUESTION, budget)
    assert sum(estimate_tokens(d.body) for d in shown) <= budget
    for before, after in zip(documents, shown, strict=True):
        if before.id not in parts:
            assert after.body == before.body
            continue
        assert parts[before.id].tokens_read == estimate_tokens(after.body)
        for piece in filter(None, after.body.split("\n\n[…]\n\n")):
            assert _ends_cleanly(piece, before.body), piece[-80:]
    # The whole request: the prompt grows by the documents' text only (ids, titles and the question
    # are the same whatever was read), so it is bounded by the budget plus the empty prompt.
    empty = [d.model_copy(update={"body": "", "read_percent": 1}) for d in documents]
    overhead = estimate_tokens(
        ANALYST.build_prompt(AnalystInput(subtask_id="st-1", question=QUESTION, documents=empty))
    )
    prompt = ANALYST.build_prompt(AnalystInput(subtask_id="st-1", question=QUESTION, documents=shown))
    assert estimate_tokens(prompt) <= overhead + budget + len(documents)


def test_a_five_megabyte_document_among_others_is_cut_and_named() -> None:
    huge = "\n\n".join(
        f"## Partie {k}\n\n" + FILLER * 40 + (RELEVANT if k == 700 else "") for k in range(1_000)
    )
    assert len(huge) > 5_000_000
    documents = [_doc("doc-huge", huge), _doc("doc-short", RELEVANT)]
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-huge", "doc-short"])
    client = Capture()
    analysis = analyse_subtask(client, sub_task, documents, budget=10_000)
    shown = client.inputs[0].documents
    assert sum(estimate_tokens(d.body) for d in shown) <= 10_000
    assert shown[1].body == RELEVANT and RELEVANT in shown[0].body
    (warning,) = [a for a in analysis.alerts if a.code == "analyse.partial_read"]
    assert "doc-huge lu à " in warning.message and f"/ {estimate_tokens(huge)} tokens" in warning.message


def test_a_document_with_no_sentence_fitting_its_share_is_named_unread() -> None:
    run_on = "débit" + " sans-fin" * 20_000  # one 'sentence' of 180,000 characters
    documents = [_doc("doc-run-on", run_on), _doc("doc-short", RELEVANT)]
    shown, parts = read_documents(documents, QUESTION, 1_000)
    assert shown[0].body == "" and parts["doc-run-on"].percent == 0
    (warning,) = reading_alert("st-1", parts, 1_000)
    assert (
        warning.severity == "warning" and "non lu(s)" in warning.message and "doc-run-on" in warning.message
    )
