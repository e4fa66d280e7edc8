"""Requests per call of a night with a mediocre model (issue 38 item 3): answers kept item by item.

Usage (figures recorded in docs/benchmarks.md, « Answers kept item by item »):

    .venv/bin/python bench/salvage_ratio.py               # mediocre and plain fake Gemini
    .venv/bin/python bench/salvage_ratio.py --modes mediocre

The corpus is bench/analyst_budget.py's, of the 54-real-post class (the bundled corpus's 40
documents and 14 of two test corpora, each padded to ~19 KB with real prose). One full night per
mode through the real SDK against the fake Gemini server, the planner answered with the offline
planner's plan (bench/month.py). ``mediocre`` (testkit/gemini_script.py): every analyst answer
carries a figure past its 200 characters and a contradiction citing a single document, every writer
and reviser answer a key point citing no known source, each written after a sentence in a ```
fence. Counted from calls.jsonl: requests (journal records that sent an HTTP request) per logical
call (call ids with at least one), failed branches, the ``model.items_dropped`` alerts, the cost.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyst_budget import build_corpus
from month import PROJECT_ROOT, _prepare_env, month_responder


@contextmanager
def _fake(mode: str) -> Iterator[Any]:
    import os

    sys.path.insert(0, str(PROJECT_ROOT))  # testkit.* (the fake server is never shipped)
    from testkit.fake_gemini import FakeGemini
    from testkit.gemini_script import mediocre

    with FakeGemini() as fake:
        plain = month_responder()
        fake.responder = mediocre(plain) if mode == "mediocre" else plain
        os.environ.update(
            {
                "GEMINI_API_KEY": "bench-fake-key",
                "VEILLE_GEMINI_BASE_URL": fake.base_url,
                "VEILLE_GEMINI_API_VERSION": "v1beta",
            }
        )
        yield fake


def night(mode: str, corpus: Path, warehouse: Path) -> dict[str, Any]:
    from veille.flows.veille import veille_flow
    from veille.journal import read_journal

    with _fake(mode) as fake:
        state = veille_flow(corpus=str(corpus), backend="gemini", warehouse=str(warehouse), return_state=True)
        server_requests = len(fake.settled())
    run_dir = max((warehouse / "runs").glob("*/"), key=lambda p: p.stat().st_mtime)
    records = [r for r in read_journal(run_dir / "calls.jsonl") if r.backend == "gemini"]
    sent = [r for r in records if r.http_requests]
    calls = {r.call_id for r in sent}
    by_role: Counter[str] = Counter(r.role for r in sent)
    calls_by_role: Counter[str] = Counter(
        {role: len({r.call_id for r in sent if r.role == role}) for role in by_role}
    )
    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    dropped = [a for a in alerts if a["code"] == "model.items_dropped"]
    failed = [a for a in alerts if a["code"] == "analyse.branch_failed"]
    return {
        "mode": mode,
        "status": str(state.type.value).lower(),
        "requests": len(sent),
        "server_requests": server_requests,
        "calls": len(calls),
        "ratio": round(len(sent) / max(1, len(calls)), 3),
        "by_role": {role: f"{by_role[role]}/{calls_by_role[role]}" for role in sorted(by_role)},
        "items_dropped_alerts": len(dropped),
        "failed_branches": len(failed),
        "cost_usd": round(sum(r.cost_usd or 0.0 for r in records), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="mediocre,plain")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="veille-salvage-"))
    _prepare_env(tmp / "prefect-home")
    corpus = tmp / "corpus"
    n = build_corpus(corpus)
    print(f"corpus: {n} documents of ~19 KB", flush=True)
    out = []
    for mode in args.modes.split(","):
        row = night(mode, corpus, tmp / f"wh-{mode}")
        out.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
