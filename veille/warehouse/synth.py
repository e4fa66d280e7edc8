"""Synthetic run folders (the run-folder contract of docs/warehouse.md) for tests, the benchmark and docs.

Deterministic for a given seed. Nothing here calls a model: the figures are plausible, not real,
and every folder says ``backend: "scripted"``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from veille.warehouse.commit import record_run_dir

__all__ = ["ROLES", "demo_warehouse", "make_run_id", "write_synthetic_run"]

ROLES = ("planner", "analyst", "writer", "critic", "reviser", "judge")
_ALERT_CODES = (
    ("plan.truncated_docs", "warning", "plan"),
    ("analyst.foreign_citation", "warning", "analyse"),
    ("report.orphan_citation", "error", "report"),
    ("review.not_validated", "warning", "review"),
)


def make_run_id(started_at: datetime, rng: random.Random) -> str:
    """``YYYYMMDDTHHMMSSZ-xxxxxx`` (UTC start time + 6 hex chars)."""
    return f"{started_at.astimezone(UTC):%Y%m%dT%H%M%SZ}-{rng.randrange(16**6):06x}"


def _write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")


def write_synthetic_run(
    runs_dir: Path,
    started_at: datetime,
    *,
    seed: int = 0,
    calls: int = 60,
    status: str = "completed",
    rounds: int = 2,
    with_grades: bool = True,
    unpriced_model: bool = False,
    run_fields: Mapping[str, Any] | None = None,
    judge_score: float | None = None,
) -> Path:
    """Write one synthetic run folder under ``runs_dir`` and return it.

    ``calls`` journal rows are spread over the roles (one planner call, analysts, then writer,
    critic/reviser per round and the judge); ``unpriced_model`` leaves one call without a cost.
    ``run_fields`` replace run.json fields (``flow_run_id``, ``attempt``, ``corpus_dir``...);
    ``judge_score`` sets the final report's judge score (else drawn from the seed).
    """
    rng = random.Random(seed)
    run_id = make_run_id(started_at, rng)
    run_dir = Path(runs_dir) / run_id
    run_dir.mkdir(parents=True)
    finished_at = started_at + timedelta(seconds=rng.randint(60, 600))
    subtasks = [f"st-{i}" for i in range(1, 5)]
    validated = rounds < 3
    _write_run_json(run_dir, run_id, seed, started_at, finished_at, status, rounds, validated, subtasks)
    if run_fields:
        _write(run_dir / "run.json", {**json.loads((run_dir / "run.json").read_text()), **run_fields})
    _write_plan_and_findings(run_dir, subtasks)
    _write_sources(run_dir)
    _write_review(run_dir, rounds, validated)
    _write_alerts(run_dir, rng)  # the random draws happen in this order: keep it (seeded output)
    _write_journal(
        run_dir,
        run_id,
        started_at,
        rng,
        calls=calls,
        rounds=rounds,
        subtasks=subtasks,
        unpriced_model=unpriced_model,
    )
    _write_report_and_documents(run_dir)
    if with_grades:
        _write_grades(run_dir, rng, rounds, judge_score)
    return run_dir


def _write_run_json(
    run_dir: Path,
    run_id: str,
    seed: int,
    started_at: datetime,
    finished_at: datetime,
    status: str,
    rounds: int,
    validated: bool,
    subtasks: list[str],
) -> None:
    _write(
        run_dir / "run.json",
        {
            "run_id": run_id,
            "flow_run_id": f"00000000-0000-0000-0000-{seed:012d}",
            "deployment": "veille-nightly",
            "started_at": started_at.isoformat(),
            "finished_at": finished_at.isoformat() if status == "completed" else None,
            "status": status,
            "corpus_dir": "corpus",
            "request_title": "Veille : inférence LLM en production",
            "backend": "scripted",
            "models": {role: "gemini-2.5-flash" for role in ROLES},
            "validated": validated,
            "rounds": rounds,
            "subtasks_total": len(subtasks),
            "subtasks_failed": 0,
            "settings": {"max_rounds": 3, "max_subtasks": 6},
        },
    )


def _write_plan_and_findings(run_dir: Path, subtasks: list[str]) -> None:
    _write(
        run_dir / "plan.json",
        {
            "sub_tasks": [
                {
                    "id": st,
                    "question": f"Question {st} ?",
                    "doc_ids": [f"doc-{2 * i + 1:02d}", f"doc-{2 * i + 2:02d}"],
                }
                for i, st in enumerate(subtasks)
            ],
            "excluded": ["doc-15"],
        },
    )
    _write(
        run_dir / "findings.json",
        {
            st: {
                "question": f"Question {st} ?",
                "status": "ok",
                "error": None,
                "findings": [
                    {
                        "statement": "Débit de 1 180 tokens/s.",
                        "doc_ids": ["doc-01"],
                        "figures": ["1 180 tokens/s"],
                    }
                ],
                "contradictions": [],
                "open_questions": [],
            }
            for st in subtasks
        },
    )


def _write_sources(run_dir: Path) -> None:
    _write(
        run_dir / "sources.json",
        [
            {
                "number": n,
                "id": f"doc-{n:02d}",
                "title": f"Document {n}",
                "date": "2025-01-01",
                "date_origin": "front_matter",
                "source_type": "blog",
                "url": None,
            }
            for n in range(1, 4)
        ],
    )


def _write_review(run_dir: Path, rounds: int, validated: bool) -> None:
    drafts = [f"## Synthèse\nBrouillon {r} [1][2].\n" for r in range(1, rounds + 1)]
    _write(
        run_dir / "review.json",
        {
            "validated": validated,
            "rounds": [
                {
                    "round": r,
                    "scores": {"exactitude": 3 + (r > 1), "clarte": 4, "sources": 4 + (r > 1)},
                    "mean": 3.67 + 0.67 * (r > 1),
                    "valid": r == rounds and validated,
                    "instructions": [] if r == rounds else ["Citer une source pour chaque chiffre."],
                    "word_count": 400 + 20 * r,
                    "draft": drafts[r - 1],
                }
                for r in range(1, rounds + 1)
            ],
        },
    )


def _write_alerts(run_dir: Path, rng: random.Random) -> None:
    alerts = [
        {
            "code": code,
            "severity": severity,
            "stage": stage,
            "message": f"synthetic {code}",
            "subject": "st-1",
        }
        for code, severity, stage in rng.sample(_ALERT_CODES, rng.randint(0, 2))
    ]
    _write(run_dir / "alerts.json", alerts)


def _write_journal(
    run_dir: Path,
    run_id: str,
    started_at: datetime,
    rng: random.Random,
    *,
    calls: int,
    rounds: int,
    subtasks: list[str],
    unpriced_model: bool,
) -> None:
    role_plan = ["planner"] + ["analyst"] * max(0, calls - 2 - 3 * rounds) + ["writer"]
    role_plan += ["critic", "reviser", "judge"] * rounds
    with (run_dir / "calls.jsonl").open("w", encoding="utf-8") as journal:
        for index, role in enumerate(role_plan[:calls]):
            input_tokens = rng.randint(800, 6000)
            output_tokens = rng.randint(100, 1500)
            cost = (
                None
                if unpriced_model and index == 0
                else round((input_tokens * 0.3 + output_tokens * 2.5) / 1e6, 8)
            )
            record = {
                "run_id": run_id,
                "call_id": f"c{index:04d}",
                "attempt": 1,
                "flow_run_id": None,
                "task_run_id": None,
                "role": role,
                "subtask_id": subtasks[index % len(subtasks)] if role == "analyst" else None,
                "backend": "scripted",
                "model": "gemini-2.5-pro" if role in ("planner", "judge") else "gemini-2.5-flash",
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "reasoning_tokens": rng.randint(0, 300),
                "cache_read_tokens": 0,
                "estimated": False,
                "cost_usd": cost,
                "latency_s": round(rng.uniform(0.2, 8.0), 3),
                "status": "ok",
                "error_class": None,
                "error_message": None,
                "cache_hit": False,
                "started_at": (started_at + timedelta(seconds=index)).isoformat(),
            }
            journal.write(json.dumps(record) + "\n")


def _write_report_and_documents(run_dir: Path) -> None:
    (run_dir / "report.md").write_text(
        "# Veille : inférence LLM en production\n\n## Synthèse\nDébit de 1 180 tokens/s [1].\n\n"
        "## Points clés\n- Coût en baisse [2].\n\n## Ce qui reste incertain\n- Latence [3].\n\n"
        "## Sources\n1. **doc-01** — Document 1\n",
        encoding="utf-8",
    )
    _write(
        run_dir / "documents.json",
        [{"id": f"doc-{n:02d}", "content_hash": f"{n:064x}"} for n in range(1, 16)],
    )


def _write_grades(run_dir: Path, rng: random.Random, rounds: int, judge_score: float | None) -> None:
    drawn = round(rng.uniform(0.55, 0.95), 3)  # drawn even when given: the later draws stay the same
    judge_final = drawn if judge_score is None else judge_score
    grades = [
        {
            "grader": "rouge_l",
            "version": "1",
            "target": "final",
            "score": round(rng.uniform(0.2, 0.5), 3),
            "model": None,
            "details": {},
        },
        {
            "grader": "numeric",
            "version": "1",
            "target": "final",
            "score": rng.choice([0.5, 0.75, 1.0]),
            "model": None,
            "details": {},
        },
        {
            "grader": "judge",
            "version": "1",
            "target": "final",
            "score": judge_final,
            "model": "gemini-2.5-pro",
            "details": {},
        },
    ]
    grades += [
        {
            "grader": "judge",
            "version": "1",
            "target": f"round-{r}",
            "score": round(judge_final - 0.05 * (rounds - r), 3),
            "model": "gemini-2.5-pro",
            "details": {},
        }
        for r in range(1, rounds + 1)
    ]
    numeric = grades[1]["score"]
    grades.append(
        {
            "grader": "judge+numbers",
            "version": "1",
            "target": "final",
            "score": round(0.5 * judge_final + 0.5 * float(numeric), 3),  # type: ignore[arg-type]
            "model": "gemini-2.5-pro",
            "details": {},
        }
    )
    _write(run_dir / "grades.json", grades)


def demo_warehouse(warehouse_dir: Path, *, nights: int = 7, start: datetime | None = None) -> list[str]:
    """Record ``nights`` synthetic nightly runs (02:00 UTC) in ``warehouse_dir``; returns their run ids.

    For docs and demos (docs/warehouse.md): deterministic, one run per night, seeds 0..nights-1.
    """
    first = start or datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
    runs_dir = Path(warehouse_dir) / "runs"
    parquet_dir = Path(warehouse_dir) / "parquet"
    run_ids = []
    for night in range(nights):
        folder = write_synthetic_run(
            runs_dir, first + timedelta(days=night), seed=night, rounds=1 + night % 3
        )
        run_ids.append(record_run_dir(folder, parquet_dir).run_id)
    return run_ids
