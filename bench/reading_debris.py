"""Markup debris and cut sentences left by the offline engine's reading on a folder of Markdown.

Usage (figures recorded in docs/offline-engine.md):

    .venv/bin/python bench/reading_debris.py FOLDER [FOLDER…]

Reads every ``*.md`` of each folder with ``split_sentences`` and prints the number of sentences,
those holding markup (``<``, ``](``, ``[^``, ``{%``, ``{{``, a backtick, ``![``, ``-->``, ``{:``,
``|``) and those ending with an abbreviation, with the first examples. Meant for real documents
read locally (a project's blog, release notes), which are not committed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veille.offline.text import split_sentences  # noqa: E402

_MARKUP = re.compile(r"<|\]\(|\[\^|\{%|\{\{|`|!\[|-->|\{:|\|")
_ABBREVIATION_END = re.compile(r"\b(?:e\.g|i\.e|vs|Dr|Mr|cf)\.$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    for folder in args.folders:
        files = sorted(folder.glob("*.md"))
        found = [(p.name, s) for p in files for s in split_sentences(p.read_text(encoding="utf-8"))]
        markup = [(n, s) for n, s in found if _MARKUP.search(s)]
        cut = [(n, s) for n, s in found if _ABBREVIATION_END.search(s)]
        print(
            f"{folder}: {len(files)} files, {len(found)} sentences, {len(markup)} with markup, {len(cut)} cut"
        )
        for name, sentence in (markup + cut)[:10]:
            print(f"  {name}: {sentence[:140]!r}")


if __name__ == "__main__":
    main()
