"""Property tests of what the incremental analyst is shown of the previous analysis (issue 40,
items 2–3: ``veille.steps.update_context``).

Over generated branches — documents already read, each with findings drawn from its sentences
(figures in several units, or none), and one edited document whose appended paragraph states a
figure of some unit, or none — and over any answer of the update (it repeats any of the previous
findings, shown to it or not, with other case and spacing, citing the edited document; and adds a
fact of its own), the incremental branch (``update_subtask``, the one code path of every backend)
guarantees:

(a) night 2 holds no finding twice (statements compared case, accents and spacing aside);
(b) every previous finding whose support is unchanged (citing only documents read before and not
    edited since) is in night 2 as it was, shown to the update or not;
(c) the update's own new fact is in night 2;
(d) the update is shown every previous finding it may weigh tonight's text against: each one of
    a document read before that states a figure of a unit the new passage states (a changed value
    of the same measure), and each finding of several documents or of the edited one.

No Prefect, no model layer: a scripted asker records what it is shown and answers the drawn update.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.corpus.sections import change_digests
from veille.models.base import ModelResult, Usage
from veille.numbers import compatible
from veille.roles.analyst import DocumentText, Finding, Findings
from veille.roles.analyst_update import AnalystUpdateInput, FindingsUpdate
from veille.roles.planner import SubTask
from veille.steps.analyse_update import UpdateJob, update_subtask
from veille.steps.update_context import statement_key
from veille.steps.verify_passages import figures

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUESTION = "Quels débits et quelles latences annoncent les moteurs d'inférence ?"
NAMES = ["Kestrel", "Tamaris", "Orvet"]
MEASURES = ["débit mesuré", "latence observée", "consommation relevée", "capacité annoncée"]
UNITS = ["tokens/s", "ms", "%", "Go", ""]  # "": a sentence without a figure
KNOWN = ["doc-a", "doc-b", "doc-c"]
_FIGURE = re.compile(r"\d+ (?:tokens/s|ms|%|Go)")


def _sentence(draw: st.DrawFn, value: int) -> str:
    name, measure, unit = (draw(st.sampled_from(x)) for x in (NAMES, MEASURES, UNITS))
    if not unit:
        return f"Le {measure} de {name} reste stable selon l'éditeur."
    return f"Le {measure} de {name} atteint {value} {unit} sur la charge de référence."


def _finding(sentence: str, doc_ids: list[str]) -> Finding:
    return Finding(statement=sentence, doc_ids=doc_ids, figures=_FIGURE.findall(sentence))


def _variant(draw: st.DrawFn, statement: str) -> str:
    """The same statement as a model may write it again: other case, other spacing."""
    shape = draw(st.sampled_from(["same", "upper", "spaced"]))
    return {"same": statement, "upper": statement.upper(), "spaced": "  " + statement.replace(" ", "  ")}[
        shape
    ]


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    value = iter(range(101, 10_000, 7))  # a figure names one sentence
    bodies: dict[str, list[str]] = {}
    findings: list[Finding] = []
    for doc in KNOWN:
        sentences = [_sentence(draw, next(value)) for _ in range(draw(st.integers(1, 4)))]
        bodies[doc] = sentences
        findings += [_finding(s, [doc]) for s in sentences if draw(st.booleans())]
    edited = [_sentence(draw, next(value)) for _ in range(draw(st.integers(1, 3)))]
    findings += [_finding(s, ["doc-e"]) for s in edited]  # still supported: the edit only appends
    if draw(st.booleans()):  # a finding of several documents
        findings.append(
            Finding(statement="Les trois moteurs couvrent le besoin.", doc_ids=["doc-a", "doc-b"])
        )
    # Worded apart from the others (no content word in common): only its figure's unit ties it to them.
    unit = draw(st.sampled_from(UNITS))
    appended = f"Mise à jour : nouvelle valeur, {next(value)} {unit}." if unit else "Mise à jour : rien."
    unique: dict[str, Finding] = {}  # night 1's analysis states each fact once
    for f in findings:
        unique.setdefault(statement_key(f.statement), f)
    findings = list(unique.values())
    repeated = draw(st.lists(st.sampled_from(findings), max_size=len(findings), unique_by=id))
    answer = [
        Finding(statement=_variant(draw, f.statement), doc_ids=["doc-e"], figures=f.figures) for f in repeated
    ]
    fresh = _finding(appended, ["doc-e"])
    answer.insert(draw(st.integers(0, len(answer))), fresh)
    return {
        "bodies": bodies,
        "edited": edited,
        "appended": appended,
        "previous": findings,
        "answer": answer,
        "fresh": fresh,
    }


class _Scripted:
    """An asker that records what the update is shown and answers the drawn update."""

    def __init__(self, answer: list[Finding]) -> None:
        self.answer = answer
        self.inputs: list[AnalystUpdateInput] = []

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> ModelResult[Any]:
        assert isinstance(data, AnalystUpdateInput)
        self.inputs.append(data)
        return ModelResult(
            output=FindingsUpdate(findings=self.answer),
            raw_text="{}",
            usage=Usage(),
            latency_s=0.0,
            cost_usd=0.0,
            model="scripted",
            attempts=1,
            cache_hit=False,
        )


def _document(doc_id: str, sentences: list[str]) -> DocumentText:
    body = "# Notes\n\n" + "\n\n".join(sentences) + "\n"
    return DocumentText(id=doc_id, date="2026-11-01", source_type="blog-editeur", title="Notes", body=body)


def _run(case: dict[str, Any]) -> tuple[Findings, _Scripted]:
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=[*KNOWN, "doc-e"])
    before = _document("doc-e", case["edited"])
    after = _document("doc-e", [*case["edited"], case["appended"]])
    documents = [*(_document(d, case["bodies"][d]) for d in KNOWN), after]
    job = UpdateJob(
        new_ids=["doc-e"],
        previous=Findings(findings=case["previous"]),
        edited_sections={"doc-e": change_digests(before.body)},
    )
    asker = _Scripted(case["answer"])
    return update_subtask(asker, sub_task, documents, job).findings, asker


@_SETTINGS
@given(case=cases())
def test_night_2_holds_each_finding_once_and_every_unchanged_one(case: dict[str, Any]) -> None:
    night, asker = _run(case)
    assert len(asker.inputs) == 1  # the appended paragraph is read
    keys = [statement_key(f.statement) for f in night.findings]
    assert len(keys) == len(set(keys))  # (a)
    kept = [(f.statement, f.doc_ids, f.figures) for f in night.findings]
    for f in case["previous"]:  # (b): nothing they cite changed, so each stands as it was
        if set(f.doc_ids) <= set(KNOWN):
            assert (f.statement, f.doc_ids, f.figures) in kept
    assert statement_key(case["fresh"].statement) in keys  # (c)


@_SETTINGS
@given(case=cases())
def test_the_update_sees_every_finding_of_a_measure_the_new_passage_states(case: dict[str, Any]) -> None:
    _, asker = _run(case)
    shown = {(f.statement, tuple(f.doc_ids)) for f in asker.inputs[0].previous.findings}
    units = [r.unit for r in figures(case["appended"])]
    for f in case["previous"]:
        alone_known = len(set(f.doc_ids)) == 1 and set(f.doc_ids) <= set(KNOWN)
        same_measure = any(compatible(u, r.unit) for r in figures(f.statement) for u in units)
        if not alone_known or same_measure:  # (d)
            assert (f.statement, tuple(f.doc_ids)) in shown
