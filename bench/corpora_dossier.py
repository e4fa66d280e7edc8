"""The offline dossier on every test corpus: the reference's contradictions stated in the ledger,
reference figures found, recommendation, validation (issue 12). Prints one line per corpus.

    .venv/bin/python bench/corpora_dossier.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testkit.offline_pipeline import run_bundled_pipeline  # noqa: E402
from veille.corpus.reference import load_reference  # noqa: E402
from veille.dossier import RECOMMENDATION_SECTION  # noqa: E402
from veille.graders.base import Sample  # noqa: E402
from veille.graders.dossier import StructuralChecks  # noqa: E402
from veille.graders.numeric import NumericGrader  # noqa: E402
from veille.textstats import split_sections  # noqa: E402


def main() -> None:
    corpora = [
        ROOT / "corpus",
        *sorted(p for p in (ROOT / "tests" / "corpora").iterdir() if (p / "request.md").is_file()),
    ]
    print(
        "| corpus | contradictions stated | reference figures found | recommendation | validated (rounds) |"
    )
    print("|---|---:|---:|---|---|")
    for corpus in corpora:
        out = run_bundled_pipeline(corpus)
        reference = load_reference(corpus)
        assert reference is not None, corpus
        ledger = StructuralChecks()._ledger(reference.facts, out["report"], out["report_sources"])
        stated = sum(1 for c in ledger.details.get("contradictions", []) if c["stated"])
        figures = NumericGrader(reference.facts.figures).grade(
            Sample(reference=reference.dossier, response=out["report"])
        )
        found = round((figures.score or 0) * figures.details["figures"])
        recommendation = bool(split_sections(out["report"]).get(RECOMMENDATION_SECTION, "").strip())
        print(
            f"| {corpus.name} | {stated}/{len(reference.facts.contradictions)} | "
            f"{found}/{figures.details['figures']} | {'yes' if recommendation else 'no'} | "
            f"{'yes' if out['validated'] else 'no'} ({len(out['rounds'])}) |"
        )


if __name__ == "__main__":
    main()
