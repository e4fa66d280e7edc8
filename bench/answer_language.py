"""How often the answer-language check (veille.language.prose_language) would re-ask, on the
paragraphs of every test corpus: each paragraph of twenty words or more, labelled with its
document's language as py3langid reads the whole body, judged alone against the request's language
``fr``. A French paragraph named foreign is a false re-ask; an English one named ``en`` is a catch.

Usage (figures recorded in docs/models.md):

    .venv/bin/python bench/answer_language.py
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veille.language import _LETTER_WORD_RE, language, prose_language  # noqa: E402


def _body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("---", 2)[2] if text.startswith("---") else text


def main() -> None:
    counts: Counter[tuple[str, str]] = Counter()
    started = time.process_time()
    for path in sorted((ROOT / "tests" / "corpora").glob("*/docs/*.md")) + sorted(
        ROOT.glob("corpus/docs/*.md")
    ):
        body = _body(path)
        label = language(body) or "?"
        for paragraph in body.split("\n\n"):
            if len(_LETTER_WORD_RE.findall(paragraph)) >= 20:
                counts[(label, prose_language([paragraph], "fr") or "fr/unsure")] += 1
    cpu = time.process_time() - started
    for (label, verdict), n in sorted(counts.items()):
        print(f"document {label:>2}  verdict {verdict:<9}  {n:>4} paragraph(s)")
    print(f"CPU {cpu:.2f} s (model load included)")


if __name__ == "__main__":
    main()
