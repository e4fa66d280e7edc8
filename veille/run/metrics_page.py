"""The metrics artifact as a few readable Markdown tables: headline, per step, per role, alerts,
what was reused — instead of one table of packed strings."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veille.plaintext import inline_text
from veille.run.metrics import failed_branches
from veille.run.summary import RoleUsage, role_usage

__all__ = ["STEP_OF_ROLE", "metrics_markdown"]

# The flow step each role's calls belong to (docs/pipeline.md).
STEP_OF_ROLE = {
    "planner": "plan",
    "analyst": "analyse",
    "researcher": "research",
    "writer": "write",
    "critic": "review",
    "reviser": "review",
    "judge": "grade",
}


def _cell(value: Any) -> str:
    """Plain text in a table cell: no pipe, no markup, one line."""
    text = "" if value is None else inline_text(value)
    for raw, safe in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("[", "\\["),
    ):
        text = text.replace(raw, safe)
    return text


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _cost(costs: Sequence[float | None]) -> str:
    return "sans tarif" if any(c is None for c in costs) else f"{sum(c or 0.0 for c in costs):.4f} $"


def _usage_rows(groups: Mapping[str, list[RoleUsage]]) -> list[list[Any]]:
    return [
        [
            name,
            sum(u.calls for u in us),
            sum(u.attempts for u in us),
            sum(u.http_requests for u in us),
            sum(u.cache_hits for u in us),
            sum(u.input_tokens for u in us),
            sum(u.output_tokens for u in us) if not any(u.estimated for u in us) else
            f"{sum(u.output_tokens for u in us)} (estimés)",
            _cost([u.cost_usd for u in us]),
        ]
        for name, us in groups.items()
    ]  # fmt: skip


def metrics_markdown(
    run_dir: Path, headline: Sequence[Mapping[str, str]], cached_task_runs: int | None
) -> str:
    """``headline``: the warehouse's (metric, value) rows (veille.warehouse.summary.metrics_table)."""
    usage = role_usage(Path(run_dir) / "calls.jsonl")
    steps: dict[str, list[RoleUsage]] = {}
    for u in usage:
        steps.setdefault(STEP_OF_ROLE.get(u.role, u.role), []).append(u)
    columns = [
        "appels",
        "tentatives",
        "requêtes HTTP",
        "réponses en cache",
        "tokens entrée",
        "tokens sortie",
        "coût",
    ]
    try:
        alerts = json.loads((Path(run_dir) / "alerts.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        alerts = []
    grouped: dict[tuple[str, str], list[str]] = {}
    counts: dict[tuple[str, str], int] = {}
    for a in alerts if isinstance(alerts, list) else []:
        if isinstance(a, dict):
            subjects = a.get("subjects") or ([a["subject"]] if a.get("subject") else [])
            key = (str(a.get("code", "?")), str(a.get("severity", "")))
            grouped.setdefault(key, []).extend(str(s) for s in subjects)
            counts[key] = counts.get(key, 0) + 1
    alert_rows = [
        [code, sev, len(subjects) or 1, ", ".join(subjects[:8])]
        for (code, sev), subjects in sorted(grouped.items())
    ]
    reused: list[list[Any]] = [
        ["résultats de tâches (Cached)", "inconnu" if cached_task_runs is None else cached_task_runs],
        ["réponses du cache de modèle", sum(u.cache_hits for u in usage)],
        ["branches en échec", ", ".join(failed_branches(Path(run_dir))) or "aucune"],
    ]
    parts = [
        "## Exécution\n\n" + _table(["mesure", "valeur"], [[r["metric"], r["value"]] for r in headline]),
        "## Par étape\n\n" + _table(["étape", *columns], _usage_rows(steps)),
        "## Par rôle\n\n" + _table(["rôle", *columns], _usage_rows({u.role: [u] for u in usage})),
        "## Alertes\n\n"
        + (_table(["code", "gravité", "nombre", "sujets"], alert_rows) if alert_rows else "Aucune alerte."),
        "## Réutilisé et échecs\n\n" + _table(["quoi", "valeur"], reused),
    ]
    return "\n\n".join(parts) + "\n"
