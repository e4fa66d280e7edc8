"""Sentence language identification: py3langid (the engine's) against lingua-language-detector.

Usage (figures recorded in docs/offline-engine.md and veille/language.py):

    pip install --target /tmp/lingua lingua-language-detector==2.1.1   # not a dependency
    .venv/bin/python bench/language_id.py --lingua-path /tmp/lingua

Every sentence of the test corpora's documents, labelled with its document's language as
py3langid reads the whole body (a document is in one language; a sentence may be misread), is
identified by both libraries restricted to the same languages; prints misreads and CPU time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veille.language import _identifier  # noqa: E402
from veille.offline import lexicon  # noqa: E402
from veille.offline.text import split_sentences  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lingua-path", type=Path, help="a folder where lingua-language-detector is installed"
    )
    args = parser.parse_args()
    start = time.process_time()
    identifier = _identifier()
    loads = {"py3langid": time.process_time() - start}
    samples: list[tuple[str, str]] = []
    for path in sorted((ROOT / "tests" / "corpora").glob("*/docs/*.md")):
        body = path.read_text(encoding="utf-8")
        label = str(identifier.classify(body)[0])
        samples += [(s, label) for s in split_sentences(body)]
    langs = sorted(lexicon.entries("identified_languages"))
    readers = {"py3langid": lambda s: str(identifier.classify(s)[0])}
    if args.lingua_path:
        sys.path.insert(0, str(args.lingua_path))
        from lingua import IsoCode639_1, LanguageDetectorBuilder

        start = time.process_time()
        codes = [getattr(IsoCode639_1, code.upper()) for code in langs]
        detector = (
            LanguageDetectorBuilder.from_iso_codes_639_1(*codes).with_preloaded_language_models().build()
        )
        loads["lingua"] = time.process_time() - start

        def lingua_read(text: str) -> str:
            found = detector.detect_language_of(text)
            return found.iso_code_639_1.name.lower() if found else ""

        readers["lingua"] = lingua_read
    print(f"{len(samples)} sentences, languages {', '.join(langs)}")
    for name, read in readers.items():
        start = time.process_time()
        wrong = sum(read(s) != label for s, label in samples)
        cpu = time.process_time() - start
        print(f"{name:10} misread {wrong:3d}  cpu {cpu:.2f} s (+ {loads[name]:.2f} s to load its models)")


if __name__ == "__main__":
    main()
