"""The offline dossier on every test corpus under tests/corpora/ (issue 12): the guarantees code
gives whatever the corpus.

Each corpus runs through the library pipeline (ingest → plan → analysts → writer → review → final
report, no Prefect: testkit/offline_pipeline.py ``run_bundled_pipeline``). Checked from the corpus's
own files, never from literals: every section heading with content, a recommendation, every ledger
entry naming retained and rejected sources of that run, no key point left unmarked on the rejected
side of a contradiction, no orphan citation. How many of the reference's contradictions the
offline analyst finds varies by corpus: `bench/corpora_dossier.py` prints it (docs/offline-engine.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from testkit.offline_pipeline import run_bundled_pipeline
from veille.citations import invalid_citations
from veille.corpus.reference import load_reference
from veille.corpus.request import load_request
from veille.dossier import (
    KEY_POINTS_SECTION,
    LEDGER_SECTION,
    RECOMMENDATION_SECTION,
    ledger_entries,
    rendered_key_points,
)
from veille.graders.dossier import StructuralChecks
from veille.language import language, likely_language
from veille.offline import lexicon
from veille.offline.figures import figure_unit
from veille.offline.text import split_sentences, table_sentences
from veille.textstats import MODEL_SECTIONS, split_sections

CORPORA_DIR = Path(__file__).resolve().parent / "corpora"
CORPORA = sorted(p for p in CORPORA_DIR.iterdir() if (p / "request.md").is_file())


@pytest.fixture(params=CORPORA, ids=[p.name for p in CORPORA], scope="module")
def dossier(request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any]]:
    return request.param, run_bundled_pipeline(request.param)


def test_every_section_and_a_recommendation(dossier: tuple[Path, dict[str, Any]]) -> None:
    _, out = dossier
    sections = split_sections(out["report"])
    # Sections follow the request (issue 37 item 5): a recommendation answers a choice only.
    choice = out["writer_input"]["kind"] == "choice"
    for name in (*MODEL_SECTIONS, "Sources"):
        if name == RECOMMENDATION_SECTION and not choice:
            assert name not in sections, "a recommendation no choice asked for"
            continue
        assert sections.get(name, "").strip(), f"section {name!r} missing or empty"
    body = out["report"].split("\n## Sources")[0]
    assert invalid_citations(body, [None] * len(out["report_sources"])) == []


def test_ledger_entries_resolve_and_no_rejected_point_is_left_unmarked(
    dossier: tuple[Path, dict[str, Any]],
) -> None:
    corpus, out = dossier
    sections = split_sections(out["report"])
    numbers = {s["number"] for s in out["report_sources"]}
    entries = ledger_entries(sections.get(LEDGER_SECTION, ""))
    for retained, rejected, line in entries:
        assert retained and rejected, line
        assert set(retained) | set(rejected) <= numbers, line
        assert not set(retained) & set(rejected), line
    reference = load_reference(corpus)
    assert reference is not None
    ledger = StructuralChecks()._ledger(reference.facts, out["report"], out["report_sources"])
    assert ledger.details["superseded_unmarked"] == [], ledger.details
    # The rejected figure of an entry (« X retenu contre Y ») is not quoted, unmarked, by a key point
    # sourced only from the rejected side.
    points = rendered_key_points(sections[KEY_POINTS_SECTION])
    for _, rejected, line in entries:
        for figure in re.findall(r"retenu contre (.+?)(?=[.;](?:\s|$)|$)", line):
            quoting = [
                p.text
                for p in points
                if not p.superseded and figure.strip() in p.text and set(p.citations) <= set(rejected)
            ]
            assert not quoting, (figure, quoting)


def test_a_table_cell_reads_as_a_sentence_labelled_by_its_row_and_column() -> None:
    body = "Un texte.\n\n| offre | latence | prix |\n|---|---:|---|\n| Alpha | 12 ms | 3 EUR |\n| Beta | | 4 EUR |\n"
    assert split_sentences(body) == ["Un texte."]  # findings come from prose; cells are compared as claims
    assert table_sentences(body) == [
        "Alpha : latence 12 ms.",
        "Alpha : prix 3 EUR.",
        "Beta : prix 4 EUR.",
    ]


def test_spellings_of_one_unit_compare() -> None:
    assert figure_unit("3 heures") == figure_unit("4 h") == "h"
    assert figure_unit("12 €") == figure_unit("12 EUR") == "eur"
    assert figure_unit("12 ms") != figure_unit("12 s")


def test_axis_headings_carry_no_question_framing(dossier: tuple[Path, dict[str, Any]]) -> None:
    # A heading names the axis; the sub-task question's framing (« Dans le cadre de « T », que
    # disent les documents sur … », "Within « T », what do the documents say about …") is template
    # text, in whichever language the planner wrote it.
    _, out = dossier
    headings = [line for line in out["report"].splitlines() if line.startswith("### ")]
    assert headings
    framing = re.compile(r"«|dans le cadre de|within|disent les documents|documents say", re.IGNORECASE)
    assert [h for h in headings if framing.search(h)] == []


_QUOTE_RE = re.compile(r"«[^»]*»(?:\s*\([a-z]{2}\))?")


def _shown_sentences(text: str) -> list[str]:
    """The sentences of a key point or ledger line the report writes as its own: quotes « … » (xx)
    and a leading « Subject — » left out."""
    head, sep, rest = text.partition(" — ")
    bare = _QUOTE_RE.sub(" ", rest if sep and len(head.split()) <= 4 else text)
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(bare.split())) if len(s.strip(" .")) > 1]


def test_no_sentence_is_a_piece_of_a_cut_one(dossier: tuple[Path, dict[str, Any]]) -> None:
    """A key point or ledger sentence opening on a clause conjunction (« Mais impossible de … »,
    « Et sur la source … ») is the tail of a cut sentence, unless a document wrote it so."""
    corpus, out = dossier
    sections = split_sections(out["report"])
    conjunctions = {
        c
        for lang in lexicon.LANGS
        for c in lexicon.groups("sentence_cuts", lang).get("clause_conjunctions", ())
    }
    documents = " ".join(p.read_text(encoding="utf-8") for p in sorted((corpus / "docs").rglob("*.md")))
    texts = [p.text for p in rendered_key_points(sections[KEY_POINTS_SECTION])]
    texts += [line.split("]. ", 1)[-1] for *_, line in ledger_entries(sections.get(LEDGER_SECTION, ""))]
    pieces = [
        s
        for text in texts
        for s in _shown_sentences(text)
        if any(s.startswith(f"{c[:1].upper()}{c[1:]} ") for c in conjunctions)
        and s.rstrip(".") not in documents
    ]
    assert pieces == []


def test_no_foreign_key_point_is_shown_as_a_sentence_of_the_request(
    dossier: tuple[Path, dict[str, Any]],
) -> None:
    """Under a French request a key point is written as French only when French is the language it
    most resembles; otherwise it is a quote « … » (en), or left out (issue 28 audit)."""
    corpus, out = dossier
    request = load_request(corpus)
    if language(f"{request.title} {request.text}") not in {"", "fr"}:
        return  # under an English request the writer quotes nothing (veille.offline.writer)
    points = rendered_key_points(split_sections(out["report"])[KEY_POINTS_SECTION])
    shown = [s for p in points for s in _shown_sentences(p.text)]
    assert [(s, likely_language(s)) for s in shown if likely_language(s)[0] not in {"", "fr"}] == []
