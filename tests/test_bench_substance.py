"""The checker of bench/substance.py (bench/substance_checks.py) on small hand-made inputs: a
misattributed or invented figure is counted, a supported one is not; file-clock dates, cut headings
and internal ids are found. Not the bench itself (it runs the whole pipeline on every corpus)."""

from __future__ import annotations

import importlib.util
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_substance_checks", ROOT / "bench" / "substance_checks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


checks = _load()
SUBJECTS = {"Qdrant": ["Qdrant"], "pgvector": ["pgvector"], "Milvus": ["Milvus"]}
COMPARISON = (
    "Comparatif des bases",
    "Qdrant tient une latence p95 de 12 ms.\n\npgvector tient 35 ms en production.",
)


def _report(*items: str) -> str:
    return (
        "# Dossier\n\n## Points clés\n\n"
        + "\n".join(items)
        + "\n\n## Sources\n\n- [1] **doc-01** — Comparatif\n"
    )


def test_a_supported_figure_is_not_counted() -> None:
    result = checks.check_figures(_report("- Qdrant : latence p95 de 12 ms [1]."), {1: COMPARISON}, SUBJECTS)
    assert (result.checked, result.unsupported, result.misattributed) == (1, [], [])


def test_a_figure_given_to_the_wrong_subject_is_misattributed() -> None:
    result = checks.check_figures(_report("- Qdrant : latence p95 de 35 ms [1]."), {1: COMPARISON}, SUBJECTS)
    assert result.checked == 1 and result.unsupported == []
    assert result.misattributed == ["- Qdrant : latence p95 de 35 ms [1]."]


def test_an_invented_figure_or_another_unit_is_unsupported() -> None:
    report = _report("- Qdrant coûte 4 200 EUR par an [1].", "- Qdrant : 12 % de rappel en plus [1].")
    result = checks.check_figures(report, {1: COMPARISON}, SUBJECTS)
    assert result.checked == 2 and len(result.unsupported) == 2 and result.misattributed == []


def test_a_figure_quoted_as_written_is_supported_whatever_its_context_reads() -> None:
    """« 5 h 10 retenu »: the number reader now reads it as 5 h 10 (it read 5 h and 10 « retenu »
    before the verifier's fix in veille/numberunits.py); the document's « 5 h 10 » is the same words."""
    doc = (
        "Essais",
        "| base | restauration |\n|---|---|\n| Brumal 6 | 5 h 10 |\n\nBrumal annonce moins de 2 heures.",
    )
    ok = checks.check_figures(_report("- Brumal : 5 h 10 retenu contre moins de 2 heures [1]."), {1: doc}, {})
    assert ok.checked == 2 and ok.unsupported == []  # 5 h 10 and 2 heures
    wrong = checks.check_figures(
        _report("- Brumal : 5 h 20 retenu contre moins de 2 heures [1]."), {1: doc}, {}
    )
    assert len(wrong.unsupported) >= 1


def test_a_figure_cited_to_a_document_that_lacks_it_is_unsupported() -> None:
    report = _report("- Qdrant : latence p95 de 12 ms [1].")
    other = ("Milvus en production", "Milvus tient une latence p95 de 20 ms.")
    assert len(checks.check_figures(report, {1: other}, SUBJECTS).unsupported) == 1


def test_a_document_about_one_subject_alone_supports_its_figures_without_naming_it() -> None:
    alone = ("pgvector en production", "La latence p95 mesurée est de 35 ms.")
    right = checks.check_figures(_report("- pgvector : 35 ms [1]."), {1: alone}, SUBJECTS)
    wrong = checks.check_figures(_report("- Qdrant : 35 ms [1]."), {1: alone}, SUBJECTS)
    assert right.misattributed == [] and len(wrong.misattributed) == 1


def test_a_table_row_is_read_with_its_header_and_its_own_subject() -> None:
    table = ("Banc", "| base | latence p95 (ms) |\n|---|---|\n| Qdrant | 12 |\n| pgvector | 35 |")
    right = checks.check_figures(_report("- Qdrant : 12 ms [1]."), {1: table}, SUBJECTS)
    wrong = checks.check_figures(_report("- Qdrant : 35 ms [1]."), {1: table}, SUBJECTS)
    assert (right.checked, right.unsupported, right.misattributed) == (1, [], [])
    assert len(wrong.misattributed) == 1


def test_each_figure_goes_to_the_nearest_subject_before_it() -> None:
    report = _report(
        "- Qdrant tient 12 ms et pgvector 35 ms [1].", "- Qdrant tient 35 ms et pgvector 12 ms [1]."
    )
    result = checks.check_figures(report, {1: COMPARISON}, SUBJECTS)
    assert result.checked == 4 and len(result.misattributed) == 2


def test_uncited_framing_sentences_are_not_checked_but_items_cite_all_their_sentences() -> None:
    report = (
        "# D\n\n## Synthèse\n\nCe dossier compare 3 bases en 4 volets. Qdrant tient 12 ms [1].\n\n"
        "## Points clés\n\n- Qdrant tient 35 ms. Voir le banc [1].\n\n## Sources\n"
    )
    result = checks.check_figures(report, {1: COMPARISON}, SUBJECTS)
    assert result.checked == 2 and len(result.misattributed) == 1 and result.unsupported == []


@settings(max_examples=60, deadline=None)
@given(
    value=st.integers(min_value=1, max_value=99_999),
    other=st.integers(min_value=1, max_value=99_999),
    unit=st.sampled_from(["ms", "EUR", "%", "Go"]),
    subject=st.sampled_from(sorted(SUBJECTS)),
)
def test_property_copied_figures_pass_and_absent_ones_are_counted(
    value: int, other: int, unit: str, subject: str
) -> None:
    """A figure copied with its subject from a cited passage is never counted; a value that no cited
    passage holds is always counted unsupported."""
    doc = ("Notes", f"{subject} : {value} {unit} mesurés.\n\nAutre mesure : {other} {unit}.")
    copied = checks.check_figures(_report(f"- {subject} : {value} {unit} [1]."), {1: doc}, SUBJECTS)
    assert copied.checked == 1 and copied.unsupported == [] and copied.misattributed == []
    absent = value + other + 1
    invented = checks.check_figures(_report(f"- {subject} : {absent} {unit} [1]."), {1: doc}, SUBJECTS)
    assert len(invented.unsupported) == 1


def test_headings_cut_or_carrying_an_id() -> None:
    report = (
        "# T\n\n### st-4 — Employeurs à se trouver…\n\n### Coût global\n\n### Risques ...\n\n"
        "### Ce qu'il fait et\n\n### Sécurité et conformité RGPD\n"
    )
    cut, ids = checks.heading_problems(report)
    assert cut == ["### st-4 — Employeurs à se trouver…", "### Risques ...", "### Ce qu'il fait et"]
    assert ids == ["### st-4 — Employeurs à se trouver…"]


def test_report_sources_and_file_clock_dates(tmp_path: Path) -> None:
    undated = tmp_path / "a.md"
    undated.write_text("---\ntitle: Fiche\nphases:\n  - start: 2020-01-01\n---\n\nTexte.\n", encoding="utf-8")
    dated = tmp_path / "b.md"
    dated.write_text("---\ntitle: Note\ndate: 2026-03-02\n---\n\nTexte.\n", encoding="utf-8")
    stamp = datetime(2026, 3, 2, 12, tzinfo=UTC).timestamp()
    for path in (undated, dated):
        os.utime(path, (stamp, stamp))
    report = (
        "# T\n\n## Sources\n\n- [1] **a** — Fiche — 2026-03-02 — markdown\n"
        "- [2] **b** — Note — 2026-03-02 — markdown\n- [3] **c** — Autre — date inconnue — markdown\n"
    )
    sources = checks.report_sources(report)
    assert [(s.number, s.doc_id, s.date) for s in sources] == [
        (1, "a", "2026-03-02"),
        (2, "b", "2026-03-02"),
        (3, "c", None),
    ]
    assert checks.file_clock_dates(sources, {"a": undated, "b": dated}) == ["a"]
    os.utime(undated, (stamp + 86_400 * 3, stamp + 86_400 * 3))  # another day: not the file clock
    assert checks.file_clock_dates(sources, {"a": undated, "b": dated}) == []


def test_date_fields_of_each_front_matter_style() -> None:
    assert checks.has_date_field("---\ndate: 2024-01-19\n---\nx")
    assert checks.has_date_field("+++\ntitle = 'x'\ndate = 2024-01-19\n+++\nx")
    assert checks.has_date_field("Title: Post\nDate: 2024-01-19\n\nBody")
    assert not checks.has_date_field('+++\npath = "2025/09/12/x"\ntitle = "x"\n+++\nBody')
    assert not checks.has_date_field("---\ntitle: x\nevents:\n  - date: 2017-01-01\n---\nBody")
    assert not checks.has_date_field("Une note sans date.\n\nPublié le 5 février 2026.")


def test_ledger_entries_give_their_retained_and_rejected_sources() -> None:
    report = (
        "# T\n\n## Contradictions tranchées\n\n- Orvet, axe st-1 — retenu : [2] ; écarté : [10][11]. "
        "La note prime.\n- Une divergence sans sides [4].\n\n## Ce qui reste incertain\n\n- Rien [5].\n"
    )
    assert checks.ledger_entries(report, "Contradictions tranchées") == [([2], [10, 11]), ([4], [])]
    assert checks.ledger_entries("# T\n\n## Synthèse\n\nx [1].\n", "Contradictions tranchées") == []


SUBSTANCE = sorted((ROOT / "tests" / "corpora").glob("*/reference/substance.yaml"))


def test_hand_written_substance_files_name_real_documents_consistently() -> None:
    """Each corpus's reference/substance.yaml (written before its first run, read by the bench)
    names existing documents, keeps on- and off-topic apart, and pairs on-topic documents."""
    import yaml

    assert len(SUBSTANCE) >= 3
    for path in SUBSTANCE:
        corpus = path.parents[1]
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        ids = {p.stem for p in (corpus / "docs").glob("*.md")}
        on, off = set(data["on_topic"]), set(data["off_topic"])
        period = set(data.get("out_of_period") or [])
        assert on and off and not on & off and not (on | off) & period, corpus.name
        assert on | off | period <= ids, (corpus.name, sorted((on | off | period) - ids))
        for pair in data["pairs"]:
            assert len(pair["docs"]) >= 2 and set(pair["docs"]) <= on, (corpus.name, pair)
            assert pair["newer"] in {*pair["docs"], "unknown"}, (corpus.name, pair)
        assert data["subjects"] and all(data["subjects"].values()), corpus.name
        for figure in data["figures"]:
            assert figure["doc"] in on and figure["subject"] in data["subjects"], (corpus.name, figure)
