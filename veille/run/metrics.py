"""What the Prefect metrics and report artifacts add to the warehouse's headline rows, read from
the run folder: tokens and cost per role, attempts, alert codes, failed branches, what was reused.

"Reused" has two sources that read alike and are not: task results from Prefect's cache (plan,
branches, cached writer/critic/reviser/judge calls: no model call at all) and model responses
from the model layer's response cache (a journalled call answered without a request).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from veille.run.summary import role_usage

__all__ = ["detail_rows", "failed_branches", "report_description"]


def _load(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def failed_branches(run_dir: Path) -> list[str]:
    """Sub-task ids whose branch failed (findings.json), in order."""
    findings = _load(Path(run_dir) / "findings.json", {})
    return [sid for sid, f in findings.items() if isinstance(f, dict) and f.get("status") == "failed"]


def report_description(run_id: str, run_dir: Path) -> str:
    """The report artifact's description: complete or partial (naming its failed branches), the
    run id and, in a flow run, the flow run's id and attempt (each attempt's id stays findable)."""
    from prefect.runtime import flow_run

    where = f" (flow run {flow_run.id}, attempt {flow_run.run_count})" if flow_run.id else ""
    failed = failed_branches(run_dir)
    if failed:
        return f"Partial dossier of run {run_id}{where}: failed branch(es) {', '.join(failed)}"
    return f"Complete dossier of run {run_id}{where}"


def detail_rows(run_dir: Path, cached_task_runs: int | None) -> list[dict[str, str]]:
    """(metric, value) rows: per role, then attempts, alert codes, failed branches and reuse.

    ``cached_task_runs``: task runs of this flow run that ended *Cached* (None when unknown)."""
    run_dir = Path(run_dir)
    usage = role_usage(run_dir / "calls.jsonl")
    rows: list[tuple[str, str]] = []
    for u in usage:
        cost = "unpriced" if u.cost_usd is None else f"{u.cost_usd:.4f} USD"
        estimated = " (estimated)" if u.estimated else ""
        rows.append(
            (
                f"role.{u.role}",
                f"{u.calls} call(s), {u.attempts} attempt(s), {u.input_tokens} in / "
                f"{u.output_tokens} out tokens{estimated}, {cost}",
            )
        )
    rows.append(("attempts", str(sum(u.attempts for u in usage))))
    codes = Counter(a.get("code", "?") for a in _load(run_dir / "alerts.json", []) if isinstance(a, dict))
    rows.append(("alert_codes", ", ".join(f"{c} ×{n}" for c, n in sorted(codes.items())) or "none"))
    rows.append(("failed_branches", ", ".join(failed_branches(run_dir)) or "none"))
    rows.append(
        (
            "reused.task_results",
            "unknown" if cached_task_runs is None else f"{cached_task_runs} task run(s) Cached",
        )
    )
    hits = sum(u.cache_hits for u in usage)
    rows.append(("reused.model_responses", f"{hits} response(s) from the response cache"))
    return [{"metric": name, "value": value} for name, value in rows]
