"""The analyst's input budget (issue 27 item 2): cost and what the grades measure, per budget.

Usage (figures recorded in docs/benchmarks.md, « Reading within a budget »):

    .venv/bin/python bench/analyst_budget.py                          # fake Gemini server + offline
    .venv/bin/python bench/analyst_budget.py --budgets 5000,10000 --backends gemini-fake

The corpus is of the 54-real-post class: the bundled corpus's request, reference and its 40
documents plus 14 documents of two test corpora on other subjects, each document padded to ~19 KB
with real prose nobody on the project wrote (the docstrings of the Python standard library, as
bench/ingest_realsize.py does) as its own sections, the original text kept whole as one section at
a seeded place. For each budget (``0``: no budget) a fresh warehouse and one full night: with the
fake Gemini server (real prompts through the real SDK; the planner answered with the offline
planner's plan, other roles as tests/gemini_script.py; input tokens are prompt characters / 4) the
cost per role at the default prices of veille/data/prices.toml; offline, the grades of the run
(grades.json: what the offline grades measure against the bundled reference).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_realsize import _paragraphs
from month import CORPUS, PROJECT_ROOT, _backend, _prepare_env

OTHER = ("streaming-en", "visio-salles")  # test corpora on other subjects (the planner may leave them out)
TARGET_CHARS = 19_000


def build_corpus(root: Path, seed: int = 11) -> int:
    """The bundled corpus with every document padded to ~19 KB, plus 14 padded off-subject ones."""
    rng = random.Random(seed)
    pool = [p for p in _paragraphs() if len(p) > 200]
    shutil.copytree(CORPUS, root, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    extra = [
        f for name in OTHER for f in sorted((PROJECT_ROOT / "tests/corpora" / name / "docs").glob("*.md"))
    ]
    for f in extra[:14]:
        ident = f"x-{f.parent.parent.name}-{f.stem}"
        text = re.sub(r"^id: .*$", f"id: {ident}", f.read_text(encoding="utf-8"), count=1, flags=re.MULTILINE)
        (root / "docs" / f"{ident}.md").write_text(text, encoding="utf-8")
    count = 0
    for path in sorted((root / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        head, body = "", text
        if text.startswith("---\n"):
            end = text.index("\n---\n", 4) + 5
            head, body = text[:end], text[end:]
        sections: list[str] = []
        size = len(body)
        while size < TARGET_CHARS:
            p = rng.choice(pool)
            sections.append(f"## {' '.join(p.split()[:5])}\n\n{p}")
            size += len(sections[-1]) + 2
        at = rng.randint(0, len(sections))
        parts = [*sections[:at], body.strip(), *sections[at:]]
        path.write_text(head + "\n" + "\n\n".join(parts) + "\n", encoding="utf-8")
        count += 1
    return count


def run_one(flow: Any, corpus: Path, warehouse: Path, backend: str, budget: int) -> dict[str, Any]:
    from veille.run.summary import role_usage

    os.environ["VEILLE_ANALYST_TOKEN_BUDGET"] = str(budget or 10**9)
    runs = warehouse / "runs"
    t0, c0 = time.perf_counter(), time.process_time()
    state = flow(corpus=str(corpus), backend=backend, warehouse=str(warehouse), return_state=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    run_dir = max(runs.glob("*/"), key=lambda p: p.stat().st_mtime)
    usage = {u.role: u for u in role_usage(run_dir / "calls.jsonl")}
    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    partial = sum(len(entry.get("read") or {}) for entry in findings.values())
    grades_path = run_dir / "grades.json"
    grades = json.loads(grades_path.read_text(encoding="utf-8")) if grades_path.exists() else []
    return {
        "status": str(state.type.value).lower(),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "input": {r: u.input_tokens for r, u in usage.items()},
        "cost": {r: u.cost_usd for r, u in usage.items()},
        "findings": sum(len(e.get("findings") or []) for e in findings.values()),
        "partial_reads": partial,
        "grades": {g["grader"]: None if g.get("score") is None else round(g["score"], 3) for g in grades}
        if isinstance(grades, list)
        else grades,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="0,5000,10000,20000", help="comma-separated; 0: no budget")
    parser.add_argument("--backends", default="gemini-fake,offline")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="veille-budget-"))
    _prepare_env(tmp / "prefect-home")
    corpus = tmp / "corpus"
    n = build_corpus(corpus)
    print(f"corpus: {n} documents of ~19 KB in {corpus}; load {os.getloadavg()[0]:.2f}", flush=True)
    sys.path.insert(0, str(PROJECT_ROOT))
    out: list[dict[str, Any]] = []
    for backend_name in args.backends.split(","):
        with _backend(backend_name) as (backend, fake):
            from veille.flows.veille import veille_flow

            for budget in budgets:
                if fake is not None:
                    fake.reset()
                row = run_one(veille_flow, corpus, tmp / f"wh-{backend_name}-{budget}", backend, budget)
                row |= {"backend": backend_name, "budget": budget}
                out.append(row)
                costs = [c for c in row["cost"].values() if c is not None]
                print(
                    f"{backend_name:<11} budget {budget or 'none':>6}: {row['status']}, "
                    f"input analyst {row['input'].get('analyst', 0):>7} planner {row['input'].get('planner', 0):>6} "
                    f"all {sum(row['input'].values()):>7}; cost ${sum(costs):.4f}; "
                    f"{row['findings']} findings, {row['partial_reads']} document(s) read in part; "
                    f"grades {row['grades']}; wall {row['wall_s']} s, cpu {row['cpu_s']} s",
                    flush=True,
                )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
