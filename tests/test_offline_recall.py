"""Recall rules of the offline analyst (issue 12): counted nouns as units, durations, bounded
statements compared with measures, figures quoted to be rejected, source types matched by a word.

Synthetic documents only (products « Atlas », « Borea », « Cirrus »): each test fails if its rule is
removed or inverted.
"""

from __future__ import annotations

import pytest

from veille.offline.analyst import analyse
from veille.offline.authority import AuthorityRanking
from veille.offline.figures import extract_figures, figure_unit, figure_value, rate_unit
from veille.offline.text import split_sentences
from veille.roles.analyst import AnalystInput, DocumentText

QUESTION = (
    "Dans le cadre de « Choix d'un équipement : Atlas, Borea ou Cirrus », que disent les documents sur "
    "l'endurance (cycles de vie, durée de restauration, bruit) ?"
)


def _doc(doc_id: str, date: str, source_type: str, title: str, body: str) -> DocumentText:
    return DocumentText(id=doc_id, date=date, source_type=source_type, title=title, body=body)


def _analyse(authority: AuthorityRanking, *docs: DocumentText) -> list[tuple[list[str], str, str]]:
    result = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=list(docs)), authority)
    return [(n.doc_ids, n.retained, n.reason) for n in result.contradictions]


# --- figures -----------------------------------------------------------------------------------


def test_a_counted_noun_is_the_unit_of_its_number() -> None:
    assert extract_figures("Le pack tient 4 200 cycles complets avant 80 %.") == ["4 200 cycles", "80 %"]
    assert figure_unit("4 200 cycles") == figure_unit("1 cycle") == "cycle"
    assert figure_unit("7 pannes") == "panne"
    assert extract_figures("Up to 40 000 requests per second.") == ["40 000 requests"]


def test_french_and_english_spellings_share_one_unit() -> None:
    assert figure_unit("3 days") == figure_unit("8 jours") == figure_unit("1 jour")
    assert figure_unit("2 hours") == figure_unit("2 heures") == figure_unit("2 h")
    assert figure_unit("5 years") == figure_unit("5 ans")


def test_not_every_word_after_a_number_is_a_unit() -> None:
    # a year before a noun, a model number before a verb (an id: not a figure), a function word, a month
    assert extract_figures("La grille 2026 tarifs est close.") == ["2026"]
    assert extract_figures("The Model 150 delivers 124 kW.") == ["124 kW"]
    assert extract_figures("Payloads from 2 to 40 KB.") == ["2", "40 KB"]
    assert extract_figures("Rendez-vous le 27 octobre.") == []  # a day of a month: a date, no figure
    assert extract_figures("Il reste 3 Atlas en stock.") == ["3"]


def test_hours_and_minutes_are_one_duration() -> None:
    figures = extract_figures("Restauration de 20 To : 4 h 15 pour Atlas.")
    assert figures == ["20 To", "4 h 15"]  # the minutes are not a second figure
    # values in base units (veille/numbers.py): seconds for every duration
    assert figure_unit("4 h 15") == "h" and figure_value("4 h 15") == pytest.approx(4.25 * 3600)
    assert extract_figures("en 3 hours 20 minutes") == ["3 hours 20 minutes"]
    assert figure_value("3 hours 20 minutes") == pytest.approx(3 * 3600 + 20 * 60)
    # a number after « h » followed by a unit is another figure, not minutes
    assert extract_figures("en moins de 2 h 20 To restaurés") == ["2 h", "20 To"]


def test_a_temperature_ends_a_sentence() -> None:
    assert split_sentences("Il donne 124 kW à 7 °C. Chaque site demande 160 kW.") == [
        "Il donne 124 kW à 7 °C.",
        "Chaque site demande 160 kW.",
    ]


# --- contradictions ------------------------------------------------------------------------------

_SHEET = "Atlas : fiche technique du pack"
_BENCH = "Banc d'essai : vieillissement du pack Atlas"


def test_counted_figures_that_disagree_make_one_note_retaining_the_measure(
    authority: AuthorityRanking,
) -> None:
    sheet = _doc("d-1", "2026-02-01", "fiche-technique", _SHEET,
                 "## Endurance\n\nAtlas tient 4 200 cycles complets avant d'atteindre 80 % de capacité.\n")  # fmt: skip
    bench = _doc("d-2", "2026-08-01", "benchmark-interne", _BENCH,
                 "## Résultat\n\nAu banc, Atlas atteint 80 % de capacité après 3 200 cycles complets.\n")  # fmt: skip
    notes = _analyse(authority, sheet, bench)
    assert len(notes) == 1, notes
    doc_ids, retained, reason = notes[0]
    assert sorted(doc_ids) == ["d-1", "d-2"] and retained == "d-2"
    assert "3 200 cycles retenu contre 4 200 cycles" in reason
    # The ranking decides the side: make the sheet the more authoritative type, it is retained.
    flipped = authority.model_copy(
        update={
            "types": {
                **authority.types,
                "fiche-fournisseur": authority.types["fiche-fournisseur"].model_copy(update={"rank": 200}),
            }
        }
    )
    [(_, retained, _)] = _analyse(flipped, sheet, bench)
    assert retained == "d-1"


def test_same_figures_make_no_note(authority: AuthorityRanking) -> None:
    sheet = _doc("d-1", "2026-02-01", "fiche-technique", _SHEET,
                 "## Endurance\n\nAtlas tient 3 200 cycles complets avant d'atteindre 80 % de capacité.\n")  # fmt: skip
    bench = _doc("d-2", "2026-08-01", "benchmark-interne", _BENCH,
                 "## Résultat\n\nAu banc, Atlas atteint 80 % de capacité après 3 200 cycles complets.\n")  # fmt: skip
    assert _analyse(authority, sheet, bench) == []


_RELEASE = "Atlas 6 : restauration de 20 To en moins de 2 heures"
_TESTS = "Essais de restauration : 20 To avec Atlas"


@pytest.mark.parametrize(
    ("measured", "conflict"),
    [("4 h 15", True), ("1 h 30", False)],  # outside the bound: a contradiction; within it: none
)
def test_a_measure_outside_a_bound_contradicts_it(
    authority: AuthorityRanking, measured: str, conflict: bool
) -> None:
    release = _doc("d-1", "2026-03-01", "communique", _RELEASE,
                   "## Restauration\n\nAtlas 6 restaure 20 To en moins de 2 heures.\n")  # fmt: skip
    tests = _doc("d-2", "2026-06-01", "essai-restauration", _TESTS,
                 f"## Résultats\n\nLa restauration de 20 To par Atlas a duré {measured}, contrôles compris.\n")  # fmt: skip
    notes = _analyse(authority, release, tests)
    if not conflict:
        assert notes == []
        return
    [(_doc_ids, retained, reason)] = notes
    assert retained == "d-2", reason  # « essai-restauration » ranks as a measurement, above a communiqué
    assert f"{measured} retenu contre moins de 2 heures" in reason  # the bound keeps its side


def test_a_requirement_is_not_a_claim(authority: AuthorityRanking) -> None:
    """A bound about no subject (a requirement document) is not contradicted by a measure."""
    need = _doc("d-1", "2026-01-10", "cahier-des-charges", "Cahier des charges : restauration des serveurs",
                "## Exigences\n\nLa restauration de 20 To doit se faire en moins de 2 heures.\n")  # fmt: skip
    tests = _doc("d-2", "2026-06-01", "essai-restauration", _TESTS,
                 "## Résultats\n\nLa restauration de 20 To par Atlas a duré 4 h 15, contrôles compris.\n")  # fmt: skip
    assert _analyse(authority, need, tests) == []


def test_a_figure_of_the_same_unit_is_no_qualifier(authority: AuthorityRanking) -> None:
    """« 8 × 2 900 EUR = 23 200 EUR » and « passe de 2 900 EUR à 3 600 EUR » share 2 900 EUR, but a
    value of the same quantity is not a condition of the measure: no contradiction."""
    grid = _doc("d-1", "2026-03-01", "grille-tarifaire", "Atlas : grille tarifaire des licences",
                "## Exemple\n\nPour 8 postes : 8 × 2 900 EUR = 23 200 EUR de licence.\n")  # fmt: skip
    news = _doc("d-2", "2026-10-01", "article-presse", "Licences Atlas : la grille change",
                "## Prix\n\nLa licence Atlas passe de 2 900 EUR à 3 600 EUR par poste.\n")  # fmt: skip
    assert _analyse(authority, grid, news) == []


def test_a_lower_case_identifier_starts_a_sentence(authority: AuthorityRanking) -> None:
    """« p99 added latency: 2.1 ms. » is a fact, not a list fragment: it is compared."""
    sheet = _doc("d-1", "2026-02-01", "datasheet", "Atlas gateway datasheet",
                 "## Performance\n\n- p99 added latency: 2.1 ms.\n")  # fmt: skip
    bench = _doc("d-2", "2026-08-01", "internal-benchmark", "Internal benchmark of the Atlas gateway",
                 "## Results\n\nAtlas shows a p99 added latency of 11.4 ms with token validation.\n")  # fmt: skip
    [(_, retained, _)] = _analyse(authority, sheet, bench)
    assert retained == "d-2"


# --- rates, needs and quoted denials ----------------------------------------------------------------


def test_a_rate_keeps_what_it_is_counted_per() -> None:
    assert rate_unit("installed in under 3 days per site", "3 days") == "jour/site"
    assert rate_unit("a duré 8 jours par site en moyenne", "8 jours") == "jour/site"
    assert rate_unit("soit 4 500 EUR par mois", "4 500 EUR") == rate_unit("4 500 EUR/mois", "4 500 EUR/mois")
    assert rate_unit("0.06 USD per GB-month stored", "0.06 USD") == "usd/gb-month"
    assert rate_unit("Atlas tient 4 200 cycles complets", "4 200 cycles") == "cycle"


_BROCHURE = "Atlas AW: heat pump for schools"
_FEEDBACK = "Retour d'expérience : six écoles équipées d'Atlas AW"


def test_two_measures_of_one_rate_need_their_context(authority: AuthorityRanking) -> None:
    """The one cost per site of each document is not the same cost (an enclosure, the unit)."""
    quote = _doc("d-1", "2026-03-01", "offre-prix", "Atlas AW : offre de prix",
                 "## Prix\n\nAtlas AW installée et mise en service : 91 000 EUR par site.\n")  # fmt: skip
    noise = _doc("d-2", "2026-09-01", "rapport-de-mesure", "Atlas AW : mesures acoustiques",
                 "## Remède\n\nUn écran acoustique pour Atlas, chiffré à 14 000 EUR par site, suffit.\n")  # fmt: skip
    assert _analyse(authority, quote, noise) == []


def test_rates_per_different_things_do_not_compare(authority: AuthorityRanking) -> None:
    prices = _doc("d-1", "2026-02-01", "pricing-page", "Atlas Streams pricing",
                  "## Support\n\nAtlas storage price: 1 500 USD per month of retention.\n")  # fmt: skip
    news = _doc("d-2", "2026-10-01", "announcement", "Atlas Streams pricing update",
                "## Storage\n\nAtlas storage price stays at 0.06 USD per GB-month of retention.\n")  # fmt: skip
    assert _analyse(authority, prices, news) == []


def test_a_need_is_not_a_claim(authority: AuthorityRanking) -> None:
    brochure = _doc("d-1", "2026-03-01", "brochure", _BROCHURE,
                    "## Performance\n\nAtlas AW heating capacity of 150 kW at +7 °C outdoor.\n")  # fmt: skip
    quote = _doc("d-2", "2026-05-01", "quote", "Atlas quote: twelve AW heat pumps",
                 "## Sizing\n\nEach school needs 160 kW at +7 °C outdoor heating capacity from Atlas.\n")  # fmt: skip
    assert _analyse(authority, brochure, quote) == []


def test_a_table_row_is_a_finding_unless_a_cell_of_it_was_superseded(authority: AuthorityRanking) -> None:
    bench = _doc("d-1", "2026-09-01", "benchmark-interne", "Banc comparatif : Atlas, Borea et Cirrus",
                 "## Résultats\n\n| Produit | latence p95 | endurance |\n|---|---|---|\n"
                 "| Atlas | 38 ms | 4 200 cycles |\n| Borea | 27 ms | 3 900 cycles |\n")  # fmt: skip
    result = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=[bench]), authority)
    statements = [f.statement for f in result.findings]
    assert "Atlas : latence p95 38 ms ; endurance 4 200 cycles." in statements, statements
    assert "Borea : latence p95 27 ms ; endurance 3 900 cycles." in statements, statements
    # A 2026 grid row whose price the 2027 grid replaces is no finding; the 2027 row is.
    old = _doc("d-2", "2026-01-15", "grille-tarifaire", "Atlas : grille tarifaire des licences 2026",
               "## Prix\n\n| Palier | prix mensuel de la licence |\n|---|---|\n| Standard | 1 150 EUR par mois |\n")  # fmt: skip
    new = _doc("d-3", "2026-10-01", "grille-tarifaire", "Atlas : grille tarifaire des licences 2027",
               "## Prix\n\n| Palier | prix mensuel de la licence |\n|---|---|\n| Standard | 1 480 EUR par mois |\n")  # fmt: skip
    result = analyse(AnalystInput(subtask_id="st-1", question=QUESTION, documents=[old, new]), authority)
    assert [n.retained for n in result.contradictions] == ["d-3"]
    cited = {(tuple(f.doc_ids), f.statement) for f in result.findings}
    assert not any("1 150 EUR" in text for _, text in cited), cited
    assert any("1 480 EUR" in text for _, text in cited), cited


# --- authority ---------------------------------------------------------------------------------


def test_a_source_type_is_matched_by_one_of_its_words(authority: AuthorityRanking) -> None:
    bench = authority.rank("benchmark-interne")
    assert authority.rank("essai-restauration") == bench  # « essai » of the alias « banc-d-essai »
    assert authority.rank("banc-independant") == bench
    assert authority.rank("vendor-datasheet") == authority.rank("fiche-fournisseur")
    # the configured label is kept for exact names and aliases only
    assert authority.label("essai-restauration") == "la source de type essai-restauration"
    assert authority.label("banc-d-essai") == authority.label("benchmark-interne")
    # a word two types use decides nothing; a type naming nothing gets the default rank
    assert authority.rank("note-de-synthese") == authority.default_rank
    assert authority.rank("note-technique") == authority.rank("fiche-fournisseur")  # « technique » decides
    assert authority.rank("lettre-club") == authority.default_rank
