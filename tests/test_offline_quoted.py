"""Contradiction rules of the offline analyst for a figure another document is quoted on (issue 12):
a product name stands for its maker, a figure stated twice is a claim where it is stated as one, a
sentence that quotes another document's figure to reject it is compared with that document without
shared context words, and a change (« de X à Y ») is not such a quote. The recommendation still
uses the figures a rejected source did not lose on.

Synthetic documents only (makers « Atlas », « Borea »): each test fails if its rule is removed.
"""

from __future__ import annotations

from veille.dossier import LedgerEntry
from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.compare import recommendation
from veille.offline.ledger import Statement, rejected_units
from veille.roles.analyst import AnalystInput, DocumentText

QUESTION = (
    "Dans le cadre de « Barres de visioconférence : Atlas ou Borea », que disent les documents sur "
    "l'audio (portée des micros, intelligibilité) pour Atlas et Borea ?"
)
SHEET = DocumentText(
    id="d-1",
    date="2026-02-01",
    source_type="fiche-technique",
    title="Atlas AX-7 : fiche produit de la barre",
    body="# Atlas AX-7\n\nSix micros à formation de faisceau : la AX-7 capte la voix jusqu'à 9 m.\n",
)
PILOT = DocumentText(
    id="d-2",
    date="2026-09-01",
    source_type="rapport-pilote",
    title="Pilote des barres Atlas et Borea : intelligibilité en salle",
    body="# Pilote\n\n## Résultats\n\nLa AX-7 ne tient l'exigence d'intelligibilité que jusqu'à 4 m de la barre : "
    "c'est une portée utile de 4 m, loin des 9 m de la fiche produit.\n\n"
    "La Borea B2 tient l'exigence dans toute la salle de 7 m.\n",
)


def _notes(authority: AuthorityRanking, *docs: DocumentText) -> list[tuple[list[str], str, str]]:
    result = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=list(docs)), authority)
    return [(sorted(n.doc_ids), n.retained, n.reason) for n in result.contradictions]


def test_a_source_rejected_on_one_unit_still_gives_its_other_figures() -> None:
    entries = [LedgerEntry(subject="Atlas", retained=[2], rejected=[1], reason="4 m retenu contre 9 m")]
    assert rejected_units(entries) == {1: {"m"}}
    statements = [
        Statement(axis="st-1", text="Atlas — Barre AX-7 : 1 600 EUR par salle.", numbers=(1,)),
        Statement(axis="st-1", text="Borea — Barre B2 : 1 400 EUR par salle.", numbers=(3,)),
    ]
    items, leads = recommendation(statements, ["Atlas", "Borea"], {"st-1": "Audio"}, rejected_units(entries))
    assert leads == {"Borea": 1}, [i.text for i in items]
    # Rejected without a figure (a rumour): nothing of it counts.
    rumour = [LedgerEntry(subject="Atlas", retained=[2], rejected=[1], reason="Annonce officielle.")]
    assert rejected_units(rumour) == {1: None}
    _, leads = recommendation(statements, ["Atlas", "Borea"], {"st-1": "Audio"}, rejected_units(rumour))
    assert leads == {}
