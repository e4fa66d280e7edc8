"""Entries per item of an inventory (issue 37 item 5), read from reports saved by bench/substance.py.

    .venv/bin/python bench/substance.py --corpus services-emploi --save /tmp/reports
    .venv/bin/python bench/inventory_entries.py /tmp/reports --corpus services-emploi

An item is a title shared by the corpus's on-topic documents (reference/substance.yaml ``on_topic``;
two sheets of one service are one item). Per saved report (one per backend): the items whose
documents the report lists in its Sources (read and cited), and those with an entry — a line of the
« Points clés » section citing one of the item's documents and naming the item (case aside) —, and
the items the report never names in a key point. Prints one line per report.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veille.corpus.document import parse_document  # noqa: E402

_SOURCE_RE = re.compile(r"^- \[(\d+)\] \*\*([^*]+)\*\*", re.MULTILINE)


def _key(text: str) -> str:
    return " ".join(re.sub(r"\W+", " ", text.casefold()).split())


def items(corpus: Path) -> dict[str, str]:
    """On-topic document id -> its item (the document's title)."""
    reference = yaml.safe_load((corpus / "reference" / "substance.yaml").read_text(encoding="utf-8"))
    out = {}
    for doc_id in reference["on_topic"]:
        path = corpus / "docs" / f"{doc_id}.md"
        out[doc_id] = parse_document(path, relative_to=corpus / "docs").title
    return out


def measure(report: str, wanted: dict[str, str]) -> tuple[int, int, int, list[str]]:
    """(items, items read and cited, items with an entry, items without one)."""
    numbers = {doc_id: int(n) for n, doc_id in _SOURCE_RE.findall(report)}
    body = report.split("## Points clés", 1)[-1].split("\n## ", 1)[0]
    points = [line for line in body.splitlines() if line.startswith("- ")]
    by_item: dict[str, list[str]] = {}
    for doc_id, title in wanted.items():
        by_item.setdefault(title, []).append(doc_id)
    cited = with_entry = 0
    missing = []
    for title, docs in by_item.items():
        marks = [f"[{numbers[d]}]" for d in docs if d in numbers]
        cited += bool(marks)
        if any(_key(title) in _key(p) and any(m in p for m in marks) for p in points):
            with_entry += 1
        else:
            missing.append(title)
    return len(by_item), cited, with_entry, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saved", type=Path, help="the --save folder of bench/substance.py")
    parser.add_argument("--corpus", default="services-emploi")
    args = parser.parse_args()
    wanted = items(ROOT / "tests" / "corpora" / args.corpus)
    for path in sorted(args.saved.glob(f"{args.corpus}.*.md")):
        total, cited, entries, missing = measure(path.read_text(encoding="utf-8"), wanted)
        print(
            f"{path.name}: {total} items, {cited} read and cited, {entries} with an entry; without: {missing}"
        )


if __name__ == "__main__":
    main()
