"""Sections follow the request whatever the writer wrote (issue 37, item 5), by hypothesis.

For arbitrary inventories (items of one or two documents, read by one to three branches, with or
without findings), arbitrary requests (choice, inventory, evolution, survey) and arbitrary writer
answers — a hostile writer that omits items, cites the wrong documents, leaves axes empty, writes a
recommendation nobody asked for, or writes too much for the word bound — the written dossier has:
one entry per item of an inventory (a key point citing one of its documents and naming it), no
recommendation unless a choice is asked, no axis « Aucun constat sourcé » while its branch read
documents, and no figure that neither the writer nor the analysts wrote. No Prefect, no store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.dossier import RECOMMENDATION_SECTION, AxisSection, CitedText, Dossier, KeyPoint, render_body
from veille.roles.analyst import Finding, Findings
from veille.roles.base import Role
from veille.roles.writer import WriterInput
from veille.steps.analyse import Analysis
from veille.steps.inventory import Coverage, coverage_of, needed_documents, numbered
from veille.steps.numbering import number_findings
from veille.steps.write import sanitize_dossier, write_draft

NAMES = ["Alpaga Emploi", "Bergeronnette", "Castor Stages", "Dauphin Insertion", "Epeire", "Fennec Recrute"]
# What analysts and writers state; the figures are theirs (code may never add one).
STATEMENTS = [
    "Le service annonce 1 200 usagers actifs.",
    "Le service aide les demandeurs d'emploi à trouver un stage.",
    "Le taux de retour à l'emploi atteint 35 % après six mois.",
    "Le service a été abandonné faute de budget.",
    "Le catalogue compte 65 offres.",
]
WRITER_TEXTS = [*STATEMENTS, *(f"{n} recense 4 500 solutions." for n in NAMES), "Un point sans nom."]
_NUMBER_RE = re.compile(r"\d[\d  ]*")


@dataclass(frozen=True)
class _Meta:
    id: str
    title: str
    date: str = "date inconnue"
    source_type: str = "markdown"


@st.composite
def inventories(draw: st.DrawFn) -> tuple[list[Analysis], dict[str, _Meta]]:
    """Branches reading the documents of 1–6 items (one or two sheets each), some with findings."""
    n_items = draw(st.integers(min_value=1, max_value=len(NAMES)))
    n_axes = draw(st.integers(min_value=1, max_value=3))
    metadata: dict[str, _Meta] = {}
    reads: dict[int, list[str]] = {a: [] for a in range(1, n_axes + 1)}
    found: dict[int, list[Finding]] = {a: [] for a in range(1, n_axes + 1)}
    for name in NAMES[:n_items]:
        for _ in range(draw(st.integers(min_value=1, max_value=2))):
            doc_id = f"doc-{len(metadata) + 1:02d}"
            metadata[doc_id] = _Meta(id=doc_id, title=name)
            axis = draw(st.integers(min_value=1, max_value=n_axes))
            reads[axis].append(doc_id)
            for statement in draw(st.lists(st.sampled_from(STATEMENTS), max_size=2, unique=True)):
                found[axis].append(Finding(statement=statement, doc_ids=[doc_id]))
    analyses = [
        Analysis(
            subtask_id=f"st-{a}",
            question=f"Que fait chaque service recensé, volet {a} ?",
            doc_ids=reads[a],
            findings=Findings(findings=found[a]),
        )
        for a in reads
    ]
    return analyses, metadata


def written_input(analyses: list[Analysis], metadata: dict[str, _Meta], kind: str, max_words: int) -> Any:
    """The writer's input and what it owes, as veille.steps.write.write_sourced_draft builds them."""
    data, _ = number_findings(
        analyses, metadata, request_title="Services : inventaire", request="Recense chaque service.",
        max_words=max_words,
    )  # fmt: skip
    data = data.model_copy(update={"kind": kind})
    needed = needed_documents(analyses, data.sources, kind == "inventory")
    data = data.model_copy(update={"sources": numbered(data.sources, metadata, needed)})
    return data, coverage_of(analyses, data, kind == "inventory")


class _Result:
    def __init__(self, output: Dossier) -> None:
        self.output = output
        self.dropped: tuple[()] = ()


class HostileWriter:
    """Answers the writer with a drawn structure, not held to the request's schema (a recommendation
    always; sections omitted, points citing any number, with or without the items' names)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def ask(self, role: Role[Any, Any], data: WriterInput, *, subtask_id: str | None = None) -> Any:
        numbers = [s.number for s in data.sources] + [999]  # 999: no source
        cited = st.lists(st.sampled_from(numbers), min_size=1, max_size=3)
        point = st.builds(KeyPoint, text=st.sampled_from(WRITER_TEXTS), citations=cited)
        section = st.builds(
            AxisSection, axis=st.sampled_from([*data.axes, "st-99"]), points=st.lists(point, max_size=4)
        )
        cited_text = st.builds(CitedText, text=st.sampled_from(WRITER_TEXTS), citations=cited)
        answer = self.data.draw(
            st.builds(
                Dossier,
                synthesis=st.lists(cited_text, min_size=1, max_size=3),
                sections=st.lists(section, max_size=len(data.axes) + 1),
                uncertainties=st.lists(cited_text, max_size=2),
                recommendation=st.lists(cited_text, min_size=1, max_size=2),
            )
        )
        return _Result(answer)


def _figures(text: str) -> set[str]:
    return {re.sub(r"\D", "", m) for m in _NUMBER_RE.findall(text)}


def _holds(dossier: Dossier, data: WriterInput, coverage: Coverage, given_figures: set[str]) -> None:
    body = render_body(dossier, data.axes)
    if data.kind != "choice":
        assert dossier.recommendation is None
        assert f"## {RECOMMENDATION_SECTION}" not in body
    points = [p for s in dossier.sections for p in s.points]
    for item in coverage.items:  # one entry per item: a point citing one of its documents, naming it
        assert any(
            set(p.citations) & set(item.sources) and item.name.casefold() in p.text.casefold() for p in points
        ), (item, points)
    for entry in coverage.axes:  # no axis empty while its branch read documents
        assert any(s.points for s in dossier.sections if s.axis == entry.axis), entry.axis
    valid = {s.number for s in data.sources}
    for point in points:
        assert point.citations and set(point.citations) <= valid
        assert _figures(point.text) <= given_figures, point.text  # code adds no figure


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inventory=inventories(),
    kind=st.sampled_from(["choice", "inventory", "evolution", "survey"]),
    max_words=st.sampled_from([40, 10_000]),
    data=st.data(),
)
def test_the_written_dossier_follows_the_request_whatever_the_writer_wrote(
    inventory: tuple[list[Analysis], dict[str, _Meta]], kind: str, max_words: int, data: st.DataObject
) -> None:
    analyses, metadata = inventory
    writer_input, coverage = written_input(analyses, metadata, kind, max_words)
    assert len(coverage.items) == (len({m.title for m in metadata.values()}) if kind == "inventory" else 0)
    dossier, _alerts = write_draft(HostileWriter(data), writer_input, coverage=coverage)
    given_figures = {f for t in [*WRITER_TEXTS, *STATEMENTS] for f in _figures(t)}
    _holds(dossier, writer_input, coverage, given_figures)
    # A reviser dropping every point is sanitised back the same way (the review's sanitising).
    emptied = dossier.model_copy(update={"sections": [AxisSection(axis=a) for a in writer_input.axes]})
    revised, _ = sanitize_dossier(
        emptied, writer_input.sources, list(writer_input.axes), max_words=max_words, coverage=coverage
    )
    _holds(revised, writer_input, coverage, given_figures)


def test_an_item_without_a_finding_is_said_not_stated_with_its_document_cited() -> None:
    analyses = [
        Analysis(
            subtask_id="st-1",
            question="Que fait chaque service ?",
            doc_ids=["doc-01", "doc-02"],
            findings=Findings(
                findings=[Finding(statement="Le service annonce 1 200 usagers.", doc_ids=["doc-01"])]
            ),
        )
    ]
    metadata = {"doc-01": _Meta("doc-01", "Alpaga Emploi"), "doc-02": _Meta("doc-02", "Bergeronnette")}
    data, coverage = written_input(analyses, metadata, "inventory", 10_000)
    silent = Dossier(
        synthesis=[CitedText(text="Deux services.", citations=[1])], sections=[], recommendation=None
    )
    dossier, alerts = sanitize_dossier(silent, data.sources, list(data.axes), coverage=coverage)
    texts = {p.text: p.citations for s in dossier.sections for p in s.points}
    assert texts == {
        "Alpaga Emploi : Le service annonce 1 200 usagers.": [1],
        "Bergeronnette : non renseigné dans les sources": [2],
    }
    assert [a.code for a in alerts if a.code == "report.owed_entries"] == ["report.owed_entries"]
