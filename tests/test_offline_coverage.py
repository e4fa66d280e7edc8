"""Coverage rules of the offline analyst (issue 12): every option compared gets its figure on every
aspect the question lists, an aspect naming a quantity (« prix par unité ») is answered only by a
figure of that quantity, and a short list item keeps the heading that says what it measures.

Synthetic documents only (products « Atlas », « Borea », « Cirrus »): each test fails if its rule is
removed.
"""

from __future__ import annotations

from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.text import heading_items
from veille.roles.analyst import AnalystInput, DocumentText

OPTIONS = ("Atlas", "Borea", "Cirrus")
COST = (
    "Dans le cadre de « Renouvellement des onduleurs : Atlas, Borea ou Cirrus », que disent les documents "
    "sur le coût (prix par unité, garantie et extension de garantie) pour Atlas, Borea et Cirrus ?"
)


def _offer(n: int, option: str, price: str, *, extension: str) -> DocumentText:
    # The warranty lines carry more figures than the price line, so they outrank it.
    body = f"""# Offre {option}

## Prix

- Onduleur {option} : {price} EUR par unité.
- {extension}

## Garantie

Garantie de base de 5 ans ou 40 000 heures de service, capacité garantie de 80 % en fin de garantie.
Extension de garantie de 5 à 7 ans, pièces et main-d'œuvre comprises, sur 10 sites et 40 000 heures.
Garantie des batteries internes de 4 ans ou 1 200 cycles, capacité garantie de 70 % après 4 ans.
Intervention sous garantie en 8 heures ouvrées, 5 jours sur 7, sur les 10 sites, pendant 7 ans.
La garantie couvre 100 % des pièces pendant 5 ans et 50 % des pièces de la sixième à la septième année.
"""
    return DocumentText(
        id=f"doc-0{n}",
        date=f"2026-0{n}-10",
        source_type="offre-prix",
        title=f"Offre de prix {option} : onduleurs et garantie",
        body=body,
    )


def _statements(authority: AuthorityRanking, question: str, *docs: DocumentText) -> list[str]:
    result = analyse(AnalystInput(subtask_id="st-1", question=question, documents=list(docs)), authority)
    return [f.statement for f in result.findings]


def test_a_short_list_item_keeps_its_heading() -> None:
    body = "# Banc\n\n## Charge à froid de 10 à 80 %\n\n- Atlas : 38 minutes.\n- Borea : 33 minutes.\n- Sans chiffre.\n"
    assert heading_items(body, 5) == [
        "Charge à froid de 10 à 80 % — Atlas : 38 minutes.",
        "Charge à froid de 10 à 80 % — Borea : 33 minutes.",
    ]


def test_a_headed_list_item_becomes_a_finding(authority: AuthorityRanking) -> None:
    question = (
        "Dans le cadre de « Renouvellement des onduleurs : Atlas, Borea ou Cirrus », que disent les documents "
        "sur l'autonomie (durée à pleine charge, temps de recharge à froid) pour Atlas et Borea ?"
    )
    bench = DocumentText(
        id="doc-01",
        date="2026-05-02",
        source_type="essai-banc",
        title="Banc d'essai des onduleurs Atlas et Borea",
        body="# Banc\n\nLes deux onduleurs tiennent 40 minutes à pleine charge sur le banc de l'atelier.\n\n"
        "## Temps de recharge à froid, à 5 °C\n\n- Atlas : 38 minutes.\n- Borea : 33 minutes.\n",
    )
    statements = _statements(authority, question, bench)
    assert "Temps de recharge à froid, à 5 °C — Borea : 33 minutes." in statements, statements
