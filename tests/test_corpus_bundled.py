"""The bundled corpus (corpus/) against its own format and reference."""

from __future__ import annotations

from pathlib import Path

import yaml

from veille.corpus.document import parse_document
from veille.corpus.frontmatter import _FrontMatterLoader, _simple_front_matter, _split_front_matter
from veille.corpus.reference import load_reference, unknown_reference_ids
from veille.corpus.request import load_request
from veille.corpus.terms import derive_terms
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue


def test_bundled_corpus_ingests_strictly_without_alerts(bundled_corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "veille.duckdb"
    report = ingest_corpus(bundled_corpus, db, strict=True)
    assert (report.added, report.skipped, report.documents) == (40, 0, 40)
    assert report.alerts == []
    catalogue = read_catalogue(db)
    assert [e.id for e in catalogue.entries] == [f"doc-{i:02d}" for i in range(1, 41)]
    # The line the planner design (seed 001) is built around.
    assert "doc-03 | 2026-07-08 | benchmark-interne | Banc d'essai de juillet : Kestrel, Tamaris, Orvet" in (
        catalogue.lines
    )


def test_reference_names_only_existing_documents(bundled_corpus: Path) -> None:
    reference = load_reference(bundled_corpus)
    assert reference is not None
    ids = [parse_document(p).id for p in sorted((bundled_corpus / "docs").glob("*.md"))]
    assert unknown_reference_ids(reference, ids) == []
    named = {i for c in reference.facts.contradictions for i in c.docs} | set(reference.facts.exclude)
    assert named  # the check above is not vacuous


def test_request_terms(bundled_corpus: Path) -> None:
    request = load_request(bundled_corpus)
    terms = [t.lower() for t in derive_terms(request)]
    assert {"kestrel", "tamaris", "orvet"} <= set(terms)


def test_fast_front_matter_path_agrees_on_the_bundled_corpus(bundled_corpus: Path) -> None:
    for path in sorted((bundled_corpus / "docs").glob("*.md")):
        front, _, _ = _split_front_matter(path.read_text(encoding="utf-8"), path)
        fast = _simple_front_matter(front)
        if fast is not None:
            assert fast == yaml.load(front, Loader=_FrontMatterLoader), path
