"""The number reader (veille/numbers.py): French and English writing, ambiguity settled by context,
ranges, signs, multipliers and units; years, dates, versions, ids and numbering never figures.

Property: a number formatted in any supported style (Babel's CLDR formats for fr_FR, en_US and de_DE,
French with ordinary or no-break spaces, English with a currency first, multipliers, ranges, minus
signs) inside a sentence of the matching language reads back the same value.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from babel.numbers import format_decimal
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.numbers import Reading, compatible, key_figures, read_numbers
from veille.numberunits import Unit


def figures(text: str, lang: str = "fr") -> list[Reading]:
    return [r for r in read_numbers(text, lang) if r.role == "figure"]


def only(text: str, lang: str = "fr") -> Reading:
    found = figures(text, lang)
    assert len(found) == 1, found
    return found[0]


EUR, USD, PCT = Unit("currency", "eur"), Unit("currency", "usd"), Unit("percent", "%")


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("EV ≈ 1 705 M$.", 1.705e9, USD),
        ("soit 1,705 B au total", 1.705e9, None),  # the seed: 1,705 B = 1 705 M
        ("Revenue reached $1,705M in the year.", 1.705e9, USD),  # currency first: English grouping
        ("It costs $12,500 per seat.", 12500, USD),
        ("The engine serves 1,420 tokens/s on the benchmark.", 1420, Unit("count", "token/s")),
        ("Le débit atteint 1 420 tokens/s.", 1420, Unit("count", "token/s")),
        ("Le résultat est de « –3,2 M€ » cette année.", -3.2e6, EUR),
        ("Une perte de −3,2 M€ (signe moins Unicode).", -3.2e6, EUR),
        ("Un budget de 5 kEUR pour le pilote.", 5000, EUR),
        ("Un budget de 3 MEUR pour le pilote.", 3e6, EUR),
        ("Un marché de 2 Md€ en Europe.", 2e9, EUR),
        ("A market of 2 bn dollars and more.", 2e9, USD),
        ("Le trajet dure 4 h 15 en moyenne.", 4 * 3600 + 15 * 60, Unit("duration", "s")),
        ("Le trajet dure 255 min en moyenne.", 255 * 60, Unit("duration", "s")),
        ("La marge gagne +2 points de pourcentage.", 2, Unit("points", "pp")),
        ("Chaque site reçoit 12 GPU.", 12, Unit("count", "gpu")),
        ("Le lien offre 3,4 Gb/s.", 3.4e9, Unit("measure", "byte/s")),
        ("Une faille notée CVSS 8,1 reste ouverte.", 8.1, None),  # a comma decimal is no version
        ("Un loyer de 4 500 EUR/mois.", 4500, Unit("currency", "eur/mois")),
        ("Un gain de 1.705,5 € (style continental).", 1705.5, EUR),
        ("A gain of 1,705.5 dollars.", 1705.5, USD),
        ("Un total de 1\u202f705,5 € (espace fine insécable).", 1705.5, EUR),
    ],
)
def test_a_figure_reads_its_value_and_unit(text: str, value: float, unit: Unit | None) -> None:
    reading = only(text)
    assert reading.value == pytest.approx(value)
    assert reading.unit == unit
    assert text[reading.start : reading.end] == reading.text


@pytest.mark.parametrize(
    ("text", "low", "high", "unit"),
    [
        ("Le budget est de 8 500-11 000 EUR par an.", 8500, 11000, EUR),
        ("Le budget est de 8500-11000 EUR par an.", 8500, 11000, EUR),
        ("Le budget est de 8 500 – 11 000 EUR par an.", 8500, 11000, EUR),
        ("une hausse de 10-15 % sur un an", 10, 15, PCT),
        ("un coût de 8 à 12 M€ selon le lot", 8e6, 12e6, EUR),
        ("a cost of 8 to 12 M€", 8e6, 12e6, EUR),
        ("entre –5 et –2 % selon les cas", -5, None, PCT),  # « et » is no range: two figures
    ],
)
def test_ranges_carry_both_ends_and_the_unit_written_once(
    text: str, low: float, high: float | None, unit: Unit
) -> None:
    first = figures(text)[0]
    assert first.value == pytest.approx(low)
    assert first.high == (pytest.approx(high) if high is not None else None)
    assert figures(text)[-1].unit == unit


def test_a_dash_after_a_number_is_a_range_not_a_minus() -> None:
    reading = only("de 10-15 %")
    assert reading.values == (10, 15)
    # A decreasing pair is not a range (« 2024 à 150 sites »): two readings, no sign invented.
    assert [r.value for r in read_numbers("en 2024 à 150 sites")] == [2024, 150]


class TestAmbiguousSeparators:
    """« 1,705 » and « 1.705 »: each reading is reachable, and the context decides."""

    def test_english_text_reads_comma_three_digits_as_grouping(self) -> None:
        reading = figures("Sales reached 1,705 units in total and the rate is 2.5 per unit.")[0]
        assert (reading.value, reading.alternative) == (1705, 1.705)

    def test_french_text_reads_comma_three_digits_as_decimal(self) -> None:
        reading = figures("Le ratio est de 1,705 et la marge de 2,5 points.")[0]
        assert (reading.value, reading.alternative) == (pytest.approx(1.705), 1705)

    def test_the_other_numbers_of_the_text_outweigh_its_language(self) -> None:
        # French words, but every other number has a decimal dot: an English-style writer.
        assert figures("Le total est 1,705 unités, le taux 2.5 par unité.", "fr")[0].value == 1705
        # English words, but decimal commas elsewhere: a continental writer.
        assert figures("The ratio is 1,705 and the margin is 2,5 points.", "en")[0].value == pytest.approx(
            1.705
        )

    def test_a_currency_written_first_is_english_order(self) -> None:
        assert only("Le contrat vaut $1,705 selon la note.").value == 1705

    def test_neither_evidence_nor_words_falls_back_on_the_default_language(self) -> None:
        assert only("1,705", "fr").value == pytest.approx(1.705)
        assert only("1,705", "en").value == 1705

    def test_a_dot_three_digits_is_decimal_unless_the_text_groups_with_dots(self) -> None:
        assert only("The factor is 1.705 here.").value == pytest.approx(1.705)
        found = figures("Prix : 1.705 € et 2.300.000 € l'an dernier.")
        assert [r.value for r in found] == [1705, 2300000]

    def test_other_forms_are_never_ambiguous(self) -> None:
        for text, value in [("9,91 %", 9.91), ("0,705 %", 0.705), ("1,7055 %", 1.7055), ("12,50 €", 12.5)]:
            reading = only(text, "en")
            assert (reading.value, reading.alternative) == (pytest.approx(value), None)


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("En 2026, rien.", "year"),
        ("Le 15 mars 2024, rien.", "date"),
        ("Depuis mars 2024, rien.", "date"),
        ("On March 15, 2024 nothing.", "date"),
        ("Le 2024-03-15, rien.", "date"),
        ("Le 15/03/2024, rien.", "date"),
        ("À 14:30, rien.", "date"),
        ("Orvet 2.6 est sorti.", "version"),
        ("la version 2.6 est sortie", "version"),
        ("le paquet v1.2.3 est sorti", "version"),
        ("le paquet 3.4.2 est sorti", "version"),
        ("le ticket 4521 est clos", "id"),
        ("le point n° 12 est clos", "id"),
        ("le bug #12 est clos", "id"),
        ("la norme COVID-19 est close", "id"),
        ("Server 7 est arrêté", "id"),
        ("le 1er et le 2e", "ordinal"),
        ("voir [3] et [1, 2]", "citation"),
        ("1. premier\n2) second", "list"),
    ],
)
def test_years_dates_versions_ids_and_numbering_are_never_figures(text: str, role: str) -> None:
    found = read_numbers(text)
    assert found and all(r.role == role for r in found), found
    assert key_figures(text) == []


def test_a_name_s_version_does_not_take_the_next_word_as_its_unit() -> None:
    found = read_numbers("Kestrel 3.4 atteint 3,4 Gb/s.")
    assert [(r.role, r.unit) for r in found] == [("version", None), ("figure", Unit("measure", "byte/s"))]


def test_a_dotted_name_s_number_is_its_version_not_a_count() -> None:
    """« Node.js 21 release » named the release, it counted nothing: two such announcements were
    opposed as « 21 release retenu contre 20 release » (nodejs-securite's first run)."""
    for text in ("Node.js 21 release", "ASP.NET 8 release", "Vue.js 3 apporte"):
        [first, *_] = read_numbers(text)
        assert first.role != "figure" and first.unit is None, (text, first)
    # A sentence's full stop is no dotted name: « fin. 21 jours » stays a duration.
    [days] = read_numbers("fin. 21 jours")
    assert days.role == "figure" and days.unit is not None


def test_key_figures_are_decimals_percents_points_and_amounts() -> None:
    text = "En 2026, 12 sites et 12 GPU ; 9,91 % ; +2 points ; 2 000 € ; 3 M ; 1 705 utilisateurs ; 7 pannes."
    assert [r.text for r in key_figures(text)] == [
        "9,91 %",
        "+2 points",
        "2 000 €",
        "3 M",
        "1 705 utilisateurs",
    ]


def test_units_are_compatible_only_with_the_same_unit_or_a_bare_amount() -> None:
    gpu, points = Unit("count", "gpu"), Unit("points", "pp")
    assert not compatible(PCT, gpu)
    assert not compatible(PCT, None)
    assert not compatible(PCT, points)
    assert not compatible(EUR, USD)
    assert compatible(USD, None)  # « 1 700 M » for « 1 705 M$ » (the seed)
    assert compatible(gpu, gpu)
    assert compatible(Unit("duration", "s"), only("2 h").unit)


# --- property: any supported writing of a number reads back its value ---------------------------

_VALUES = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999999"), places=2).filter(
    lambda d: d > 0
)


def _babel(value: Decimal, locale: str) -> str:
    return format_decimal(value, locale=locale, decimal_quantization=False, group_separator=True)


STYLES = {
    # French (CLDR: U+202F between groups), French with ordinary and no-break spaces, English, German.
    "fr_FR": lambda v: _babel(v, "fr_FR"),
    "fr_space": lambda v: _babel(v, "fr_FR").replace("\u202f", " "),
    "fr_nbsp": lambda v: _babel(v, "fr_FR").replace("\u202f", "\u00a0"),
    "en_US": lambda v: _babel(v, "en_US"),
    "de_DE": lambda v: _babel(v, "de_DE"),
}
SENTENCES = {
    "fr": "Selon le rapport, le montant est de {} pour le projet et la marge de 2,25 %.",
    "en": "According to the report, the amount is {} for the project and the margin is 2.25 %.",
    "de": "Laut Bericht: {} Gesamt, 2.300.000 € und 2,25 % Marge.",
}
LANG = {"fr_FR": "fr", "fr_space": "fr", "fr_nbsp": "fr", "en_US": "en", "de_DE": "de"}


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, style=st.sampled_from(sorted(STYLES)))
def test_any_supported_style_reads_back_the_same_value(value: Decimal, style: str) -> None:
    written = STYLES[style](value)
    text = SENTENCES[LANG[style]].format(written + " €")
    reading = figures(text)[0]
    assert reading.value == float(value), (written, reading)
    assert reading.unit == EUR


@settings(max_examples=200, deadline=None)
@given(
    value=_VALUES,
    multiplier=st.sampled_from(
        [("k€", 10**3), (" M€", 10**6), (" Md€", 10**9), (" MEUR", 10**6), ("M$", 10**6)]
    ),
    minus=st.sampled_from(["", "-", "\u2212", "\u2013"]),
)
def test_signs_and_multipliers_read_back(value: Decimal, multiplier: tuple[str, int], minus: str) -> None:
    written = f"{minus}{_babel(value, 'fr_FR')}{multiplier[0]}"
    reading = figures(f"Le résultat net est de {written} sur l'exercice.")[0]
    expected = float(value * multiplier[1]) * (-1 if minus else 1)
    assert reading.value == pytest.approx(expected, rel=1e-12)
    assert reading.multiplier == multiplier[1]


@settings(max_examples=200, deadline=None)
@given(
    low=_VALUES,
    gap=_VALUES,
    dash=st.sampled_from(["-", "\u2013", " - ", " \u2013 ", " à "]),
    style=st.sampled_from(["fr_FR", "fr_space"]),
    unit=st.sampled_from([(" EUR", EUR), (" %", PCT), (" €", EUR)]),
)
def test_ranges_read_back_both_ends(
    low: Decimal, gap: Decimal, dash: str, style: str, unit: tuple[str, Unit]
) -> None:
    high = low + gap
    written = f"{STYLES[style](low)}{dash}{STYLES[style](high)}{unit[0]}"
    reading = figures(f"Le budget prévu est de {written} pour le lot.")[0]
    assert reading.values == (float(low), float(high)), written
    assert reading.unit == unit[1]
