"""The judge on the seed's cases through the offline engine (docs/graders.md): scores per response.

    PYTHONPATH=<checkout> .venv/bin/python bench/judge_cases.py
The offline judge is a proxy (figure and word recall); the LLM judge's cases are pinned with a
scripted judge in tests/test_graders_judge.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from veille.graders.judge import JudgeGrader
from veille.settings import Settings

try:
    from veille.backends import build_client
except ImportError:  # checkouts before veille/backends.py (b0ec926: the « before » column)
    from veille.models.factory import build_client  # type: ignore[no-redef]

WACC = "WACC ≈ 9,91 % ; coût des capitaux propres 10,34 % ; dette après impôt 4,15 % ; EV ≈ 1 705 M$."
SHARE = "Ouvrez le rapport, cliquez sur Partager, choisissez le client."
GROUPS = [
    (
        "Calcule le WACC",
        WACC,
        {
            "« Je ne sais pas. »": "Je ne sais pas.",
            "right figures": "WACC 9,95 %, fonds propres 10,3 %, dette 4,2 %, EV 1 700 M.",
        },
    ),
    (
        "Comment partager le rapport ?",
        SHARE,
        {
            "seed A (right)": "Cliquez sur Partager sur le rapport et choisissez le client.",
            "seed B (right, reworded)": "Utilisez le bouton Partager de votre rapport pour le leur envoyer.",
            "seed C (wrong recipient)": "Ouvrez le rapport, cliquez sur Partager et choisissez l'administrateur.",
        },
    ),
]


def main() -> None:
    settings = Settings(backend="offline", warehouse_dir=Path(tempfile.mkdtemp()), use_cache=False)
    with build_client(settings, run_id="bench-judge") as client:
        judge = JudgeGrader(client)
        print(f"judge version {judge.version} (offline engine)")
        for prompt, reference, responses in GROUPS:
            results = judge.grade_group(prompt, reference, list(responses.values()))
            for label, result in zip(responses, results, strict=True):
                print(f"{label:28} {result.score:.3f}")


if __name__ == "__main__":
    main()
