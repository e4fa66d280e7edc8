"""Cost follows the change (issue 13, item 4): a night with 0, 1 or 5 changed documents vs a full run.

Usage (figures recorded in docs/benchmarks.md, section "Cost follows the change"):

    .venv/bin/python bench/nights.py                        # fake Gemini server (the goal's setting)
    .venv/bin/python bench/nights.py --backend offline      # the offline engine
    .venv/bin/python bench/nights.py --only "1 new" --max-docs 4 --max-subtasks 12   # the plan at its caps

For each scenario, a fresh copy of the bundled corpus and a fresh warehouse: night 1 is a full run
(nothing cached), then the scenario edits the corpus and night 2 runs, as the nightly deployment
would. Scenarios: ``0`` (nothing changed), ``1 new`` / ``5 new`` (documents added: generated notes
about the request's subjects), ``1 edited`` / ``5 edited`` (a paragraph appended to existing
documents: their content hash changes). Counted from each run's call journal (one line per model
attempt; model-cache hits are counted apart; task-result cache hits make no call): requests by role
and input tokens, night 2 against night 1. With the fake server (``--backend gemini-fake``, the
default) the flow goes through the real google-genai SDK; the fake answers the planner with the
offline planner's plan over the catalogue it is shown (bench/month.py) and the other roles as
testkit/gemini_script.py does; input tokens are the fake's count (prompt characters / 4).

Goals: 1 changed document => at most 2 analyst requests and input tokens <= 40 % of the full run
(issue 13); 1 new document <= 25 %, 5 edited <= 40 % (issue 27 item 4: the writer, critic and judge on
what changed, veille/steps/sections.py). The fake's writer writes each axis from its own findings
(``--writer findings``, testkit.gemini_script.findings_dossier), a dossier the grid validates.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from month import CORPUS, PROJECT_ROOT, ApiCpu, _backend, _prepare_env

SCENARIOS = ("0", "1 new", "1 edited", "5 new", "5 edited")
SUBJECTS = ("Kestrel", "Tamaris", "Orvet", "Kestrel", "Tamaris")
EDITED = ("doc-01", "doc-02", "doc-05", "doc-06", "doc-09")  # documents of the request's subjects


def _new_document(docs: Path, i: int) -> None:
    engine = SUBJECTS[i]
    (docs / f"doc-9{i}.md").write_text(
        f"""---
id: doc-9{i}
date: "2026-11-2{i}"
source_type: blog-editeur
title: "{engine} 3.{i} : nouvelles mesures de débit et de latence"
summary: "L'éditeur de {engine} publie les mesures de la version 3.{i} sur sa charge de référence."
---

# {engine} 3.{i}

La version 3.{i} de {engine} annonce un débit de {2100 + 37 * i} tokens/s par GPU sur la charge de
référence de l'éditeur, mesuré sur douze GPU avec des requêtes de 2 000 tokens en entrée. La latence
au 99e centile baisse de {8 + i} % selon les notes de version.
""",
        encoding="utf-8",
    )


def _edit(docs: Path, doc_id: str) -> None:
    path = docs / f"{doc_id}.md"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "\n\nMise à jour : l'éditeur confirme ces chiffres sur sa charge de référence de décembre 2026.\n",
        encoding="utf-8",
    )


def _change(corpus: Path, scenario: str) -> None:
    if scenario == "0":
        return
    count, kind = scenario.split()
    for i in range(int(count)):
        if kind == "new":
            _new_document(corpus / "docs", i)
        else:
            _edit(corpus / "docs", EDITED[i])


def _night(flow: Any, corpus: Path, warehouse: Path, backend: str) -> dict[str, Any]:
    from veille.journal import read_journal

    t0, c0 = time.perf_counter(), time.process_time()
    state = flow(corpus=str(corpus), backend=backend, warehouse=str(warehouse), return_state=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    result = state.result(raise_on_failure=False)  # the run folder (a Failed state's data too)
    folder = Path(result) if isinstance(result, str) else None
    requests: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    hits = 0
    if folder is not None and (folder / "calls.jsonl").exists():
        for record in read_journal(folder / "calls.jsonl"):
            if record.cache_hit:
                hits += 1
                continue
            requests[record.role] += 1
            tokens[record.role] += record.input_tokens
    return {
        "status": str(state.type.value).lower(),
        "requests": requests,
        "tokens": tokens,
        "hits": hits,
        "wall": wall,
        "cpu": cpu,
        "folder": folder,
    }


def _differences(night: Path | None, full: Path | None) -> str:
    """Which parts of night 2's report differ from the same night written whole (night 1's warehouse
    without its kept sections and part scores: same plan, same findings; news section apart)."""
    from veille.dossier import without_news
    from veille.graders.parts import cited_as_ids, report_parts

    if night is None or full is None:
        return "no report to compare"
    texts = [without_news((f / "report.md").read_text(encoding="utf-8")) for f in (night, full)]
    sources = [json.loads((f / "sources.json").read_text(encoding="utf-8")) for f in (night, full)]
    parts = [  # citations as document ids: the numbering follows each report's own order
        {k: cited_as_ids(v, s) for k, v in report_parts(t.split("\n## Sources\n")[0]).items()}
        for t, s in zip(texts, sources, strict=True)
    ]
    differ = [k for k in dict.fromkeys([*parts[0], *parts[1]]) if parts[0].get(k) != parts[1].get(k)]
    ids = [sorted(str(s.get("id")) for s in found) for found in sources]
    return (
        f"parts differing: {differ or 'none'} of {len(parts[1])}; "
        f"sources cited {'the same' if ids[0] == ids[1] else 'differ'}"
    )


def _roles(counter: Counter[str]) -> str:
    return " ".join(f"{role}={n}" for role, n in sorted(counter.items())) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["offline", "gemini-fake"], default="gemini-fake")
    parser.add_argument("--only", choices=SCENARIOS, action="append", help="run only these scenarios")
    parser.add_argument(
        "--writer",
        choices=["findings", "spread"],
        default="findings",
        help="fake server's writer: each axis from its own findings (a dossier the grid validates, "
        "default), or every source number spread over the axes (before issue 27 item 4: never validated "
        "on the bundled corpus, 319 words of 350)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also run night 2 on a copy of night 1's warehouse without its kept sections (the writer, "
        "critic and judge on the whole dossier) and say which parts of night 2's report differ from it",
    )
    parser.add_argument(
        "--max-docs",
        type=int,
        default=None,
        help="documents read whole per sub-task (VEILLE_MAX_DOCS); below the bundled plan's 8 the previous "
        "plan is at its caps and a new document goes to one more sub-task of its axis (issue 40 item 2)",
    )
    parser.add_argument(
        "--max-subtasks",
        type=int,
        default=None,
        help="sub-tasks at most (VEILLE_MAX_SUBTASKS): with --max-docs, room for the split sub-task",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(PROJECT_ROOT))
    from testkit.gemini_script import findings_dossier

    writer = findings_dossier if args.writer == "findings" else None
    tmp = Path(tempfile.mkdtemp(prefix="veille-nights-"))
    _prepare_env(tmp / "prefect-home")
    if args.max_docs is not None:  # after _prepare_env, which clears the caller's VEILLE_* settings
        os.environ["VEILLE_MAX_DOCS"] = str(args.max_docs)
    if args.max_subtasks is not None:
        os.environ["VEILLE_MAX_SUBTASKS"] = str(args.max_subtasks)
    try:
        with _backend(args.backend, writer) as (backend, _fake):
            sys.path.insert(0, str(PROJECT_ROOT))
            from veille.flows.veille import veille_flow

            api = ApiCpu()
            startup = (
                "server"
                if os.environ.get("PREFECT_API_URL")
                else f"ephemeral API {api.start_ephemeral():.1f} s"
            )
            print(
                f"nights: backend {args.backend}; {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.2f}; "
                f"Prefect {startup}",
                flush=True,
            )
            failures = 0
            for scenario in args.only or SCENARIOS:
                corpus, warehouse = (
                    tmp / scenario.replace(" ", "-") / "corpus",
                    tmp / scenario.replace(" ", "-") / "wh",
                )
                shutil.copytree(
                    CORPUS, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json")
                )
                full = _night(veille_flow, corpus, warehouse, backend)
                whole = warehouse.with_name("wh-whole")
                if args.compare:  # the same warehouse without the kept sections and part scores
                    shutil.copytree(warehouse, whole)
                    for derived in ("sections.sqlite", "judged.sqlite"):
                        (whole / "cache" / derived).unlink(missing_ok=True)
                _change(corpus, scenario)
                night = _night(veille_flow, corpus, warehouse, backend)
                share = sum(night["tokens"].values()) / max(1, sum(full["tokens"].values()))
                print(
                    f"[{scenario:8s}] full run: {sum(full['requests'].values())} requests ({_roles(full['requests'])}), "
                    f"{sum(full['tokens'].values())} input tokens ({_roles(full['tokens'])}), {full['wall']:.1f} s wall / {full['cpu']:.1f} s CPU\n"
                    f"            night 2: {sum(night['requests'].values())} requests ({_roles(night['requests'])}), "
                    f"{sum(night['tokens'].values())} input tokens ({_roles(night['tokens'])}) = {share:.0%} of the full run, "
                    f"{night['hits']} model-cache hit(s), {night['wall']:.1f} s wall / {night['cpu']:.1f} s CPU "
                    f"[{night['status']}]",
                    flush=True,
                )
                if args.compare:
                    again = _night(veille_flow, corpus, whole, backend)
                    print(
                        f"            compare: night 2 written whole ({sum(again['tokens'].values())} input "
                        f"tokens, {_roles(again['tokens'])}): {_differences(night['folder'], again['folder'])}",
                        flush=True,
                    )
                goal27 = {"1 new": 0.25, "5 edited": 0.40}.get(scenario)  # issue 27 item 4
                if goal27 is not None:
                    print(
                        f"            issue 27 goal (<= {goal27:.0%}):",
                        "met" if share <= goal27 else "MISSED",
                    )
                if scenario.startswith("1 ") and (night["requests"]["analyst"] > 2 or share > 0.40):
                    failures += 1
                    print(
                        f"            GOAL MISSED: {night['requests']['analyst']} analyst request(s), {share:.0%}"
                    )
            if any(s.startswith("1 ") for s in args.only or SCENARIOS):  # the goal is about one change
                verdict = "met" if not failures else "MISSED"
                print("goal (1 changed: <= 2 analyst requests, <= 40 % tokens):", verdict)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
