"""Catalogue scale benchmark (issue 11, item 4): the plan step on 200, 2,000 and 20,000 generated documents.

Usage (figures recorded in docs/benchmarks.md, section "Catalogue at scale"):

    .venv/bin/python bench/catalogue_scale.py                      # 200, 2000, 20000 documents
    .venv/bin/python bench/catalogue_scale.py --sizes 2000 --repeat 5
    .venv/bin/python bench/catalogue_scale.py --style sentence --json out.json
    .venv/bin/python bench/catalogue_scale.py --variant distinct   # no two filler lines alike

Each size: ``testkit/corpora/generate.py`` writes a corpus (seed 7 unless ``--seed``), it is ingested
into a temporary DuckDB (not timed), then the *plan step alone* is timed, ``--repeat`` times:

1. catalogue: ``veille.store.readers.read_catalogue`` (titles and summaries from DuckDB);
2. planner input: ``veille.steps.catalogue.planner_catalogue`` (token budget, near-duplicate
   collapsing, BM25 shortlist);
3. offline planner and validation: ``veille.steps.plan.make_plan`` over a ModelClient whose backend is
   the offline engine (journal in memory).

``--variant distinct`` rewrites every filler (neither anchor nor copy) so that no two lines are alike
(title « … (fiche 123) », summary « … Référence 123. »): near-duplicate collapsing then finds only the
generator's copies and its repeated off-topic notices, and the BM25 shortlist has to choose among
thousands of relevant lines.

Reported per size: planner input tokens (estimate, instructions + prompt) against the budget, lines
shown, copies collapsed and lines left out by the shortlist, coverage (share of the generator's
``keep`` ids placed in a sub-task), wall and CPU time of each stage (median of the repeats; the
machine is shared, so CPU time is the steadier figure). Goal: tokens <= budget at every size, plan
step <= 5 s wall at 20,000 documents.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

PROJECT_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT_ROOT))

T = TypeVar("T")


def _timed(fn: Callable[[], T]) -> tuple[T, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _distinct(corpus: Path) -> None:
    """Make every filler line unique (see the module docstring)."""
    import re

    import yaml

    facts = yaml.safe_load((corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    traps = yaml.safe_load((corpus / "traps.yaml").read_text(encoding="utf-8"))
    fixed = set(facts["keep"]) | set(facts["exclude"]) | {i for group in traps["duplicates"] for i in group}
    for path in sorted((corpus / "docs").glob("*.md")):
        if path.stem in fixed:
            continue
        n = int(path.stem.split("-")[1])
        text = path.read_text(encoding="utf-8")
        text = re.sub(r'^(title: ".*)"$', rf'\1 (fiche {n})"', text, count=1, flags=re.M)
        text = re.sub(r'^(summary: ".*)"$', rf'\1 Référence {n}."', text, count=1, flags=re.M)
        path.write_text(text, encoding="utf-8")


def _plan_step(settings: Any, request: Any) -> tuple[Any, Any, dict[str, float]]:
    """One timed plan step: catalogue read, planner input, offline planner + validation."""
    from veille.backends import build_client
    from veille.run.folder import new_run_id
    from veille.steps.catalogue import planner_catalogue
    from veille.steps.plan import make_plan
    from veille.store.readers import read_catalogue

    listing, cat_wall, cat_cpu = _timed(
        partial(read_catalogue, settings.database, with_summaries=settings.planner_sees_summaries)
    )
    shown, in_wall, in_cpu = _timed(partial(planner_catalogue, request, listing.entries, settings))
    with build_client(settings, run_id=new_run_id()) as client:
        outcome, plan_wall, plan_cpu = _timed(partial(make_plan, client, shown.data))
    times = {
        "catalogue_wall": cat_wall,
        "catalogue_cpu": cat_cpu,
        "input_wall": in_wall,
        "input_cpu": in_cpu,
        "plan_wall": plan_wall,
        "plan_cpu": plan_cpu,
        "total_wall": cat_wall + in_wall + plan_wall,
        "total_cpu": cat_cpu + in_cpu + plan_cpu,
    }
    return shown, outcome, times


def _one_size(
    n_docs: int, seed: int, style: str | None, repeat: int, tmp: Path, variant: str
) -> dict[str, Any]:
    import yaml

    from testkit.corpora.generate import generate_corpus
    from veille.corpus.request import load_request
    from veille.settings import Settings
    from veille.store.ingest import ingest_corpus

    corpus = generate_corpus(tmp / f"corpus-{n_docs}", n_docs=n_docs, seed=seed, request_style=style)
    if variant == "distinct":
        _distinct(corpus)
    settings = Settings.from_params(
        corpus=str(corpus), backend="offline", use_cache=False, warehouse=str(tmp / f"wh-{n_docs}")
    )
    ingest_corpus(settings.corpus_dir, settings.database)  # not timed: the plan step alone is
    request = load_request(corpus)
    facts = yaml.safe_load((corpus / "reference" / "facts.yaml").read_text(encoding="utf-8"))
    runs = [_plan_step(settings, request) for _ in range(repeat)]
    shown, outcome, _ = runs[-1]
    placed = {i for st in outcome.plan.sub_tasks for i in st.doc_ids}
    result: dict[str, Any] = {
        "documents": n_docs,
        "variant": variant,
        "request_style": style or "by seed",
        "tokens": shown.tokens,
        "budget": shown.budget,
        "lines": len(shown.data.catalogue),
        "duplicates": sum(1 for o in shown.left_out if o.reason == "duplicate"),
        "shortlist_left_out": sum(1 for o in shown.left_out if o.reason == "shortlist"),
        "sub_tasks": len(outcome.plan.sub_tasks),
        "keep_placed": sum(1 for i in facts["keep"] if i in placed),
        "keep": len(facts["keep"]),
        "excluded_placed": sum(1 for i in facts["exclude"] if i in placed),
    }
    for key in runs[0][2]:
        result[key] = round(statistics.median(times[key] for _, _, times in runs), 3)
    return result


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| documents | planner input tokens (budget) | lines shown | copies collapsed | shortlist left out "
        "| coverage (keep placed) | catalogue wall / CPU | planner input wall / CPU | planner + validation wall / CPU "
        "| plan step wall / CPU |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['documents']:,} | {r['tokens']:,} ({r['budget']:,}) | {r['lines']} | {r['duplicates']:,} "
            f"| {r['shortlist_left_out']:,} | {r['keep_placed']}/{r['keep']} "
            f"| {r['catalogue_wall']:.2f} / {r['catalogue_cpu']:.2f} s | {r['input_wall']:.2f} / {r['input_cpu']:.2f} s "
            f"| {r['plan_wall']:.2f} / {r['plan_cpu']:.2f} s | {r['total_wall']:.2f} / {r['total_cpu']:.2f} s |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 20000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--style", choices=["bullets", "numbered", "sentence", "headings"], default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variant", choices=["generated", "distinct"], default="generated")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="veille-catalogue-scale-") as tmp:
        for n in args.sizes:
            row = _one_size(n, args.seed, args.style, args.repeat, Path(tmp), args.variant)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
