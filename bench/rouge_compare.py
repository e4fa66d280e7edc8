"""veille's ROUGE-L against Google's reference implementation, rouge-score (docs/graders.md).

rouge-score is not a dependency of veille: install it in the venv to run this comparison,
    uv pip install --python .venv/bin/python 'rouge-score==0.1.2'
    PYTHONPATH=$PWD .venv/bin/python bench/rouge_compare.py
For each pair: veille's F1, rouge-score's F1 with its own tokenizer, and rouge-score's F1 when it is
given veille's tokens (same tokens: the LCS F1 must agree to float precision; any other difference
is tokenisation).
"""

from __future__ import annotations

from rouge_score import rouge_scorer, tokenize  # type: ignore[import-untyped]

from veille.graders.rouge import rouge_l
from veille.graders.rouge import tokenize as veille_tokenize

REFERENCE = "Ouvrez le rapport, cliquez sur Partager, choisissez le client."
PAIRS = [
    ("seed A", "Cliquez sur Partager sur le rapport et choisissez le client.", REFERENCE),
    ("seed B", "Utilisez le bouton Partager de votre rapport pour le leur envoyer.", REFERENCE),
    ("seed C", "Ouvrez le rapport, cliquez sur Partager et choisissez l'administrateur.", REFERENCE),
    ("accents", "Les données sont protégées.", "Les données sont chiffrées et protégées."),
    ("figures", "Le débit est de 1 420 tokens/s.", "Le débit atteint 1 420 tokens/s en pointe."),
]


class _VeilleTokens:
    def tokenize(self, text: str) -> list[str]:
        return veille_tokenize(text)


def main() -> None:
    google = rouge_scorer.RougeScorer(["rougeL"])
    same_tokens = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_VeilleTokens())
    print(f"{'pair':10} {'veille':>8} {'rouge-score':>12} {'rouge-score, veille tokens':>27} {'|diff|':>9}")
    worst = 0.0
    for name, response, reference in PAIRS:
        ours, _ = rouge_l(response, reference)
        theirs = google.score(reference, response)["rougeL"].fmeasure
        aligned = same_tokens.score(reference, response)["rougeL"].fmeasure
        worst = max(worst, abs(ours - aligned))
        print(f"{name:10} {ours:8.4f} {theirs:12.4f} {aligned:27.4f} {abs(ours - aligned):9.1e}")
    print(f"largest |veille - rouge-score| on the same tokens: {worst:.1e}")
    print(
        "rouge-score's tokens of « Les données sont protégées »:",
        tokenize.tokenize("Les données sont protégées", None),
    )
    print("veille's tokens:", veille_tokenize("Les données sont protégées"))


if __name__ == "__main__":
    main()
