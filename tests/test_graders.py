"""Rule-based graders (seed 002): ROUGE-L, numeric, exact / contains / format checks, combinations."""

from __future__ import annotations

import pytest

from veille.graders import (
    Contains,
    ExactMatch,
    GraderResult,
    JsonFormat,
    JudgeNumbers,
    JudgeSimilarity,
    LabelCheck,
    NumericGrader,
    RougeL,
    Sample,
)
from veille.graders.base import Grader
from veille.graders.numeric import extract_numbers, figures_from_strings, key_figures
from veille.graders.rouge import lcs_length, rouge_l, tokenize
from veille.numbers import Unit

# --- ROUGE-L -----------------------------------------------------------------------------------

SEED_REFERENCE = "Ouvrez le rapport, cliquez sur Partager, choisissez le client."
SEED_A = "Cliquez sur Partager sur le rapport et choisissez le client."
SEED_B = "Utilisez le bouton Partager de votre rapport pour le leur envoyer."
SEED_C = "Ouvrez le rapport, cliquez sur Partager et choisissez l'administrateur."


def test_seed_examples_rank_c_above_a_above_b() -> None:
    grader = RougeL()
    scores = {
        name: grader.grade(Sample(response=text, reference=SEED_REFERENCE)).score
        for name, text in {"A": SEED_A, "B": SEED_B, "C": SEED_C}.items()
    }
    assert scores["C"] > scores["A"] > scores["B"]  # type: ignore[operator]


def test_seed_examples_exact_values() -> None:
    # Hand counts with our tokenisation (the seed's own figures miscount some words):
    # reference 9 tokens; A 10 tokens, LCS "cliquez sur partager choisissez le client" = 6;
    # B 11 tokens, LCS e.g. "le partager le" = 3; C 10 tokens ("l'" split), LCS 7 words.
    # F1 = 2·LCS / (m + n).
    expected = {SEED_A: (6, 10, 12 / 19), SEED_B: (3, 11, 6 / 20), SEED_C: (7, 10, 14 / 19)}
    for text, (lcs, tokens, f1) in expected.items():
        result = RougeL().grade(Sample(response=text, reference=SEED_REFERENCE))
        assert result.details["lcs"] == lcs
        assert result.details["response_tokens"] == tokens
        assert result.details["reference_tokens"] == 9
        assert result.score == pytest.approx(f1)
        assert (result.grader, result.version, result.model) == ("rouge_l", "1", None)


def test_tokenisation_is_french_aware() -> None:
    assert tokenize("L’État, c'est-à-dire l'administrateur qu'il jusqu'à aujourd'hui !") == [
        "l'",
        "état",
        "c'",
        "est-à-dire",
        "l'",
        "administrateur",
        "qu'",
        "il",
        "jusqu'",
        "à",
        "aujourd'hui",
    ]
    # Accents are kept: "donnees" is not "données".
    assert tokenize("Données") != tokenize("Donnees")
    # Decimal numbers stay whole, punctuation goes.
    assert tokenize("« 9,91 % » ; (1.5) — fin.") == ["9,91", "1.5", "fin"]


def test_empty_response_scores_zero() -> None:
    assert RougeL().grade(Sample(response="", reference=SEED_REFERENCE)).score == 0.0
    assert RougeL().grade(Sample(response="...", reference=SEED_REFERENCE)).score == 0.0


def test_identical_and_tied_responses() -> None:
    grader = RougeL()
    assert grader.grade(Sample(response=SEED_REFERENCE, reference=SEED_REFERENCE)).score == pytest.approx(1.0)
    # Same words, different case and punctuation: a tie, as the tokenisation promises.
    results = grader.grade_group("q", SEED_REFERENCE, [SEED_A, SEED_A.upper().replace(".", " !")])
    assert results[0].score == results[1].score


def test_lcs_is_a_subsequence_not_a_substring() -> None:
    assert lcs_length(["a", "x", "b", "y", "c"], ["a", "b", "c"]) == 3
    assert lcs_length([], ["a"]) == 0
    f1, details = rouge_l("a b c", "c b a")
    assert details["lcs"] == 1 and f1 == pytest.approx(1 / 3)


# --- numeric ------------------------------------------------------------------------------------

WACC_REFERENCE = (
    "WACC ≈ 9,91 % ; coût des capitaux propres 10,34 % ; dette après impôt 4,15 % ; EV ≈ 1 705 M$."
)


def test_seed_wacc_example_scores_0_875() -> None:
    result = NumericGrader().grade(
        Sample(response="La réponse contient 9,95 %, 10,3 %, 4,2 % et 1 700 M.", reference=WACC_REFERENCE)
    )
    assert result.score == pytest.approx(0.875)
    points = [m["points"] for m in result.details["matches"]]
    assert points == [1.0, 1.0, 0.5, 1.0]  # 4,2 vs 4,15 is a 1.2 % gap: half a point


def test_seed_wrong_wacc_scores_zero() -> None:
    result = NumericGrader().grade(Sample(response="Le WACC est de 1,33 %", reference=WACC_REFERENCE))
    assert result.score == 0.0


def test_no_figure_in_reference_gives_no_score() -> None:
    result = NumericGrader().grade(Sample(response="12,5 %", reference="Ouvrez le rapport en 2024."))
    assert result.score is None
    assert "reason" in result.details


def test_response_without_numbers_scores_zero() -> None:
    assert NumericGrader().grade(Sample(response="", reference=WACC_REFERENCE)).score == 0.0
    assert NumericGrader().grade(Sample(response="Aucun chiffre.", reference=WACC_REFERENCE)).score == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "1 705 M",
        "1,705 B",
        "1\u202f705\u00a0M€",
        "1\u2009705 millions",
        "$1.705B",
        "1,705 billion",
        "1,705 Md",
    ],
)
def test_units_and_formats_are_harmonised(text: str) -> None:
    [figure] = extract_numbers(text)
    assert figure.value == pytest.approx(1.705e9)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("9,91 %", 9.91),
        ("9.91%", 9.91),
        ("1,705,000", 1_705_000),
        ("1.705.000,5", 1_705_000.5),
        ("1,705.5", 1705.5),
        ("66 000 EUR", 66_000),
        ("5k€", 5_000),
        ("12 milliards", 12e9),
        ("−3,5 %", -3.5),
    ],
)
def test_number_formats(text: str, value: float) -> None:
    [figure] = extract_numbers(text)
    assert figure.value == pytest.approx(value)


def test_currency_is_the_unit_and_two_currencies_never_match() -> None:
    [dollars] = extract_numbers("1 705 M$")
    [euros] = extract_numbers("1 705 M€")
    assert (dollars.unit, euros.unit) == (Unit("currency", "usd"), Unit("currency", "eur"))
    assert dollars.value == euros.value  # currency does not change the value read
    grade = NumericGrader().grade
    assert grade(Sample(response="1 705 M€", reference="EV ≈ 1 705 M$")).score == 0.0
    assert grade(Sample(response="1 705 M", reference="EV ≈ 1 705 M$")).score == 1.0  # bare: the seed


def test_list_numbering_citations_dates_and_versions_are_not_figures() -> None:
    text = "1. Premier point [3]\n2) Second point le 2024-03-15 avec gemini-2.5-flash et v2\n"
    assert extract_numbers(text) == []
    # Plain integers are numbers of the response but not key figures of a reference.
    assert [(f.text, f.is_key) for f in extract_numbers("en 2024, 150 sites et 12,5 %")] == [
        ("150 sites", False),
        ("12,5 %", True),
    ]
    assert [f.text for f in key_figures("Liste :\n1. 3 sites pour 1 705 M$")] == ["1 705 M$"]


def test_gap_thresholds_are_strict() -> None:
    reference = "Budget de 100,0 M."
    grade = NumericGrader().grade
    assert grade(Sample(response="99,1 M", reference=reference)).score == 1.0  # 0.9 %
    assert grade(Sample(response="98,9 M", reference=reference)).score == 0.5  # 1.1 %
    assert grade(Sample(response="95,1 M", reference=reference)).score == 0.5  # 4.9 %
    assert grade(Sample(response="94,9 M", reference=reference)).score == 0.0  # 5.1 %
    # A scale mistake (thousands instead of millions) is a miss, not a near hit.
    assert grade(Sample(response="100 k", reference=reference)).score == 0.0


def test_each_figure_takes_the_closest_number() -> None:
    result = NumericGrader().grade(
        Sample(response="Chiffres : 50 %, 9,9 %, 3 %.", reference="Taux de 9,91 % et marge de 3,0 %.")
    )
    assert [m["matched"] for m in result.details["matches"]] == ["9,9 %", "3 %"]
    assert result.score == 1.0


def test_explicit_figures_from_facts() -> None:
    figures = figures_from_strings(
        ["1 180 tokens/s", "66 000 EUR", "8,1", "12 GPU", "3.4.2", "décembre 2029"]
    )
    assert [f if isinstance(f, str) else f.value for f in figures] == [  # base units: 30 jours in seconds
        1180,
        66_000,
        8.1,
        12,
        "3.4.2",
        "décembre 2029",
    ]
    grader = NumericGrader(["1 180 tokens/s", "3.4.2", "décembre 2029"])
    full = grader.grade(
        Sample(response="Débit 1180 tokens/s ; version 3.4.2 ; LTS jusqu'en Décembre 2029.", reference="")
    )
    assert full.score == 1.0
    # A version or a date is checked verbatim: a nearby year or version earns nothing.
    wrong = grader.grade(
        Sample(response="Débit 1 181 tokens/s ; version 3.4.1 ; décembre 2028.", reference="")
    )
    assert wrong.score == pytest.approx(1 / 3)


# --- exact / contains / format ------------------------------------------------------------------


def test_exact_match_and_contains() -> None:
    assert ExactMatch().grade(Sample(response=" Paris\u00a0 ", reference="paris")).score == 1.0
    assert ExactMatch(case_sensitive=True).grade(Sample(response="paris", reference="Paris")).score == 0.0
    assert ExactMatch().grade(Sample(response="Paris, France", reference="Paris")).score == 0.0
    assert Contains().grade(Sample(response="C'est Paris, France", reference="paris")).score == 1.0
    assert Contains().grade(Sample(response="Lyon", reference="Paris")).score == 0.0
    assert Contains().grade(Sample(response="", reference="Paris")).score == 0.0
    assert Contains().grade(Sample(response="x", reference="")).score is None


def test_json_format_with_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"label": {"enum": ["ok", "ko"]}, "score": {"type": "number"}},
        "required": ["label"],
    }
    grader = JsonFormat(schema)
    assert grader.grade(Sample(response='{"label": "ok", "score": 1}', reference="")).score == 1.0
    assert grader.grade(Sample(response='```json\n{"label": "ko"}\n```', reference="")).score == 1.0
    bad = grader.grade(Sample(response='{"label": "peut-être"}', reference=""))
    assert bad.score == 0.0 and "label" in bad.details["error"]
    assert grader.grade(Sample(response="{label: ok}", reference="")).score == 0.0
    assert JsonFormat().grade(Sample(response="[1, 2]", reference="")).score == 1.0
    with pytest.raises(ValueError, match="invalid JSON Schema"):
        JsonFormat({"type": "no-such-type"})


def test_label_check() -> None:
    grader = LabelCheck(["Positif", "Négatif", "Neutre"])
    assert grader.grade(Sample(response="positif.", reference="Positif")).score == 1.0
    assert grader.grade(Sample(response="Neutre", reference="Positif")).score == 0.0
    unknown = grader.grade(Sample(response="Plutôt positif", reference="Positif"))
    assert unknown.score == 0.0 and unknown.details["error"] == "not a known label"
    assert grader.grade(Sample(response="Neutre", reference="")).score == 1.0  # known label, no expected


# --- combinations --------------------------------------------------------------------------------


class FixedJudge(Grader):
    """A stand-in judge returning fixed scores (the real judge is tested in test_graders_judge.py)."""

    name = "judge"
    version = "test"

    def __init__(self, scores: list[float | None]) -> None:
        self.scores = scores
        self.groups = 0

    def grade(self, sample: Sample) -> GraderResult:
        raise AssertionError("combinations must grade groups")

    def grade_group(self, prompt: str, reference: str, responses: list[str]) -> list[GraderResult]:  # type: ignore[override]
        self.groups += 1
        return [self.result(s, model="judge-model") for s in self.scores[: len(responses)]]


def test_judge_similarity_is_70_30() -> None:
    judge = FixedJudge([0.5])
    [result] = JudgeSimilarity(judge).grade_group("q", SEED_REFERENCE, [SEED_A])
    assert result.score == pytest.approx(0.7 * 0.5 + 0.3 * 12 / 19)
    assert result.grader == "judge+similarity" and result.model == "judge-model"
    assert result.details["weights"] == {"judge": 0.7, "rouge_l": 0.3}


def test_judge_numbers_is_50_50_and_judge_alone_without_figures() -> None:
    judge = FixedJudge([0.6, 0.6])
    wacc = JudgeNumbers(judge).grade_group(
        "q", WACC_REFERENCE, ["9,95 %, 10,3 %, 4,2 % et 1 700 M", "Le WACC est de 1,33 %"]
    )
    assert [r.score for r in wacc] == pytest.approx([0.5 * 0.6 + 0.5 * 0.875, 0.5 * 0.6])
    assert judge.groups == 1  # one judge call for the group
    [alone] = JudgeNumbers(FixedJudge([0.6])).grade_group("q", "Pas de chiffre ici.", ["Réponse 12,5 %"])
    assert alone.score == pytest.approx(0.6)
    assert alone.details["weights"] == {"judge": 1.0, "numeric": 0.0}


def test_combination_without_judge_score_has_no_score() -> None:
    [result] = JudgeSimilarity(FixedJudge([None])).grade_group("q", SEED_REFERENCE, [SEED_A])
    assert result.score is None
    [result] = JudgeNumbers(FixedJudge([None])).grade_group("q", WACC_REFERENCE, ["9,91 %"])
    assert result.score is None


def test_combinations_preserve_ranking_inputs() -> None:
    # With equal judge scores, the similarity part alone orders the seed's answers C > A > B.
    judge = FixedJudge([0.8, 0.8, 0.8])
    scores = [
        r.score for r in JudgeSimilarity(judge).grade_group("q", SEED_REFERENCE, [SEED_A, SEED_B, SEED_C])
    ]
    assert scores[2] > scores[0] > scores[1]  # type: ignore[operator]


def test_grader_result_rejects_out_of_range_scores() -> None:
    with pytest.raises(ValueError):
        GraderResult(grader="x", version="1", score=1.5)
