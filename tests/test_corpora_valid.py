"""The test corpora under tests/corpora/ (and a generated one) are valid data for the pipeline.

Data checks only, no planner behaviour: each corpus ingests strictly through the real ingestion, its
request parses, its reference loads and names only existing ids, every figure of facts.yaml is written
verbatim in a document it can come from (and in the reference dossier), every contradiction keyword in
one of that contradiction's documents. ``traps.yaml`` (test-only, beside request.md) names the framing,
injection, off-topic and duplicate documents; the injection screen flags exactly the injection ones, so
structural tests can rely on it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from testkit.corpora.generate import generate_corpus
from veille.corpus.document import parse_document
from veille.corpus.reference import load_reference, unknown_reference_ids
from veille.corpus.request import load_request
from veille.corpus.terms import derive_terms
from veille.steps.screen_cache import screen_corpus
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue

CORPORA_DIR = Path(__file__).resolve().parent / "corpora"
CORPORA = sorted(p for p in CORPORA_DIR.iterdir() if (p / "request.md").is_file())
TRAP_KEYS = {"framing", "injection", "off_topic", "name_clash", "duplicates"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_corpus(tmp_path_factory.mktemp("generated") / "corpus", n_docs=200, seed=7)


@pytest.fixture(params=[*CORPORA, "generated-200"], ids=[*(p.name for p in CORPORA), "generated-200"])
def corpus(request: pytest.FixtureRequest) -> Path:
    if request.param == "generated-200":
        return request.getfixturevalue("generated")
    return request.param


def _traps(corpus: Path) -> dict[str, list]:
    data = yaml.safe_load((corpus / "traps.yaml").read_text(encoding="utf-8")) or {}
    gaps = data.pop("offline_gaps", None) or {}  # read by tests/test_corpora_plan.py
    assert set(gaps) <= {"read_apart", "not_placed", "placed_off_topic", "not_reused"}, sorted(gaps)
    facts = load_reference(corpus).facts if gaps else None
    ids = {c.id for c in facts.contradictions} if facts else set()
    assert set(gaps.get("read_apart") or []) <= ids, (gaps, sorted(ids))
    assert set(gaps.get("not_placed") or []) <= set(facts.keep if facts else []), gaps
    off_topic = set(facts.exclude if facts else []) | set(data.get("off_topic") or [])
    assert set(gaps.get("placed_off_topic") or []) <= off_topic, gaps
    assert set(data) <= TRAP_KEYS, sorted(set(data) - TRAP_KEYS)
    return {key: data.get(key) or [] for key in TRAP_KEYS}


def test_there_are_enough_corpora() -> None:
    assert len(CORPORA) >= 5, [p.name for p in CORPORA]


def test_corpus_is_valid(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "veille.duckdb"
    report = ingest_corpus(corpus, db, strict=True)
    n_files = len(list((corpus / "docs").glob("*.md")))
    assert (report.added, report.skipped, report.documents) == (n_files, 0, n_files)
    assert [a.code for a in report.alerts if a.severity != "info"] == []
    catalogue = read_catalogue(db)
    ids = [e.id for e in catalogue.entries]
    assert len(ids) == n_files

    request = load_request(corpus)
    assert request.title and request.text
    assert derive_terms(request), "the request names no term (products, acronyms)"

    reference = load_reference(corpus)
    assert reference is not None, "every test corpus has reference/dossier.md and facts.yaml"
    facts = reference.facts
    assert unknown_reference_ids(reference, ids) == []
    assert facts.keep and facts.exclude and facts.contradictions and facts.figures
    assert not set(facts.keep) & set(facts.exclude)
    grouped = {i for group in facts.groups for i in group}
    for c in facts.contradictions:  # a contradiction's documents are also a group (read together)
        assert set(c.docs) <= grouped, c.id

    docs = {p.stem: parse_document(p) for p in sorted((corpus / "docs").glob("*.md"))}
    docs = {d.id: d for d in docs.values()}
    not_excluded = [d for i, d in docs.items() if i not in facts.exclude]
    for figure in facts.figures:
        assert any(figure in d.body for d in not_excluded), f"figure {figure!r} is in no usable document"
        assert figure in reference.dossier, f"figure {figure!r} not in reference/dossier.md"
    for c in facts.contradictions:
        for keyword in c.keywords:
            assert any(keyword in docs[i].body for i in c.docs), f"{c.id}: {keyword!r} in none of {c.docs}"
            assert keyword in reference.dossier, f"{c.id}: {keyword!r} not in reference/dossier.md"

    traps = _traps(corpus)
    named = {i for key in TRAP_KEYS - {"duplicates"} for i in traps[key]}
    named |= {i for dup in traps["duplicates"] for i in dup}
    assert named <= set(ids), sorted(named - set(ids))
    assert set(traps["off_topic"]) <= set(facts.exclude)
    assert set(traps["name_clash"]) <= set(traps["off_topic"])
    assert set(traps["framing"]) <= set(facts.keep)
    assert traps["injection"], "every test corpus carries one injection"
    flagged = sorted(a.subject or "" for a in screen_corpus(db, catalogue.entries))
    assert flagged == sorted(traps["injection"])


def test_near_duplicates_are_near(corpus: Path) -> None:
    """Each duplicate set: same body (byte-identical or differing in at most a few lines)."""
    traps = _traps(corpus)
    docs = {d.id: d for d in (parse_document(p) for p in sorted((corpus / "docs").glob("*.md")))}
    for dup in traps["duplicates"]:
        first, *copies = (docs[i] for i in dup)
        for copy in copies:
            a, b = first.body.splitlines(), copy.body.splitlines()
            changed = len(set(a) ^ set(b))
            assert changed <= 6, (first.id, copy.id, changed)


def test_bodies_have_realistic_length(corpus: Path) -> None:
    for path in sorted((corpus / "docs").glob("*.md")):
        words = len(parse_document(path).body.split())
        assert 100 <= words <= 400, (path.name, words)


def test_generator_is_deterministic(tmp_path: Path) -> None:
    def digest(root: Path) -> str:
        h = hashlib.sha256()
        for p in sorted(root.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
        return h.hexdigest()

    a = generate_corpus(tmp_path / "a", n_docs=60, seed=3)
    b = generate_corpus(tmp_path / "b", n_docs=60, seed=3)
    c = generate_corpus(tmp_path / "c", n_docs=60, seed=4)
    assert digest(a) == digest(b) != digest(c)
    assert len(list((a / "docs").glob("*.md"))) == 60
