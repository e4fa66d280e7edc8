"""What the verifier of figures (veille.steps.verify) kept and dropped in the offline dossier of each
bundled corpus (issue 36): figures left in the final dossier, items dropped by kind, and the items.

    .venv/bin/python bench/verify_report.py [corpus-name ...] [--list]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testkit.offline_pipeline import run_bundled_pipeline  # noqa: E402
from veille.dossier import Dossier  # noqa: E402
from veille.steps.verify_passages import figures  # noqa: E402

KINDS = (
    "report.unsupported_figure",
    "report.misattributed",
    "ledger.not_a_contradiction",
    "recommendation.incomplete_row",
)


def _texts(dossier: Dossier) -> list[str]:
    items = [*dossier.synthesis, *dossier.uncertainties, *(dossier.recommendation or [])]
    texts = [i.text for i in items] + [p.text for s in dossier.sections for p in s.points]
    return texts + [f"{e.subject}. {e.reason}" for e in dossier.contradictions]


def measure(out: dict[str, Any]) -> tuple[int, dict[str, list[str]]]:
    final = Dossier.model_validate(out["rounds"][-1]["structure"])
    kept = sum(len(figures(t)) for t in _texts(final))
    dropped: dict[str, list[str]] = {k: [] for k in KINDS}
    for a in out["alerts"]:
        if a["code"] in dropped:
            dropped[a["code"]] += [s for s in a["subjects"] if s not in dropped[a["code"]]]
    return kept, dropped


def main() -> None:
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    corpora = [
        ROOT / "corpus",
        *sorted(p for p in (ROOT / "tests" / "corpora").iterdir() if (p / "request.md").is_file()),
    ]
    corpora = [c for c in corpora if not names or c.name in names]
    print("| corpus | figures kept | unsupported | misattributed | not a contradiction | incomplete row |")
    print("|---|---:|---:|---:|---:|---:|")
    listing = []
    for corpus in corpora:
        kept, dropped = measure(run_bundled_pipeline(corpus))
        print(
            f"| {corpus.name} | {kept} | " + " | ".join(str(len(dropped[k])) for k in KINDS) + " |",
            flush=True,
        )
        listing += [f"{corpus.name} {k}: {item}" for k in KINDS for item in dropped[k]]
    if "--list" in sys.argv:
        print("\n".join(listing))


if __name__ == "__main__":
    main()
