"""The request read once (veille.corpus.request_reading): axes, options, period, language and kind
from many phrasings, French and English, prose and lists, with and without front matter; a
planner's proposal kept only where the request and the corpus support it."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from veille.corpus.request_reading import (
    ProposedAxis,
    RequestProposal,
    read_kind,
    read_request,
)

CORPUS = [
    "Qdrant 1.9 indexe 10 millions de vecteurs. Selon le banc, Qdrant répond en 12 ms et Milvus en 15 ms.",
    "Le 2025-03-14, Milvus a publié un correctif. Avec pgvector, la latence reste de 30 ms sur Postgres.",
    "Benchmark: Qdrant and Milvus both scale; pgvector is an extension of Postgres, tested on 2025-06-01.",
    "Nous avons testé Qdrant puis Milvus : en charge, Qdrant et Milvus tiennent 2 000 requêtes par seconde.",
]
CORPORA_DIR = Path(__file__).resolve().parent / "corpora"


def titles(reading: object) -> list[str]:
    return [a.title for a in reading.axes]  # type: ignore[attr-defined]


# --- options ---------------------------------------------------------------------------------


def test_option_in_lower_case_is_taken_when_listed_with_names_and_named_by_the_corpus() -> None:
    reading = read_request("Faut-il choisir Qdrant, Milvus ou pgvector pour la recherche ?", CORPUS)
    assert reading.options == ("Qdrant", "Milvus", "pgvector")
    assert reading.kind == "choice"


def test_options_in_any_case_are_written_as_the_corpus_writes_them() -> None:
    reading = read_request("Comparer qdrant, milvus et pgvector sur la latence.", CORPUS)
    assert reading.options == ("Qdrant", "Milvus", "pgvector")


def test_an_option_the_corpus_never_names_is_not_an_option() -> None:
    reading = read_request("Faut-il choisir Qdrant, Milvus ou Weaviate ?", CORPUS)
    assert reading.options == ("Qdrant", "Milvus")


def test_front_matter_terms_are_options_when_the_corpus_names_them() -> None:
    text = "---\ntitle: Bases vectorielles\nterms: [Qdrant, pgvector, Chroma]\n---\nLa latence et le coût.\n"
    reading = read_request(text, CORPUS)
    assert reading.options == ("Qdrant", "pgvector")  # Chroma: absent from the corpus


def test_a_name_the_corpus_writes_in_lower_case_only_in_code_is_still_a_name() -> None:
    docs = [
        "Le moteur DataFusion lit le Parquet. Nous testons DataFusion : `datafusion.execution.batch_size` vaut 8192.",
        "Avec DataFusion 45, la requête prend 2 s ; le paquet `datafusion` s'installe avec `cargo add datafusion`.",
    ]
    reading = read_request("Nous envisageons Apache DataFusion : que disent les notes de version ?", docs)
    assert reading.options == ("DataFusion",)  # « Apache DataFusion » is not written so by the corpus


def test_a_run_of_names_the_corpus_writes_together_is_one_option() -> None:
    docs = [
        "Le service France Travail publie 12 fiches. Selon France Travail, 40 % des inscrits l'utilisent."
    ]
    reading = read_request("Recense les services incubés par France Travail.", docs)
    assert reading.options == ("France Travail",)


def test_terms_written_only_inside_a_longer_name_stand_for_that_name() -> None:
    """Terms derived word by word (veille.corpus.terms) from « France Travail » are that name, not
    the common word « travail » a sheet of any field writes; a term also written alone stays."""
    docs = [
        "Le service France Travail publie 12 fiches. Selon France Travail, 40 % des inscrits l'utilisent.",
        "Le travail des agents de transit reste manuel ; la France compte 12 escales.",
    ]
    request = "Recense les services incubés par France Travail."
    reading = read_request(request, docs, terms=["France", "Travail"])
    assert reading.options == ("France Travail",)
    alone = read_request(
        "Recense les services de France Travail et ce que la France en attend.",
        docs,
        terms=["France", "Travail"],
    )
    assert reading.options != alone.options and "France" in alone.options


def test_language_names_and_aspects_are_not_options() -> None:
    reading = read_request("Rédige en anglais un dossier sur la latence, le coût et la sécurité.", CORPUS)
    assert reading.options == ()
    assert reading.kind == "survey"


def test_english_request_options_and_language() -> None:
    reading = read_request("Should we pick Qdrant or Milvus for semantic search?", CORPUS)
    assert reading.options == ("Qdrant", "Milvus")
    assert reading.language == "en"
    assert reading.kind == "choice"


# --- axes ------------------------------------------------------------------------------------


def test_bullets_are_axes_whole_with_stable_keys() -> None:
    text = (
        "Compare les trois offres sur les points suivants :\n\n"
        "- Performances : latence p99 et débit par nœud\n"
        "- Coût sur 3 ans : licences et support\n"
        "- Sécurité : vulnérabilités publiées et correctifs\n"
    )
    reading = read_request(text, CORPUS)
    assert titles(reading) == [
        "Performances : latence p99 et débit par nœud",
        "Coût sur 3 ans : licences et support",
        "Sécurité : vulnérabilités publiées et correctifs",
    ]
    assert [a.key for a in reading.axes] == ["axe-1", "axe-2", "axe-3"]
    assert "latence" in reading.axes[0].terms and "vulnérabilités" in reading.axes[2].terms


def test_numbered_questions_are_axes() -> None:
    text = (
        "Questions :\n\n1. Quelle est la maturité du projet ?\n2. Quels sont les risques ?\n"
        "3. Quelles performances sur les filtres dynamiques ?\n"
    )
    reading = read_request(text, CORPUS)
    assert titles(reading) == [
        "Quelle est la maturité du projet ?",
        "Quels sont les risques ?",
        "Quelles performances sur les filtres dynamiques ?",
    ]
    assert "filtres" in reading.axes[2].terms and "dynamiques" in reading.axes[2].terms


def test_headings_are_axes_titled_by_the_heading_with_the_paragraph_as_terms() -> None:
    text = (
        "Dossier demandé.\n\n## Performances\n\nLatence ajoutée et débit par nœud.\n\n"
        "## Conformité RGPD et hébergement\n\nOù sont stockées les données.\n"
    )
    reading = read_request(text, CORPUS)
    assert titles(reading) == ["Performances", "Conformité RGPD et hébergement"]
    assert "latence" in reading.axes[0].terms and "stockées" in reading.axes[1].terms


def test_enumeration_in_a_sentence_sur_a_b_et_c() -> None:
    reading = read_request(
        "Compare Qdrant et Milvus sur la latence des requêtes, le coût d'hébergement et la sécurité.", CORPUS
    )
    assert titles(reading) == ["Latence des requêtes", "Coût d'hébergement", "Sécurité"]
    assert all("qdrant" not in a.terms for a in reading.axes)  # options identify no axis


def test_english_prose_enumeration() -> None:
    reading = read_request(
        "Compare Qdrant and Milvus on query latency, hosting cost and security certifications.", CORPUS
    )
    assert titles(reading) == ["Query latency", "Hosting cost", "Security certifications"]
    assert reading.language == "en"


def test_a_request_stating_no_axis_has_none() -> None:
    assert read_request("Que se passe-t-il autour de Qdrant ?", CORPUS).axes == ()


# --- period ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Suivre le projet depuis la version 34 (janvier 2024).", datetime.date(2024, 1, 1), None),
        ("Ce qui a été publié depuis le 15 mars 2024.", datetime.date(2024, 3, 15), None),
        ("What happened since March 2024?", datetime.date(2024, 3, 1), None),
        ("Les annonces parues en 2025.", datetime.date(2025, 1, 1), datetime.date(2025, 12, 31)),
        (
            "Entre 2023 et 2025, qu'est-ce qui a changé ?",
            datetime.date(2023, 1, 1),
            datetime.date(2025, 12, 31),
        ),
        ("Between 2023 and 2024, what changed?", datetime.date(2023, 1, 1), datetime.date(2024, 12, 31)),
        ("Le service remplace en 2027 son logiciel.", None, None),  # a project's date, not a period
        ("Le moteur indexera les fiches à partir de 2027.", None, None),
        ("Depuis la version 34, la latence a baissé.", None, None),  # no date: no period
    ],
)
def test_period(text: str, start: datetime.date | None, end: datetime.date | None) -> None:
    reading = read_request(text, CORPUS, dates=["2025-03-14", "2026-01-10"])  # the corpus has left 2025
    assert (reading.period_start, reading.period_end) == (start, end)


def test_a_year_the_corpus_has_not_left_is_no_period() -> None:
    # The newest document is dated 2025: « en 2025 » may be the project's year, not a period; a
    # date written inside a text (a support end in 2029) says nothing of where the corpus stands.
    dates = ["2024-11-02", "2025-03-14"]
    assert read_request("Choisir Qdrant ou Milvus en 2025.", CORPUS, dates=dates).period_start is None
    reading = read_request("Choisir Qdrant ou Milvus en 2024.", CORPUS, dates=dates)
    assert (reading.period_start, reading.period_end) == (
        datetime.date(2024, 1, 1),
        datetime.date(2024, 12, 31),
    )
    supported = [*CORPUS, "La version 2 est maintenue jusqu'au 2029-06-30."]
    assert read_request("Le moteur retenu en 2027.", supported, dates=dates).period_start is None
    assert read_request("Choisir Qdrant ou Milvus en 2024.", CORPUS).period_start is None  # no date known


# --- kind ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "options", "kind"),
    [
        ("Vantor, Brisane ou Corolle ?", ("Vantor", "Brisane", "Corolle"), "choice"),
        ("Quelle base recommander pour le moteur ?", (), "choice"),
        ("Which service should we choose?", (), "choice"),
        ("Recense les services numériques de la région et leurs résultats mesurés.", (), "inventory"),
        ("Décris ce que fait chaque service et lesquels ont été abandonnés.", (), "inventory"),
        ("List every public service and what it measured.", (), "inventory"),
        ("Comment la latence a-t-elle évolué au fil des versions ?", (), "evolution"),
        ("What changed over time in the licence terms?", (), "evolution"),
        ("Compare Kerlune et Halvorn sur la latence.", ("Kerlune", "Halvorn"), "choice"),
        ("Un état des lieux de la recherche vectorielle.", (), "survey"),
    ],
)
def test_kind(text: str, options: tuple[str, ...], kind: str) -> None:
    assert read_kind(text, options) == kind


# The bundled corpora's requests as a reader marks them (their README says what each asks for):
# what they ask for, the options they name, the period they follow.
BUNDLED = {
    "datafusion-en": ("evolution", ("Parquet", "DataFusion"), datetime.date(2024, 1, 1)),
    "nodejs-securite": ("survey", ("Node.js", "OpenSSL"), None),
    "services-emploi": ("inventory", ("France Travail",), None),
}


def test_bundled_requests_are_read_as_they_ask() -> None:
    for corpus in sorted(p for p in CORPORA_DIR.iterdir() if (p / "request.md").is_file()):
        texts = [d.read_text(encoding="utf-8") for d in sorted((corpus / "docs").glob("*"))]
        reading = read_request((corpus / "request.md").read_text(encoding="utf-8"), texts)
        kind, options, start = BUNDLED.get(corpus.name, ("choice", None, None))
        assert reading.kind == kind, corpus.name
        if options:
            assert reading.options == options, corpus.name
        else:  # a choice between the products its title names
            assert len(reading.options) >= 2, (corpus.name, reading.options)
        assert reading.period_start == start and reading.period_end is None, corpus.name


# --- the planner's proposal ------------------------------------------------------------------


REQUEST = "Faut-il choisir Qdrant ou Milvus ? Compare-les sur la latence, le coût et les risques."


def test_a_proposed_option_absent_from_the_request_is_refused() -> None:
    proposal = RequestProposal(options=("pgvector",))  # in the corpus, not in the request
    reading = read_request(REQUEST, CORPUS, proposal)
    assert "pgvector" not in reading.options
    assert reading.options == ("Qdrant", "Milvus")


def test_a_proposed_option_absent_from_the_corpus_is_refused() -> None:
    reading = read_request(
        "Faut-il choisir Qdrant, Milvus ou weaviate ?", CORPUS, RequestProposal(options=("weaviate",))
    )
    assert reading.options == ("Qdrant", "Milvus")


def test_a_proposed_option_the_request_names_and_the_corpus_confirms_is_kept() -> None:
    reading = read_request(
        "Qdrant face à pgvector : que disent les bancs ?", CORPUS, RequestProposal(options=("pgvector",))
    )
    assert "pgvector" in reading.options
    assert reading.origin["option:pgvector"] in ("request", "planner")


def test_a_proposed_axis_the_request_does_not_support_is_dropped() -> None:
    proposal = RequestProposal(axes=(ProposedAxis("Empreinte carbone des centres de données"),))
    reading = read_request(REQUEST, CORPUS, proposal)
    assert "Empreinte carbone des centres de données" not in titles(reading)
    assert titles(reading) == ["Latence", "Coût", "Risques"]


def test_a_proposed_axis_joins_the_request_axis_it_names_with_its_search_terms() -> None:
    proposal = RequestProposal(axes=(ProposedAxis("La latence", ("latency", "benchmark", "inexistant")),))
    reading = read_request(REQUEST, CORPUS, proposal)
    latency = reading.axes[0]
    assert latency.title == "Latence" and reading.origin[latency.key] == "request"
    assert "latency" not in latency.terms  # not written by the corpus (which writes « latence »)
    assert "benchmark" in latency.terms  # a search term in the documents' language
    assert "inexistant" not in latency.terms


def test_proposed_axes_stand_when_the_request_states_none_and_supports_them() -> None:
    text = "Faut-il choisir Qdrant ou Milvus ? Nous voulons connaître leur latence et leur coût."
    proposal = RequestProposal(
        axes=(ProposedAxis("Latence"), ProposedAxis("Coût"), ProposedAxis("Gouvernance"))
    )
    reading = read_request(text, CORPUS, proposal)
    assert titles(reading) == ["Latence", "Coût"]
    assert reading.origin["axes"] == "planner"


def test_a_proposed_period_is_kept_only_when_the_request_writes_its_years() -> None:
    text = "Faut-il choisir Qdrant ou Milvus ? Les bancs de l'année 2024 comptent."
    kept = RequestProposal(period_start=datetime.date(2024, 1, 1), period_end=datetime.date(2024, 12, 31))
    reading = read_request(text, CORPUS, kept)
    assert (reading.period_start, reading.origin["period"]) == (datetime.date(2024, 1, 1), "planner")
    invented = RequestProposal(period_start=datetime.date(2022, 1, 1))
    assert read_request(text, CORPUS, invented).period_start is None


def test_points_ordered_by_sequence_adverbs_are_axes_even_with_a_cue_word_inside() -> None:
    text = (
        "Compare les offres en traitant d'abord les performances (débit, latence), ensuite le coût sur "
        "3 ans (licences, support), puis la fiabilité et enfin la feuille de route."
    )
    assert titles(read_request(text, CORPUS)) == [
        "Performances (débit, latence)",
        "Coût sur 3 ans (licences, support)",
        "Fiabilité",
        "Feuille de route",
    ]
    english = "Cover first the throughput, then the cost over three years and finally the roadmap."
    assert titles(read_request(english, CORPUS)) == ["Throughput", "Cost over three years", "Roadmap"]
