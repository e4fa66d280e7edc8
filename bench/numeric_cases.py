"""The numeric grader on the cases of issue 25: score per case, for the veille on PYTHONPATH.

Run it on two checkouts to compare (docs/graders.md):
    PYTHONPATH=/work/main python bench/numeric_cases.py          # before
    PYTHONPATH=$PWD python bench/numeric_cases.py                 # after
Each case is pinned by tests/test_graders_numbers.py.
"""

from __future__ import annotations

from veille.graders.base import Sample
from veille.graders.numeric import NumericGrader

# (case, reference, response, score the seed expects)
CASES: list[tuple[str, str, str, float | None]] = [
    (
        "seed WACC example",
        "WACC ≈ 9,91 % ; coût des capitaux propres 10,34 % ; dette après impôt 4,15 % ; EV ≈ 1 705 M$.",
        "La réponse contient 9,95 %, 10,3 %, 4,2 % et 1 700 M.",
        0.875,
    ),
    ("seed wrong WACC", "WACC ≈ 9,91 % ; EV ≈ 1 705 M$.", "Le WACC est de 1,33 %.", 0.0),
    ("English thousands with $", "Revenue was $1,705M.", "Le chiffre d'affaires est de $1705M.", 1.0),
    ("English thousands, count", "The engine serves 1,420 tokens/s.", "Le moteur sert 1 420 tokens/s.", 1.0),
    ("$12,500 read as 12 500", "The licence costs $12,500.", "La licence coûte 12 500 $.", 1.0),
    ("spaced range", "Le budget est de 8 500-11 000 EUR.", "Compter de 8 500 à 11 000 EUR.", 1.0),
    ("range, one end given", "Le budget est de 8 500-11 000 EUR.", "Compter 11 000 EUR.", 0.5),
    ("compact range", "Le budget est de 8500-11000 EUR.", "Entre 8 500 et 11 000 EUR.", 1.0),
    ("percent range", "Une hausse de 10-15 % est attendue.", "Une hausse de 10 à 15 %.", 1.0),
    ("en-dash minus", "Le résultat est de –3,2 M€.", "Le résultat est de 3,2 M€.", 0.0),
    ("bare year is no candidate", "Le pilote coûte 2 000 €.", "En 2026 le pilote démarre.", 0.0),
    ("version is no key figure", "Orvet 2.6 atteint 12,5 %.", "Il atteint 12,5 %.", 1.0),
    ("version is no candidate", "Le lien offre 3,4 Gb/s.", "Kestrel 3.4 est le plus rapide.", 0.0),
    ("percent vs count", "La part est de 12 %.", "Chaque site a 12 GPU.", 0.0),
    ("kEUR multiplier", "Le pilote coûte 5 kEUR.", "Le pilote coûte 5 000 €.", 1.0),
    ("MEUR multiplier", "Le contrat vaut 3 MEUR.", "Le contrat vaut 3 000 000 €.", 1.0),
    ("points are not percents", "La marge gagne +2 points.", "La marge gagne 2 %.", 0.0),
    ("two currencies", "EV ≈ 1 705 M$.", "EV ≈ 1 705 M€.", 0.0),
]


def main() -> None:
    grader = NumericGrader()
    print(f"numeric grader version {grader.version}")
    for case, reference, response, expected in CASES:
        score = grader.grade(Sample(response=response, reference=reference)).score
        shown = "None" if score is None else f"{score:.3f}"
        print(f"{case:32} {shown:>6}  (seed: {expected})")


if __name__ == "__main__":
    main()
