"""The verifier of figures (veille.steps.verify): what the dossier says is what its sources say."""

from __future__ import annotations

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry
from veille.grid import Grid
from veille.roles.critic import CRITIC
from veille.roles.reviser import ReviserInput
from veille.roles.writer import SourceRef
from veille.steps.review import review_loop
from veille.steps.verify import SourceText, VerifyContext, verify_dossier
from veille.steps.write import sanitize_dossier

OPTIONS = ["Qdrant", "pgvector", "Milvus"]
DOCS = {
    1: SourceText(number=1, id="doc-01", title="Banc d'essai des bases vectorielles", date="2026-07-01", text=(
        "# Résultats\n\nLe laboratoire a indexé 40 millions de vecteurs.\n\n"
        "| base | latence p95 | licence annuelle |\n|---|---|---|\n"
        "| Qdrant | 12 ms | 900 EUR |\n| pgvector | 35 ms | 400 EUR |\n| Milvus | 20 ms | 700 EUR |\n"
    )),
    2: SourceText(number=2, id="doc-02", title="pgvector en production", date="2026-09-01",
                  text="Retour d'expérience.\n\nLa latence p95 mesurée en production est de 35 ms sur notre charge."),
    3: SourceText(number=3, id="doc-03", title="Qdrant : tarifs 2026", date="2026-03-01",
                  text="La licence coûte 1 200 EUR par an et par nœud."),
    4: SourceText(number=4, id="doc-04", title="Fiche éditeur pgvector", date="2026-01-10",
                  text="La latence p95 annoncée est de 8 ms."),
    5: SourceText(number=5, id="doc-05", title="Comparatif", date="",
                  text="Qdrant atteint 12 ms contre 35 ms pour pgvector."),
}  # fmt: skip
CONTEXT = VerifyContext(documents=DOCS, options=OPTIONS, request="Quelle base pour 12 GPU sur 3 ans ?")


def _points(*points: tuple[str, list[int]]) -> Dossier:
    return Dossier(
        sections=[AxisSection(axis="st-1", points=[KeyPoint(text=t, citations=c) for t, c in points])]
    )


def _kept(dossier: Dossier) -> list[str]:
    return [p.text for s in dossier.sections for p in s.points]


def _codes(alerts: list) -> dict[str, list[str]]:
    return {a.code: a.subjects for a in alerts}


def test_a_figure_of_another_subject_is_dropped_and_named() -> None:
    """The issue's case: pgvector's 35 ms, from pgvector's document, given to Qdrant."""
    dossier = _points(
        ("Qdrant — La latence p95 mesurée en production est de 35 ms", [2]),
        ("pgvector : latence p95 de 35 ms en production", [2]),
        ("Qdrant : latence p95 de 35 ms au banc", [1]),
        ("Qdrant : latence p95 de 12 ms au banc", [1]),
    )
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert _kept(clean) == [
        "pgvector : latence p95 de 35 ms en production",
        "Qdrant : latence p95 de 12 ms au banc",
    ]
    assert [a.code for a in alerts] == ["report.misattributed"]
    assert len(alerts[0].subjects) == 2 and "35 ms" in alerts[0].message
    assert "retiré" in alerts[0].message  # French, names the points


def test_an_invented_figure_is_dropped_and_a_request_figure_is_not_looked_up() -> None:
    dossier = _points(
        ("Qdrant : latence p95 de 17 ms", [1]), ("Qdrant tient 12 ms pour 12 GPU sur 3 ans", [1])
    )
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert _kept(clean) == ["Qdrant tient 12 ms pour 12 GPU sur 3 ans"]
    assert _codes(alerts) == {"report.unsupported_figure": ["« Qdrant : latence p95 de 17 ms » (17 ms)"]}


def test_a_document_about_one_subject_alone_gives_it_its_figures() -> None:
    dossier = _points(("Qdrant coûte 1 200 EUR par an", [3]), ("pgvector coûte 1 200 EUR par an", [3]))
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert _kept(clean) == ["Qdrant coûte 1 200 EUR par an"]
    assert list(_codes(alerts)) == ["report.misattributed"]


def test_clauses_of_contrast_give_each_figure_its_own_subject() -> None:
    dossier = _points(("pgvector : 35 ms", [5]), ("Qdrant : 35 ms", [5]), ("Qdrant : 12 ms", [5]))
    clean, _ = verify_dossier(dossier, CONTEXT)
    assert _kept(clean) == ["pgvector : 35 ms", "Qdrant : 12 ms"]


def test_evidence_is_the_passage_holding_the_figure_with_title_and_date() -> None:
    clean, _ = verify_dossier(_points(("pgvector : latence p95 de 35 ms", [1, 2])), CONTEXT)
    evidence = clean.sections[0].points[0].evidence
    assert [(e.doc_id, e.passage) for e in evidence] == [("doc-01", "| pgvector | 35 ms | 400 EUR |")]
    assert DOCS[1].text[evidence[0].start : evidence[0].end] == "| pgvector | 35 ms | 400 EUR |"
    assert (evidence[0].title, evidence[0].date) == ("Banc d'essai des bases vectorielles", "2026-07-01")
    # A point without a figure: the cited sentence sharing enough words with it.
    clean, _ = verify_dossier(_points(("Retour d'expérience : latence mesurée en production", [2])), CONTEXT)
    assert [e.passage for e in clean.sections[0].points[0].evidence] == [
        "La latence p95 mesurée en production est de 35 ms sur notre charge."
    ]


def _entry(subject: str, reason: str, retained: list[int], rejected: list[int]) -> LedgerEntry:
    return LedgerEntry(subject=subject, retained=retained, rejected=rejected, reason=reason)


def test_a_ledger_entry_opposes_two_values_of_one_measure_on_one_subject() -> None:
    dossier = Dossier(
        contradictions=[
            _entry("Latence p95 de pgvector", "Mesure plus récente. 35 ms retenu contre 8 ms.", [2], [4]),
            _entry("Latence p95 de pgvector", "Mesure plus récente. 35 ms retenu.", [2], [4]),  # one-sided
            _entry("pgvector", "Mesure plus récente. 35 ms retenu contre 400 EUR.", [2], [1]),  # two measures
            _entry("Latence p95 de Qdrant", "35 ms retenu contre 8 ms.", [2], [4]),  # pgvector's figures
            _entry("Version corrigée", "Le correctif est plus récent.", [2], [4]),  # no figure: a statement
        ]
    )
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert [e.subject for e in clean.contradictions] == ["Latence p95 de pgvector", "Version corrigée"]
    assert [e.doc_id for e in clean.contradictions[0].evidence] == ["doc-02", "doc-04"]
    codes = _codes(alerts)
    assert len(codes["ledger.not_a_contradiction"]) == 2
    assert codes["report.misattributed"] == ["« Latence p95 de Qdrant. 35 ms retenu contre 8 ms. » (35 ms)"]


def test_a_recommendation_row_compares_one_measure_and_every_option_the_sources_give() -> None:
    rows = [
        "Qdrant 12 ms, pgvector 35 ms ; ces chiffres favorisent Qdrant",  # Milvus 20 ms left out
        "Qdrant 12 ms, pgvector 35 ms, Milvus 20 ms ; ces chiffres favorisent Qdrant",
        "Qdrant 12 ms, pgvector 400 EUR, Milvus 20 ms",  # two measures
    ]
    dossier = Dossier(recommendation=[CitedText(text=r, citations=[1]) for r in rows])
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert [r.text for r in clean.recommendation] == [rows[1]]
    assert len(_codes(alerts)["recommendation.incomplete_row"]) == 2


def test_counts_of_the_dossier_itself_and_web_sources_are_not_looked_up() -> None:
    dossier = Dossier(
        synthesis=[
            CitedText(text="Ce dossier compare les bases en 4 volets, à partir de 5 sources.", citations=[1]),
            CitedText(text="Qdrant ressort sur 2 comparaisons sur 3.", citations=[1]),
            CitedText(text="Qdrant atteint 3 ms selon une page web.", citations=[9]),  # no text here
        ]
    )
    clean, alerts = verify_dossier(dossier, CONTEXT)
    assert clean.synthesis == dossier.synthesis and alerts == []
    # Any other count is a source's figure.
    other = Dossier(synthesis=[CitedText(text="Qdrant redémarre 4 fois sur 3 jours.", citations=[1])])
    assert verify_dossier(other, CONTEXT)[0].synthesis == []


def test_sanitising_verifies_when_given_the_documents() -> None:
    sources = [
        SourceRef(number=n, id=d.id, title=d.title, date=d.date, source_type="note") for n, d in DOCS.items()
    ]
    dossier = _points(("Qdrant : latence p95 de 35 ms", [2]), ("pgvector : latence p95 de 35 ms", [2]))
    unchecked, _ = sanitize_dossier(dossier, sources, ["st-1"])
    checked, alerts = sanitize_dossier(dossier, sources, ["st-1"], context=CONTEXT)
    assert len(_kept(unchecked)) == 2
    assert _kept(checked) == ["pgvector : latence p95 de 35 ms"] and checked.sections[0].points[0].evidence
    assert "report.misattributed" in _codes(alerts)


def test_a_term_the_documents_count_is_a_unit_not_a_subject() -> None:
    """A prose request's acronym read as a term (« GPU ») is what figures measure: « 4 200 EUR par
    GPU » stays Tamaris's, not GPU's."""
    documents = {
        1: SourceText(
            number=1,
            id="d",
            title="Tarifs",
            date="",
            text="Tamaris : 4 200 EUR par GPU et par an, pour 12 GPU.",
        )
    }
    context = VerifyContext(documents=documents, options=["Tamaris", "Orvet", "GPU"], request="")
    dossier = _points(("Tamaris coûte 4 200 EUR par GPU", [1]), ("Orvet coûte 4 200 EUR par GPU", [1]))
    assert _kept(verify_dossier(dossier, context)[0]) == ["Tamaris coûte 4 200 EUR par GPU"]


class _Answer:
    def __init__(self, output: object) -> None:
        self.output = output


class _Reviewing:
    """An ``Asker``: a critic that asks for one revision, a reviser that gives Qdrant pgvector's figure."""

    def __init__(self) -> None:
        self.revised: list[Dossier] = []

    def ask(self, role: object, data: object, *, subtask_id: str | None = None) -> _Answer:
        if role is CRITIC:
            score = 5 if self.revised else 2
            return _Answer(
                CRITIC.schema_for(data).model_validate({**dict.fromkeys(GRID.criteria, score), "remarks": []})
            )
        assert isinstance(data, ReviserInput)
        self.revised.append(data.draft)
        swapped = data.draft.model_copy(deep=True)
        swapped.sections[0].points.append(KeyPoint(text="Qdrant : latence p95 de 35 ms", citations=[2]))
        return _Answer(swapped)


GRID = Grid(
    criteria={"clarity": "c", "concreteness": "c", "citations": "c", "tone": "t", "correctness": "c"},
    min_words=1, max_words=400, max_sentence_words=40, forbidden_words=(), mandatory_mentions=(),
)  # fmt: skip


def test_each_revision_is_verified_and_the_reviser_never_reads_the_evidence() -> None:
    sources = [
        SourceRef(number=n, id=d.id, title=d.title, date=d.date, source_type="note") for n, d in DOCS.items()
    ]
    draft = _points(("pgvector : latence p95 de 35 ms en production", [2]))
    client = _Reviewing()
    outcome = review_loop(client, draft, grid=GRID, sources=sources, request="Bases vectorielles", max_rounds=2,
                          axes={"st-1": "st-1 — Latence"}, context=CONTEXT)  # fmt: skip
    (revised,) = client.revised
    assert [p.evidence for p in revised.sections[0].points] == [[]]  # code's data, not the reviser's
    assert _kept(outcome.final_dossier) == ["pgvector : latence p95 de 35 ms en production"]
    assert outcome.final_dossier.sections[0].points[0].evidence  # located again after the revision
    assert [(a.stage, a.code) for a in outcome.alerts if a.code == "report.misattributed"] == [
        ("review", "report.misattributed")
    ]


def test_a_counted_rate_reworded_is_the_same_figure() -> None:
    documents = {
        1: SourceText(number=1, id="d", title="Banc", date="", text="Kestrel : 1 400 tokens/s par GPU.")
    }
    context = VerifyContext(documents=documents, options=["Kestrel"], request="")
    kept = ["Kestrel annonce 1 400 tokens par seconde", "Kestrel : 1 400 tokens/s"]
    dossier = _points(
        *((t, [1]) for t in [*kept, "Kestrel : 1 400 tokens par heure", "Kestrel : 1 400 tokens"])
    )
    assert _kept(verify_dossier(dossier, context)[0]) == kept


def test_a_figure_wrapped_over_two_lines_is_the_documents() -> None:
    text = "The release represents roughly 11\nweeks of development for Kestrel."
    context = VerifyContext(documents={1: SourceText(number=1, id="d", title="Notes", date="", text=text)},
                            options=["Kestrel"], request="")  # fmt: skip
    dossier = _points(("Kestrel : 11 weeks of development", [1]), ("Kestrel : 11 days of development", [1]))
    assert _kept(verify_dossier(dossier, context)[0]) == ["Kestrel : 11 weeks of development"]
