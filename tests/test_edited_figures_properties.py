"""An edit's new fact reaches the dossier, and a replaced figure leaves it (issue 40 items 2–3:
precision before recall on a night that reads only what changed).

Over generated documents (headed sections of sentences, each stating a figure no other sentence
states) and one edit of one of them — a paragraph with a new figure appended to a section or in a
new section, or a figure changed inside a sentence — night 1 is the offline analyst's full
analysis, night 2 the incremental branch (``update_subtask``: the one code path of every backend,
the edited document known by the paragraph digests ingest kept) with the offline engine answering,
and the dossier is the offline writer's from night 2's findings. Guarantees:

(a) an added figure is in night 2's dossier, in a key point citing the edited document;
(b) a changed figure's old value is nowhere in night 2's dossier, its new value is, cited to the
    edited document.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.corpus.sections import change_digests
from veille.dossier import render_body
from veille.models.base import ModelResult, Usage
from veille.offline.analyst import analyse, analyse_update
from veille.offline.authority import load_authority
from veille.offline.writer import write
from veille.roles.analyst import AnalystInput, DocumentText
from veille.roles.analyst_update import AnalystUpdateInput
from veille.roles.planner import SubTask
from veille.roles.writer import NumberedFinding, SourceRef, WriterInput
from veille.settings import Settings
from veille.steps.analyse_update import UpdateJob, update_subtask

QUESTION = "Quels débits en tokens/s et quelles latences en ms annoncent Kestrel et Tamaris ?"
AUTHORITY = load_authority(Settings().authority_file)
HEADINGS = ["Performances", "Mesures", "Conditions", "Exploitation"]
MEASURES = [("débit mesuré", "tokens/s"), ("latence au premier token", "ms")]


def _sentence(value: int, measure: int) -> str:
    what, unit = MEASURES[measure]
    return f"Le {what} de Kestrel atteint {value} {unit} sur la charge de référence."


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    values = iter(range(1_103, 9_000, 97))  # never one figure in two sentences
    headings = draw(st.lists(st.sampled_from(HEADINGS), min_size=1, max_size=3, unique=True))
    sections = [
        [
            f"## {h}",
            *(_sentence(next(values), draw(st.integers(0, 1))) for _ in range(draw(st.integers(1, 2)))),
        ]
        for h in headings
    ]
    kind = draw(st.sampled_from(["append", "new_section", "change"]))
    after = [list(s) for s in sections]
    k = draw(st.integers(0, len(after) - 1))
    new_value = next(values)
    old = ""
    if kind == "append":
        after[k].append(f"Mise à jour : {_sentence(new_value, draw(st.integers(0, 1)))}")
    elif kind == "new_section":
        after.append(["## Nouveautés", _sentence(new_value, draw(st.integers(0, 1)))])
    else:
        j = draw(st.integers(1, len(after[k]) - 1))
        old = after[k][j].split(" atteint ")[1].split(" ")[0]
        after[k][j] = after[k][j].replace(f" {old} ", f" {new_value} ", 1)

    def render(parts: list[list[str]]) -> str:
        return "# Kestrel : notes de version\n\n" + "\n\n".join("\n\n".join(p) for p in parts) + "\n"

    return {"before": render(sections), "after": render(after), "new": str(new_value), "old": old}


class _Offline:
    """The offline engine's incremental analyst as the branch's asker (no Prefect, no model layer)."""

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> ModelResult[Any]:
        assert isinstance(data, AnalystUpdateInput)
        return ModelResult(
            output=analyse_update(data, AUTHORITY),
            raw_text="{}",
            usage=Usage(),
            latency_s=0.0,
            cost_usd=0.0,
            model="offline",
            attempts=1,
            cache_hit=False,
        )


def _docs(body: str) -> list[DocumentText]:
    edited = DocumentText(
        id="doc-e",
        date="2026-11-02",
        source_type="note-de-version",
        title="Kestrel : notes de version",
        body=body,
    )
    other = DocumentText(
        id="doc-o",
        date="2026-10-01",
        source_type="benchmark-interne",
        title="Tamaris : banc d'essai",
        body="# Tamaris\n\nLe débit mesuré de Tamaris atteint 950 tokens/s sur la charge de référence.\n",
    )
    return [edited, other]


def _night_two(case: dict[str, Any]) -> tuple[str, list[tuple[str, list[int]]]]:
    """Night 2's rendered dossier and its key points (text, citations), superseded ones aside."""
    sub_task = SubTask(id="st-1", question=QUESTION, doc_ids=["doc-e", "doc-o"])
    first = analyse(
        AnalystInput(subtask_id="st-1", question=QUESTION, documents=_docs(case["before"])), AUTHORITY
    )
    job = UpdateJob(
        new_ids=["doc-e"], previous=first, edited_sections={"doc-e": change_digests(case["before"])}
    )
    findings = update_subtask(_Offline(), sub_task, _docs(case["after"]), job).findings
    sources = [
        SourceRef(number=n, id=d.id, title=d.title, date=d.date, source_type=d.source_type)
        for n, d in enumerate(_docs(case["after"]), start=1)
    ]
    number = {s.id: s.number for s in sources}
    data = WriterInput(
        request_title="Kestrel ou Tamaris ?",
        request="Comparer les débits et latences de Kestrel et Tamaris.",
        questions={"st-1": QUESTION},
        axes={"st-1": "Performances"},
        findings=[
            NumberedFinding(subtask_id="st-1", statement=f.statement, sources=[number[i] for i in f.doc_ids])
            for f in findings.findings
        ],
        sources=sources,
        options=["Kestrel", "Tamaris"],
        max_words=2000,
    )
    dossier = write(data)
    return render_body(dossier, data.axes), [
        (p.text, p.citations) for s in dossier.sections for p in s.points if not p.superseded
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_a_new_figure_reaches_the_dossier_and_a_replaced_one_leaves_it(case: dict[str, Any]) -> None:
    text, points = _night_two(case)
    cited = [t for t, numbers in points if 1 in numbers]  # doc-e is source 1
    assert any(f" {case['new']} " in f" {t} " for t in cited), (case, points)  # (a), (b) its new value
    if case["old"]:
        assert f" {case['old']} " not in f" {text} ", (case, text)  # (b) the old value is gone
