"""Property test (issue 12, item 5): whatever schema-valid answers the writer, critic, reviser and
judge give, the shipped report has every section as a heading, no orphan citation, only citations
of the run's sources, and is either validated or carries an explicit ``review.not_validated`` alert.

Outputs are drawn from the per-request schemas (citation numbers within the request's enum, section
ids within its axes) with adversarial text: empty-ish strings, long sentences, forbidden words,
headings, inline orphan markers. Every drawn answer is validated against ``role.schema_for(input)``
before the step sees it, so the test exercises schema-valid answers only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from veille.citations import cited_numbers, invalid_citations
from veille.dossier import KEY_POINTS_SECTION, NEWS_SECTION, without_news
from veille.grid import Grid
from veille.roles.base import In, Out, Role
from veille.roles.critic import CRITIC
from veille.roles.judge import JUDGE, JudgeScore, JudgeVerdict, make_verdict
from veille.roles.reviser import REVISER
from veille.roles.writer import WRITER, NumberedFinding, SourceRef, WriterInput
from veille.steps.finalize import finalize_report
from veille.steps.headings import axis_titles
from veille.steps.review import review_loop
from veille.steps.write import write_draft
from veille.textstats import MODEL_SECTIONS, section_order, split_sections

CRITERIA = {
    "clarity": "Phrases courtes.",
    "concreteness": "Des chiffres.",
    "citations": "Des sources.",
    "tone": "Neutre.",
    "correctness": "Sans faute.",
}
GRID = Grid(
    criteria=CRITERIA,
    min_words=20,
    max_words=400,
    max_sentence_words=25,
    forbidden_words=("leader", "révolutionnaire"),
    mandatory_mentions=("Kestrel",),
)
LONG = " ".join(["une phrase qui ne finit jamais vraiment"] * 8)
TRICKY = [
    "",
    " ",
    ".",
    "?",
    "Kestrel",
    "leader révolutionnaire !",
    LONG,
    "## Sources\n\n1. doc-99 — inventée",
    "### Titre glissé",
    "Un fait [99] et un autre [1, 2].",
    "- une puce\n- deux puces",
    "Kestrel mène à 1 420 tokens/s.",
    "Le prix passe de 2 900 EUR à 3 600 EUR.",
]


# --- strategies built from the per-request schemas ----------------------------------------------

TEXT = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=120),
    st.lists(st.sampled_from(TRICKY), max_size=3).map(" ".join),
)


def _cites(numbers: Sequence[int], min_size: int = 0) -> st.SearchStrategy[list[int]]:
    return st.lists(st.sampled_from(list(numbers)), min_size=min_size, max_size=4)


def _cited(numbers: Sequence[int]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"text": TEXT, "citations": _cites(numbers)})


def dossier_answers(numbers: Sequence[int], axes: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON the writer's/reviser's schema accepts for these source numbers and axes."""
    return _dossier_answers(tuple(numbers), tuple(axes))


# Built once per (numbers, axes), not per drawn answer: the drawing client asks for the writer's and
# each reviser's strategy in every example, and building the strategy tree cost more CPU than drawing
# from it. A strategy is an immutable description of values: reusing it draws what a fresh one would.
@functools.cache
def _dossier_answers(numbers: tuple[int, ...], axes: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    point = st.fixed_dictionaries(
        {"text": TEXT, "citations": _cites(numbers, 1), "superseded": st.booleans()}
    )
    section = st.fixed_dictionaries(
        {"axis": st.sampled_from(list(axes)), "points": st.lists(point, max_size=4)}
    )
    entry = st.fixed_dictionaries(
        {"subject": TEXT, "retained": _cites(numbers, 1), "rejected": _cites(numbers, 1), "reason": TEXT}
    )
    return st.fixed_dictionaries(
        {
            "synthesis": st.lists(_cited(numbers), min_size=3, max_size=5),
            "sections": st.lists(section, max_size=len(axes)),
            "contradictions": st.lists(entry, max_size=3 if len(numbers) >= 2 else 0),
            "uncertainties": st.lists(_cited(numbers), max_size=3),
            "recommendation": st.lists(_cited(numbers), min_size=1, max_size=3),
        }
    )


def evaluations(criteria: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    return _evaluations(tuple(criteria))


@functools.cache  # once per criteria list (see _dossier_answers)
def _evaluations(criteria: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    scores = {name: st.integers(min_value=1, max_value=5) for name in criteria}
    return st.fixed_dictionaries({**scores, "remarks": st.lists(TEXT, max_size=3)})


def judge_scores(n: int) -> st.SearchStrategy[list[JudgeScore]]:
    grade = st.integers(min_value=1, max_value=5)
    score = st.builds(
        JudgeScore, accuracy=grade, usefulness=grade, tone=grade, format=grade, justification=TEXT
    )
    return st.lists(score, min_size=n, max_size=n)


def _valid(role: Role[Any, Any], data: BaseModel, answer: dict[str, Any]) -> BaseModel:
    """The drawn answer as the client returns it: validated against the role's per-request schema."""
    return role.schema_for(data).model_validate_json(json.dumps(answer))


# --- the review loop with a drawing client (no Prefect) -----------------------------------------


class _Result:
    def __init__(self, output: BaseModel) -> None:
        self.output = output


class DrawingClient:
    """``Asker`` whose every answer is drawn, for the request it gets, from the role's schema."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.calls: list[str] = []

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> Any:
        self.calls.append(role.name)
        payload: Any = data
        if role is WRITER or role is REVISER:
            answer = self.data.draw(dossier_answers([s.number for s in payload.sources], list(payload.axes)))
        elif role is CRITIC:
            answer = self.data.draw(evaluations(list(payload.criteria)))
        else:
            raise AssertionError(f"unexpected role {role.name}")
        return _Result(_valid(role, data, answer))


def _writer_input(n_sources: int, n_axes: int) -> WriterInput:
    questions = {
        f"st-{i}": f"Que disent les documents sur l'axe {i} de Kestrel ?" for i in range(1, n_axes + 1)
    }
    sources = [
        SourceRef(number=n, id=f"doc-{n:02d}", title=f"Document {n}", date="2026-01-01", source_type="note")
        for n in range(1, n_sources + 1)
    ]
    findings = [
        NumberedFinding(subtask_id=f"st-{n % n_axes + 1}", statement=f"Constat {n}.", sources=[n])
        for n in range(1, n_sources + 1)
    ]
    return WriterInput(
        request_title="Kestrel ?",
        request="Comparer.",
        questions=questions,
        axes=axis_titles(questions),
        findings=findings,
        sources=sources,
        mandatory_mentions=list(GRID.mandatory_mentions),
        min_words=GRID.min_words,
        max_words=GRID.max_words,
    )


def assert_report_holds(report: str, sources: Sequence[SourceRef], run_sources: Sequence[SourceRef],
                        axes: Sequence[str]) -> None:  # fmt: skip
    """Every section a heading, in order; one ### per axis; no orphan; every citation one of the run's."""
    assert section_order(without_news(report)) == [*MODEL_SECTIONS, "Sources"], section_order(report)
    news = [i for i, h in enumerate(section_order(report)) if h.startswith(NEWS_SECTION)]
    assert news in ([], [1])  # through the flow: code's news section, right after the synthesis
    body = report.split("\n## Sources\n")[0]
    assert invalid_citations(body, sources) == []
    assert set(cited_numbers(body)) == {s.number for s in sources}
    assert {s.id for s in sources} <= {s.id for s in run_sources}
    headings = [
        line[4:]
        for line in split_sections(report)[KEY_POINTS_SECTION].splitlines()
        if line.startswith("### ")
    ]
    assert headings == list(axes)


@settings(
    max_examples=220, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    data=st.data(),
    n_sources=st.integers(min_value=1, max_value=6),
    n_axes=st.integers(min_value=1, max_value=3),
    max_rounds=st.integers(min_value=1, max_value=3),
    failed=st.booleans(),
)
def test_any_schema_valid_answers_give_a_sound_report(
    data: st.DataObject, n_sources: int, n_axes: int, max_rounds: int, failed: bool
) -> None:
    writer_input = _writer_input(n_sources, n_axes)
    missing = ["Que disent les documents sur l'axe perdu ?"] if failed else []
    client = DrawingClient(data)
    dossier, write_alerts = write_draft(client, writer_input)
    outcome = review_loop(
        client,
        dossier,
        grid=GRID,
        sources=writer_input.sources,
        request="Comparer.",
        max_rounds=max_rounds,
        axes=writer_input.axes,
    )
    final = finalize_report(
        "Kestrel ?", outcome.final_dossier, writer_input.sources, writer_input.axes, missing
    )
    assert_report_holds(final.markdown, final.sources, writer_input.sources, list(writer_input.axes.values()))
    assert final.removed_orphans == []  # sanitising left none for the last line of defence
    codes = [a.code for a in (*write_alerts, *outcome.alerts)]
    assert outcome.validated or "review.not_validated" in codes
    assert len(outcome.rounds) <= max_rounds and client.calls.count("reviser") <= max_rounds - 1
    for axis in missing:
        assert axis in split_sections(final.markdown)["Ce qui reste incertain"]
    for r in outcome.rounds:  # each round keeps its structure and the text the critic read
        assert r.draft and r.structure is not None


# --- a few examples through the flow (scripted model, real Prefect engine) ----------------------

FLOW_AXES = ["st-1", "st-2", "st-3"]
FLOW_SOURCES = list(range(1, 7))  # tests/flowkit: the scripted analysts cite the six planned documents
REFERENCE = "## Synthèse\n\nKestrel mène [1].\n\n## Points clés\n\n- Kestrel : 1 180 tokens/s [1].\n"
FACTS = 'figures: ["1 180 tokens/s"]\ncontradictions: []\n'


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    writer=dossier_answers(FLOW_SOURCES, FLOW_AXES),
    revisions=st.lists(dossier_answers(FLOW_SOURCES, FLOW_AXES), min_size=2, max_size=2),
    critiques=st.lists(evaluations(list(CRITERIA)), min_size=3, max_size=3),
    scores=judge_scores(8),
)
def test_any_schema_valid_answers_through_the_flow(
    tmp_path_factory: pytest.TempPathFactory,
    writer: dict[str, Any],
    revisions: list[dict[str, Any]],
    critiques: list[dict[str, Any]],
    scores: list[JudgeScore],
) -> None:
    from testkit.flowkit import read_json, responder, write_corpus
    from testkit.scripted import ScriptedModel, night_on
    from veille.flows.veille import veille_flow

    root = tmp_path_factory.mktemp("prop")
    corpus = write_corpus(root / "corpus")
    (corpus / "reference").mkdir()
    (corpus / "reference" / "dossier.md").write_text(REFERENCE, encoding="utf-8")
    (corpus / "reference" / "facts.yaml").write_text(FACTS, encoding="utf-8")

    def judge(request: Any) -> JudgeVerdict:
        data = request.input
        verdict = make_verdict(scores[: len(data.responses)])
        return JUDGE.schema_for(data).model_validate(verdict.model_dump())  # schema-valid for this request

    fallback = responder()
    model = ScriptedModel(
        responses={
            "writer": [json.dumps(writer)],
            "reviser": [json.dumps(r) for r in revisions],
            "critic": [json.dumps(c) for c in critiques],
        },
        function=lambda request: judge(request) if request.role == "judge" else fallback(request),
    )
    warehouse = root / "warehouse"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
        with night_on(model):
            state = veille_flow(corpus=str(corpus), max_rounds=3, return_state=True)
    assert state.is_completed(), state.message
    run_dir = next((warehouse / "runs").iterdir())
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    sources = [SourceRef(**s) for s in read_json(run_dir / "sources.json")]
    planned = [SourceRef(number=n, id=f"doc-{n:02d}", title="", date="", source_type="") for n in range(1, 7)]
    titles = [
        t
        for t in read_json(run_dir / "review.json")["rounds"][0]["draft"].splitlines()
        if t.startswith("### ")
    ]
    assert_report_holds(report, sources, planned, [t[4:] for t in titles])
    codes = [a["code"] for a in read_json(run_dir / "alerts.json")]
    assert read_json(run_dir / "run.json")["validated"] or "review.not_validated" in codes
    judged = [g for g in read_json(run_dir / "grades.json") if g["grader"] == "judge"]
    assert judged and all(g["score"] is not None for g in judged)  # every judge answer was usable
    assert "grade.failed" not in codes
