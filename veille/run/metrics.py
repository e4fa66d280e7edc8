"""What the Prefect report artifact says of a run, read from the run folder (its failed branches);
the metrics artifact's tables are veille.run.metrics_page.

"Reused" has two sources that read alike and are not: task results from Prefect's cache (plan,
branches, cached writer/critic/reviser/judge calls: no model call at all) and model responses
from the model layer's response cache (a journalled call answered without a request).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["failed_branches", "report_description"]


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
