"""request.md, reference/ (dossier.md + facts.yaml) and derive_terms."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixtures.corpus_factory import MINI_CORPUS, copy_mini_corpus
from veille.corpus.errors import CorpusError
from veille.corpus.reference import load_reference, unknown_reference_ids
from veille.corpus.request import Request, load_request, parse_request
from veille.corpus.terms import derive_terms


# -------------------------------------------------------------------------------------------- request
def test_load_request() -> None:
    request = load_request(MINI_CORPUS)
    assert request.title.startswith("Quel moteur d'inférence")
    assert request.terms == ["Kestrel", "Tamaris", "Orvet"]
    assert request.mandatory_mentions == ["coût sur 3 ans"]
    assert request.text.startswith("Nous devons choisir")


def test_missing_request_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    with pytest.raises(CorpusError) as info:
        load_request(tmp_path)
    assert str(tmp_path / "request.md") in str(info.value)
    assert "fichier de demande introuvable" in str(info.value)
    assert "attendu : un fichier request.md à la racine du corpus" in str(info.value)


def test_missing_corpus_folder(tmp_path: Path) -> None:
    with pytest.raises(
        CorpusError, match="dossier de corpus introuvable ; attendu : un dossier de corpus contenant"
    ):
        load_request(tmp_path / "nope")


@pytest.mark.parametrize(
    ("front", "field", "problem"),
    [
        ("terms: [Kestrel]\n", "title", "champ obligatoire absent"),
        ("title: T\nterms: Kestrel\n", "terms", "reçu : chaîne YAML"),
        ("title: T\nterms: [Kestrel, 3]\n", "terms[1]", "reçu : 3"),
        ("title: T\nmandatory_mentions: ['']\n", "mandatory_mentions[0]", "reçu : ''"),
    ],
)
def test_invalid_request_fields(tmp_path: Path, front: str, field: str, problem: str) -> None:
    path = tmp_path / "request.md"
    path.write_text(f"---\n{front}---\n\nTexte.\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        parse_request(path)
    assert info.value.field == field
    assert f"champ '{field}' : {problem}" in str(info.value)
    assert str(path) in str(info.value)


def test_empty_request_text(tmp_path: Path) -> None:
    path = tmp_path / "request.md"
    path.write_text("---\ntitle: T\n---\n\n  \n", encoding="utf-8")
    with pytest.raises(CorpusError, match="champ 'body' : le texte de la demande est vide"):
        parse_request(path)


def test_request_unknown_fields_are_returned(tmp_path: Path) -> None:
    path = tmp_path / "request.md"
    path.write_text("---\ntitle: T\naudience: direction\n---\n\nTexte.\n", encoding="utf-8")
    request, unknown = parse_request(path)
    assert request.title == "T"
    assert unknown == ["audience"]


# ------------------------------------------------------------------------------------------ reference
def test_load_reference() -> None:
    reference = load_reference(MINI_CORPUS)
    assert reference is not None
    assert reference.dossier.startswith("# Dossier de référence")
    facts = reference.facts
    assert facts.figures == ["1 420 tokens/s", "12 GPU"]
    assert facts.groups == [["doc-01", "doc-02"]]
    assert facts.keep == ["doc-03"]
    assert facts.exclude == ["doc-04"]
    assert [(c.id, c.docs, c.keywords) for c in facts.contradictions] == [
        ("C1", ["doc-01", "doc-02"], ["1 180"])
    ]


def test_no_reference_folder_means_none(tmp_path: Path) -> None:
    corpus = copy_mini_corpus(tmp_path / "c")
    shutil.rmtree(corpus / "reference")
    assert load_reference(corpus) is None


def test_reference_without_facts(tmp_path: Path) -> None:
    corpus = copy_mini_corpus(tmp_path / "c")
    (corpus / "reference" / "facts.yaml").unlink()
    with pytest.raises(
        CorpusError,
        match=r"facts\.yaml : fichier introuvable ; attendu : un dossier reference/ contenant dossier\.md et facts\.yaml",
    ):
        load_reference(corpus)


@pytest.mark.parametrize(
    ("facts", "field", "expected"),
    [
        ("exlude: [doc-04]\n", "exlude", "seulement figures, groups, keep, exclude, contradictions"),
        (
            "contradictions:\n  - {id: C1, docs: [doc-01], expected: x}\n",
            "contradictions.0.docs",
            "au moins deux",
        ),
        ("figures: [2650]\n", "figures.0", "la forme de facts.yaml"),
        ("keep: doc-01\n", "keep", "la forme de facts.yaml"),
    ],
)
def test_invalid_facts(tmp_path: Path, facts: str, field: str, expected: str) -> None:
    corpus = copy_mini_corpus(tmp_path / "c")
    path = corpus / "reference" / "facts.yaml"
    path.write_text(facts, encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        load_reference(corpus)
    assert info.value.field == field
    assert str(path) in str(info.value)
    assert f" ; attendu : {expected}" in str(info.value)


def test_facts_that_are_not_a_mapping(tmp_path: Path) -> None:
    corpus = copy_mini_corpus(tmp_path / "c")
    (corpus / "reference" / "facts.yaml").write_text("- doc-01\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="reçu : liste YAML ; attendu : un dictionnaire YAML avec figures"):
        load_reference(corpus)


def test_unknown_reference_ids() -> None:
    reference = load_reference(MINI_CORPUS)
    assert reference is not None
    assert unknown_reference_ids(reference, ["doc-01", "doc-02", "doc-03", "doc-04"]) == []
    assert unknown_reference_ids(reference, ["doc-01", "doc-03"]) == ["doc-02", "doc-04"]


# ----------------------------------------------------------------------------------------------- terms
def test_derive_terms_prefers_explicit_terms() -> None:
    request = Request(title="T", terms=["Kestrel", "Orvet", "Kestrel"], text="Texte sur Tamaris.")
    assert derive_terms(request) == ["Kestrel", "Orvet"]


def test_derive_terms_finds_proper_nouns_and_acronyms() -> None:
    request = Request(
        title="Quel moteur d'inférence pour 2027 : Kestrel, Tamaris ou Orvet ?",
        text=(
            "Nous devons choisir un moteur. Comparez Kestrel et l'offre d'Orvet sur le coût.\n"
            "- Sécurité et RGPD pour chaque moteur.\n"
            "Merci de citer les sources."
        ),
    )
    terms = derive_terms(request)
    # The title names what is compared: its proper nouns are the terms (RGPD is a topic, not a product).
    assert terms == ["Kestrel", "Tamaris", "Orvet"]
    # Without names in the title, the text's proper nouns and acronyms.
    untitled = request.model_copy(update={"title": "Quel moteur d'inférence pour 2027 ?"})
    terms = derive_terms(untitled)
    assert terms[:2] == ["Kestrel", "Orvet"]
    assert "RGPD" in terms
    # Capitalised only because they start a sentence or a list item: not terms.
    for word in ("Quel", "Nous", "Comparez", "Sécurité", "Merci"):
        assert word not in terms


def test_derive_terms_leaves_out_languages_and_common_nouns() -> None:
    request = Request(
        title="Which streaming service for 2027?",
        text="The Data team asks for a dossier in English comparing Riverbend and Quaystone. Our data stays in the EU.",
    )
    assert derive_terms(request) == ["Riverbend", "Quaystone"]
