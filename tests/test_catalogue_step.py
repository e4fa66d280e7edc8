"""The catalogue step (veille/steps/catalogue.py): the planner input within a token budget, near-duplicate
collapsing and the BM25 shortlist, each document left out recorded with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from testkit.corpora.generate import generate_corpus
from tests.test_offline_fixtures import bundled_documents
from veille.corpus.request import load_request
from veille.docdates import date_text
from veille.roles.planner import CatalogueEntry, build_prompt, catalogue_line
from veille.settings import PROJECT_ROOT, Settings
from veille.steps.catalogue import planner_catalogue, planner_input, planner_tokens, rank_entries
from veille.steps.duplicates import collapse_duplicates

CORPORA_DIR = PROJECT_ROOT / "tests" / "corpora"


def _entries(corpus: Path) -> list[CatalogueEntry]:
    return [
        CatalogueEntry(
            id=d.id, date=date_text(d.date), source_type=d.source_type, title=d.title, summary=d.summary
        )
        for d in bundled_documents(corpus)
    ]


def _traps(corpus: Path) -> dict[str, list]:
    return yaml.safe_load((corpus / "traps.yaml").read_text(encoding="utf-8")) or {}


def test_under_budget_the_planner_prompt_is_unchanged(bundled_corpus: Path) -> None:
    settings = Settings(corpus_dir=bundled_corpus)
    request, entries = load_request(bundled_corpus), _entries(bundled_corpus)
    shown = planner_catalogue(request, entries, settings)
    assert shown.left_out == []
    assert shown.data == planner_input(request, entries, settings)
    assert build_prompt(shown.data) == build_prompt(planner_input(request, entries, settings))
    assert shown.tokens == planner_tokens(shown.data) <= settings.planner_token_budget


def test_copies_collapse_under_their_latest_member() -> None:
    corpus = CORPORA_DIR / "sauvegarde-doublons"
    collapsed = collapse_duplicates(_entries(corpus))
    expected = {}
    for original, *copies in _traps(corpus)["duplicates"]:
        group = [original, *copies]
        by_id = {e.id: e for e in _entries(corpus)}
        latest = max(group, key=lambda i: (by_id[i].date, i))
        expected.update({i: latest for i in group if i != latest})
    assert collapsed.copy_of == expected
    line = next(e for e in collapsed.entries if e.copies)
    assert catalogue_line(line).startswith(f"{line.id} (+{line.copies[0]}")


@pytest.mark.parametrize(
    "corpus",
    sorted(
        p for p in CORPORA_DIR.iterdir() if (p / "request.md").is_file() and not _traps(p).get("duplicates")
    ),
    ids=lambda p: p.name,
)
def test_corpora_without_copies_collapse_nothing(corpus: Path) -> None:
    assert collapse_duplicates(_entries(corpus)).copy_of == {}


def test_different_numbers_are_not_copies() -> None:
    def entry(i: str, title: str) -> CatalogueEntry:
        return CatalogueEntry(id=i, date="2026-01-01", source_type="x", title=title)

    entries = [
        entry("a", "Outil X : grille tarifaire 2026"),
        entry("b", "Outil X : grille tarifaire 2027"),
        entry("c", "Fiche produit"),
        entry("d", "Fiche produit"),
    ]
    assert collapse_duplicates(entries).copy_of == {}


@pytest.fixture(scope="module")
def generated_2000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_corpus(tmp_path_factory.mktemp("gen") / "corpus", n_docs=2000, seed=3)


def test_large_catalogue_fits_the_budget_and_records_what_it_leaves_out(generated_2000: Path) -> None:
    corpus = generated_2000
    entries = _entries(corpus)
    settings = Settings(corpus_dir=corpus)
    shown = planner_catalogue(load_request(corpus), entries, settings)
    assert shown.tokens <= settings.planner_token_budget
    ids = {e.id for e in shown.data.catalogue}
    left = {o.id: o for o in shown.left_out}
    assert ids | set(left) == {e.id for e in entries} and not ids & set(left)
    facts = yaml.safe_load((corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    assert set(facts["keep"]) <= ids  # the anchors are shown
    for original, *copies in _traps(corpus)["duplicates"]:
        group = [original, *copies]
        assert len(set(group) & ids) <= 1, group  # one line per group of copies
    assert {o.reason for o in shown.left_out} <= {"duplicate", "shortlist"}


def test_shortlist_keeps_the_relevant_lines(generated_2000: Path) -> None:
    corpus = generated_2000
    entries = _entries(corpus)
    settings = Settings(corpus_dir=corpus, planner_token_budget=2500)
    shown = planner_catalogue(load_request(corpus), entries, settings)
    assert shown.tokens <= 2500
    reasons = {o.reason for o in shown.left_out}
    assert reasons == {"duplicate", "shortlist"}
    ids = {e.id for e in shown.data.catalogue}
    traps = _traps(corpus)
    off_topic = (
        set(traps["off_topic"]) - set(traps.get("name_clash") or []) - set(traps.get("injection") or [])
    )
    assert not ids & off_topic  # off-topic lines rank last
    facts = yaml.safe_load((corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    assert set(facts["keep"]) <= ids  # the anchors (unique subjects) before repeated ones


def test_rank_puts_the_request_subjects_first(bundled_corpus: Path) -> None:
    data = planner_input(
        load_request(bundled_corpus), _entries(bundled_corpus), Settings(corpus_dir=bundled_corpus)
    )
    ranked = [e.id for e in rank_entries(data, data.catalogue)]
    facts = yaml.safe_load((bundled_corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    last = ranked[-len(facts["exclude"]) :]
    assert len(set(last) & set(facts["exclude"])) >= len(facts["exclude"]) - 2


def test_distinct_lines_are_shortlisted_and_the_anchors_planned(generated_2000: Path) -> None:
    """No two filler lines alike (each gets its own number): collapsing finds only the real copies,
    the BM25 shortlist has to choose among a thousand relevant lines, and the offline planner still
    places every anchor and reads each contradiction in one sub-task."""
    from veille.offline.planner import plan

    corpus = generated_2000
    facts = yaml.safe_load((corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    traps = _traps(corpus)
    fixed = set(facts["keep"]) | set(facts["exclude"]) | {i for group in traps["duplicates"] for i in group}
    entries = [
        e
        if e.id in fixed
        else e.model_copy(
            update={"title": f"{e.title} (fiche {n})", "summary": f"{e.summary} Référence {n}."}
        )
        for n, e in enumerate(_entries(corpus))
    ]
    settings = Settings(corpus_dir=corpus)
    shown = planner_catalogue(load_request(corpus), entries, settings)
    assert shown.tokens <= settings.planner_token_budget
    assert sum(1 for o in shown.left_out if o.reason == "shortlist") > 1000
    ids = {e.id for e in shown.data.catalogue}
    assert set(facts["keep"]) <= ids
    result = plan(shown.data)
    placed = {i for st in result.sub_tasks for i in st.doc_ids}
    assert set(facts["keep"]) <= placed, sorted(set(facts["keep"]) - placed)
    assert all(len(st.doc_ids) <= shown.data.max_docs for st in result.sub_tasks)
    for c in facts["contradictions"]:
        assert any(set(c["docs"]) <= set(st.doc_ids) for st in result.sub_tasks), c["id"]


def test_copies_are_found_on_the_text_whatever_their_titles() -> None:
    from veille.corpus.sections import text_fingerprint
    from veille.steps.duplicates import collapse_duplicates

    paragraphs = [
        f"Paragraphe {k} : le moteur Kestrel sert {k * 37} requêtes par minute en production."
        for k in range(10)
    ]
    text = "\n\n".join(paragraphs)
    edited = "\n\n".join(
        [*paragraphs[:9], "Paragraphe corrigé : Kestrel sert 999 requêtes par minute en production."]
    )
    other = "\n\n".join(p.replace("Kestrel", "Tamaris").replace("minute", "heure") for p in paragraphs)
    bodies = {
        "a": text,
        "b": "  " + text.replace("\n\n", "\n\n\n"),  # same words, another layout
        "c": edited,  # one paragraph of ten rewritten
        "d": other,  # another text
    }
    titles = {
        "a": "Kestrel en production",
        "b": "Notes du mardi",
        "c": "Retour d'expérience",
        "d": "Bilan annuel",
    }
    entries = [
        CatalogueEntry(id=i, date=f"2026-01-0{n + 1}", source_type="blog", title=titles[i])
        for n, i in enumerate(bodies)
    ]
    fingerprints = {i: (h, tuple(s)) for i, (h, s) in ((i, text_fingerprint(b)) for i, b in bodies.items())}
    collapsed = collapse_duplicates(entries, fingerprints)
    assert collapsed.copy_of == {"a": "c", "b": "c"}  # the most recent of the group is shown
    assert collapse_duplicates(entries).copy_of == {}  # titles alone say nothing here
