""" "Later wins" never applies to an unknown date (issue 36, item 3): the offline analyst settles a
pair with a « date inconnue » side by authority alone, saying the order is unknown, or leaves it
open; the write step drops a model's ledger entry that orders such a pair by date."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.citations import bibliography
from veille.docdates import UNKNOWN_DATE
from veille.dossier import AxisSection, Dossier, KeyPoint, LedgerEntry
from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.roles.analyst import AnalystInput, DocumentText
from veille.roles.writer import SourceRef
from veille.steps.write import sanitize_dossier

QUESTION = "Que disent les documents sur le prix de la licence de Tamaris ?"
TYPES = ["benchmark-interne", "fiche-fournisseur", "grille-tarifaire", "article-presse", "audit"]


def _doc(n: int, value: int, source_type: str, date: str) -> DocumentText:
    body = f"## Tarifs\n\nPour Tamaris, le prix de la licence relevé est de {value} EUR par an et par nœud.\n"
    return DocumentText(
        id=f"doc-{n}", date=date, source_type=source_type, title="Tamaris : prix de la licence", body=body
    )


def _analyse(authority: AuthorityRanking, a: DocumentText, b: DocumentText):  # type: ignore[no-untyped-def]
    return analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=[a, b]), authority)


def test_known_dates_still_settle_by_the_later_document(authority: AuthorityRanking) -> None:
    a, b = _doc(1, 2900, "fiche-fournisseur", "2025-01-10"), _doc(2, 4200, "fiche-fournisseur", "2026-03-02")
    found = _analyse(authority, a, b)
    assert [n.retained for n in found.contradictions] == ["doc-2"]
    assert "plus récente" in found.contradictions[0].reason


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    types_=st.tuples(st.sampled_from(TYPES), st.sampled_from(TYPES)),
    known=st.sampled_from(["2025-01-10", "2026-03-02", UNKNOWN_DATE]),
    values=st.tuples(st.integers(1000, 2000), st.integers(3000, 5000)),
    unknown_first=st.booleans(),
)
def test_an_unknown_date_never_decides_a_contradiction(
    authority: AuthorityRanking,
    types_: tuple[str, str],
    known: str,
    values: tuple[int, int],
    unknown_first: bool,
) -> None:
    dates = (UNKNOWN_DATE, known) if unknown_first else (known, UNKNOWN_DATE)
    a, b = _doc(1, values[0], types_[0], dates[0]), _doc(2, values[1], types_[1], dates[1])
    found = _analyse(authority, a, b)
    ranks = authority.rank(a.source_type), authority.rank(b.source_type)
    if ranks[0] == ranks[1]:  # nothing but a date could order them: no winner, an open question
        assert found.contradictions == []
        assert any(
            q.startswith("Ordre inconnu :") and "aucune source n'est retenue" in q
            for q in found.open_questions
        )
        return
    assert len(found.contradictions) == 1
    note = found.contradictions[0]
    assert note.retained == ("doc-1" if ranks[0] > ranks[1] else "doc-2")  # authority alone
    assert (
        note.reason.startswith("ordre inconnu :")
        and "récent" not in note.reason
        and "ancienne" not in note.reason
    )


def _sources(dates: tuple[str, str]) -> list[SourceRef]:
    return [
        SourceRef(number=n, id=f"doc-{n}", title="Tamaris : prix", date=d, source_type="fiche-fournisseur")
        for n, d in enumerate(dates, start=1)
    ]


def _dossier(reason: str) -> Dossier:
    point = KeyPoint(text="Le prix de la licence Tamaris est de 4 200 EUR par an.", citations=[2])
    return Dossier(
        sections=[AxisSection(axis="st-1", points=[point])],
        contradictions=[LedgerEntry(subject="Prix de Tamaris", retained=[2], rejected=[1], reason=reason)],
    )


def test_a_model_entry_ordering_an_undated_source_by_date_is_dropped_whole() -> None:
    by_date = "La source [2] est plus récente que [1]."
    clean, alerts = sanitize_dossier(_dossier(by_date), _sources((UNKNOWN_DATE, "2026-03-02")), ["st-1"])
    assert clean.contradictions == []
    assert not clean.sections[0].points[0].superseded
    [dropped] = [a for a in alerts if a.code == "ledger.unknown_order"]
    assert "Prix de Tamaris" in dropped.message and "ordre inconnu" in dropped.message
    # Both dated: the same entry stands.
    clean, alerts = sanitize_dossier(_dossier(by_date), _sources(("2025-01-10", "2026-03-02")), ["st-1"])
    assert len(clean.contradictions) == 1 and "ledger.unknown_order" not in {a.code for a in alerts}
    # Settled by authority and saying the order is unknown: it stands too.
    by_authority = (
        "Ordre inconnu : fiche fournisseur (date inconnue) écartée au profit d'une source plus fiable."
    )
    clean, _ = sanitize_dossier(_dossier(by_authority), _sources((UNKNOWN_DATE, "2026-03-02")), ["st-1"])
    assert len(clean.contradictions) == 1


def test_the_sources_list_says_where_a_date_came_from() -> None:
    sources = [
        SourceRef(number=1, id="a", title="A", date="2026-02-05", source_type="note", date_origin="text"),
        SourceRef(number=2, id="b", title="B", date=UNKNOWN_DATE, source_type="note", date_origin="unknown"),
        SourceRef(
            number=3, id="c", title="C", date="2024-07-08", source_type="note", date_origin="front_matter"
        ),
        SourceRef(
            number=4, id="d", title="D", date="2025-10-09", source_type="note", date_origin="file_clock"
        ),
    ]
    lines = bibliography(sources).splitlines()
    assert "— 2026-02-05 (date lue dans le texte) —" in lines[0]
    assert f"— {UNKNOWN_DATE} —" in lines[1]
    assert "— 2024-07-08 — note" in lines[2]
    assert "— 2025-10-09 (date du fichier) —" in lines[3]
