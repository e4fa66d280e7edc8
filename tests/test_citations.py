"""Numbered sources (seed 004): stable numbering, de-dup, orphans, renumbering, bibliography by code."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from veille.citations import (
    SourceRegistry,
    bibliography,
    cited_numbers,
    invalid_citations,
    normalize_citations,
    renumber_citations,
    strip_citations,
)
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry, render_body
from veille.roles.analyst import ContradictionNote, Finding, Findings
from veille.roles.writer import NumberedContradiction, SourceRef
from veille.steps.analyse import Analysis
from veille.steps.finalize import finalize_report
from veille.steps.write import number_findings, sanitize_dossier
from veille.textstats import MODEL_SECTIONS, section_order, split_sections


@dataclass(frozen=True)
class Meta:
    id: str
    title: str
    date: str = "2026-01-01"
    source_type: str = "note"
    url: str | None = None


DOCS = {i: Meta(i, f"Titre {i}") for i in ("doc-a", "doc-b", "doc-c", "doc-d")}


def _ref(number: int, doc_id: str) -> SourceRef:
    return SourceRef(number=number, id=doc_id, title=f"Titre {doc_id}", date="2026-01-01", source_type="note")


def test_invalid_citations_seed_example() -> None:
    assert invalid_citations("A [1] B [4]", [object(), object()]) == [4]
    assert invalid_citations("A [0] B [2] C [3] [1, 7]", [_ref(1, "x"), _ref(2, "y")]) == [0, 3, 7]
    assert invalid_citations("aucune citation", []) == []


def test_registry_numbers_in_order_of_first_citation_and_deduplicates() -> None:
    registry = SourceRegistry(DOCS)
    assert registry.numbers(["doc-c", "doc-a", "doc-c"]) == [1, 2]
    assert registry.number("doc-b") == 3
    assert registry.number("doc-c") == 1  # same document found again keeps its number
    assert [(s.number, s.id) for s in registry.sources()] == [(1, "doc-c"), (2, "doc-a"), (3, "doc-b")]
    with pytest.raises(KeyError, match="doc-z"):
        registry.number("doc-z")


def _analysis(st: str, *findings: list[str], status: str = "ok", contradictions=()) -> Analysis:
    return Analysis(
        subtask_id=st,
        question=f"Question {st} ?",
        doc_ids=[],
        status=status,  # type: ignore[arg-type]
        findings=Findings(
            findings=[Finding(statement=f"Fait {st}.{n}", doc_ids=ids) for n, ids in enumerate(findings)],
            contradictions=list(contradictions),
        ),
    )


def test_numbering_is_stable_across_branches_and_skips_failed_ones() -> None:
    analyses = [
        _analysis("st-1", ["doc-b"], ["doc-a", "doc-b"]),
        _analysis("st-2", ["doc-d"], status="failed"),
        _analysis(
            "st-3",
            ["doc-a", "doc-c"],
            contradictions=[
                ContradictionNote(doc_ids=["doc-c", "doc-a"], retained="doc-a", reason="plus récent")
            ],
        ),
    ]
    data, sources = number_findings(analyses, DOCS, request_title="T", request="R")
    assert [(s.number, s.id) for s in sources] == [(1, "doc-b"), (2, "doc-a"), (3, "doc-c")]
    assert [f.sources for f in data.findings] == [[1], [2, 1], [2, 3]]
    assert data.contradictions == [
        NumberedContradiction(subtask_id="st-3", retained=[2], rejected=[3], reason="plus récent")
    ]
    assert list(data.axes) == ["st-1", "st-3"]  # the failed branch has no section
    assert data.missing_axes == ["Question st-2 ?"]
    assert "doc-d" not in {s.id for s in sources}


def test_normalize_and_cited_numbers() -> None:
    assert normalize_citations("x [1, 3] y [2;4] z [5][5]") == "x [1][3] y [2][4] z [5]"
    assert cited_numbers("b [3] a [1][3] c [2]") == [3, 1, 2]


def test_strip_citations_removes_only_the_given_numbers() -> None:
    assert strip_citations("Un fait [1][9]. Un autre [9].", [9]) == "Un fait [1]. Un autre."


def test_renumber_in_order_of_first_appearance_keeps_only_cited_sources() -> None:
    sources = [_ref(1, "doc-a"), _ref(2, "doc-b"), _ref(3, "doc-c"), _ref(4, "doc-d")]
    text, kept = renumber_citations("B [3]. A [1]. C [3][2].", sources)
    assert text == "B [1]. A [2]. C [1][3]."
    assert [(s.number, s.id) for s in kept] == [(1, "doc-c"), (2, "doc-a"), (3, "doc-b")]


def test_bibliography_is_built_from_state() -> None:
    refs = [
        _ref(2, "doc-b"),
        SourceRef(
            number=1,
            id="doc-a",
            title="Banc",
            date="2026-07-08",
            source_type="benchmark-interne",
            url="https://x.example/a",
        ),
    ]
    lines = bibliography(refs).splitlines()
    assert lines[0].startswith("- [1] **doc-a**") and "Banc" in lines[0] and "2026-07-08" in lines[0]
    assert "benchmark-interne" in lines[0] and "https://x.example/a" in lines[0]
    assert lines[1].startswith("- [2] **doc-b**")


def test_finalize_report_ships_no_orphan_and_a_code_built_sources_section() -> None:
    # An unsanitised structure (orphan [7]): finalize strips it anyway.
    dossier = Dossier(
        synthesis=[CitedText(text="Un", citations=[2]), CitedText(text="Deux", citations=[7]),
                   CitedText(text="Trois", citations=[1])],
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text="Fait", citations=[1, 2])])],
        uncertainties=[CitedText(text="Rien.")],
        recommendation=[CitedText(text="Choisir A", citations=[1])],
    )  # fmt: skip
    final = finalize_report(
        "Mon titre", dossier, [_ref(1, "doc-a"), _ref(2, "doc-b")], {"st-1": "st-1 — Débit"}, ["Coût ?"]
    )
    assert final.removed_orphans == [7]
    assert invalid_citations(final.markdown.split("## Sources")[0], final.sources) == []
    assert final.markdown.startswith("# Mon titre\n")
    assert final.markdown.count("## Sources") == 1
    sections = split_sections(final.markdown)
    assert section_order(final.markdown) == [*MODEL_SECTIONS, "Sources"]
    assert sections["Synthèse"].startswith("Un [1].")  # doc-b is cited first, so it becomes [1]
    assert "### st-1 — Débit" in sections["Points clés"]
    assert "Coût ?" in sections["Ce qui reste incertain"]
    assert sections["Sources"].splitlines()[0].startswith("- [1] **doc-b**")


def test_bibliography_labels_every_item_with_its_citation_number() -> None:
    """No Markdown ordered list: renderers renumber it and the Prefect UI clips numbers >= 10."""
    refs = [_ref(n, f"doc-{n:02d}") for n in range(1, 13)]
    lines = bibliography(refs).splitlines()
    assert [re.match(r"- \[(\d+)\] \*\*doc-(\d+)\*\*", line).groups() for line in lines] == [  # type: ignore[union-attr]
        (str(n), f"{n:02d}") for n in range(1, 13)
    ]
    assert not [line for line in lines if re.match(r"\s*\d+[.)]\s", line)]


def test_sanitize_keeps_only_valid_citations_and_names_what_it_removed() -> None:
    sources = [_ref(1, "doc-a"), _ref(2, "doc-b"), _ref(3, "doc-c")]
    dossier = Dossier(
        synthesis=[CitedText(text="## Sources\n\n1. inventée [9]", citations=[1])],
        sections=[
            AxisSection(axis="st-1", points=[
                KeyPoint(text="Fait sourcé [2]", citations=[1]),
                KeyPoint(text="Fait sans source", citations=[8]),
                KeyPoint(text="Le prix passe à 2 900 EUR", citations=[3]),
            ]),
            AxisSection(axis="st-9", points=[KeyPoint(text="Axe inconnu", citations=[1])]),
        ],
        contradictions=[
            LedgerEntry(subject="Prix", retained=[2], rejected=[3], reason="3 600 EUR retenu contre 2 900 EUR"),
            LedgerEntry(subject="Sans côté", retained=[1], rejected=[1, 7], reason="?"),
        ],
    )  # fmt: skip
    clean, alerts = sanitize_dossier(dossier, sources, ["st-1", "st-2"])
    assert [s.axis for s in clean.sections] == ["st-1", "st-2"]  # one per axis, unknown dropped
    points = clean.sections[0].points
    assert [(p.text, p.citations) for p in points[:1]] == [("Fait sourcé", [1, 2])]
    assert len(points) == 2 and points[1].superseded  # cites only the rejected side, quotes its figure
    assert clean.synthesis == []  # the model's own "## Sources" is dropped: sections are code's
    assert len(clean.contradictions) == 1
    codes = {a.code for a in alerts}
    assert {"report.orphan_citation", "report.uncited_point", "report.unknown_axis", "report.model_heading",
            "report.invalid_contradiction", "report.superseded_point"} <= codes  # fmt: skip
    rendered = render_body(clean, {"st-1": "st-1 — Prix", "st-2": "st-2 — Sécurité"})
    assert section_order(rendered) == list(MODEL_SECTIONS)  # a text cannot open a heading
    assert "(remplacé) [3]." in rendered and invalid_citations(rendered, sources) == []
