"""The per-run summary: totals of the ``runs`` row and its headline metrics for a Prefect artifact.

Trend queries read one ``runs`` row per run (see docs/warehouse.md), so the row carries the run's
totals, computed here from the rows of the other tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["HEADLINE_ALERTS", "alert_counts", "call_totals", "metrics_table", "revision_gain"]

Row = dict[str, Any]


def revision_gain(grades: list[Row]) -> float | None:
    """judge(final) - judge(first judged round), the ``revision_gain`` column; None without both."""
    judged = {g["target"]: g["score"] for g in grades if g["grader"] == "judge" and g["score"] is not None}
    rounds = sorted(
        (int(t.removeprefix("round-")), score)
        for t, score in judged.items()
        if t.startswith("round-") and t.removeprefix("round-").isdigit()
    )
    if "final" not in judged or not rounds:
        return None
    return round(judged["final"] - rounds[0][1], 6)


def call_totals(calls: list[Row]) -> Row:
    """Calls, attempts, tokens and cost of the ``llm_calls`` rows."""
    costs = [c["cost_usd"] for c in calls]
    return {
        "calls": len({c["call_id"] for c in calls}),
        "call_attempts": len(calls),
        "failed_calls": len(
            {c["call_id"] for c in calls} - {c["call_id"] for c in calls if c["status"] == "ok"}
        ),
        "input_tokens": sum(c["input_tokens"] for c in calls),
        "output_tokens": sum(c["output_tokens"] for c in calls),
        "reasoning_tokens": sum(c["reasoning_tokens"] for c in calls),
        "cache_read_tokens": sum(c["cache_read_tokens"] for c in calls),
        "tokens_estimated": any(c["estimated"] for c in calls),
        "cost_usd": float(sum(c for c in costs if c is not None)),
        # A call with an unknown price makes the total a lower bound, never a silent 0.
        "cost_complete": all(c is not None for c in costs),
    }


def alert_counts(alerts: list[Row]) -> Row:
    """Alerts in all and by severity."""
    return {
        "alerts": len(alerts),
        "alerts_error": sum(1 for a in alerts if a["severity"] == "error"),
        "alerts_warning": sum(1 for a in alerts if a["severity"] == "warning"),
    }


# Alert codes whose message the metrics artifact shows in full (the others are counted).
HEADLINE_ALERTS = ("quality.regression",)


def metrics_table(
    summary: Mapping[str, Any], alerts: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, str]]:
    """The run's headline metrics as (metric, value) rows, for a Prefect table artifact.

    ``alerts`` (the run's alerts.json entries): those of :data:`HEADLINE_ALERTS` get a row each.
    """
    scores = dict(summary.get("final_scores") or [])
    cost = summary.get("cost_usd") or 0.0
    rows: list[tuple[str, Any]] = [
        ("run_id", summary["run_id"]),
        ("status", summary["status"]),
        ("backend", summary.get("backend")),
        ("duration_s", None if summary.get("duration_s") is None else round(summary["duration_s"], 1)),
        ("calls", summary["calls"]),
        ("failed_calls", summary["failed_calls"]),
        ("input_tokens", summary["input_tokens"]),
        # The names and meanings of the warehouse columns: output_tokens exclude thinking.
        ("output_tokens", summary["output_tokens"]),
        ("reasoning_tokens", summary["reasoning_tokens"]),
        ("cost_usd", f"{cost:.4f}" + ("" if summary["cost_complete"] else " (lower bound: unpriced model)")),
        ("rounds", summary.get("rounds")),
        ("validated", summary.get("validated")),
        (
            "alerts",
            f"{summary['alerts']} ({summary['alerts_error']} error, {summary['alerts_warning']} warning)",
        ),
        ("report_words", summary.get("report_words")),
    ]
    rows += [(f"score.{name}", f"{value:.3f}") for name, value in sorted(scores.items())]
    if summary.get("revision_gain") is not None:
        rows.append(("revision_gain", f"{summary['revision_gain']:+.3f}"))
    rows += [(str(a["code"]), a.get("message")) for a in alerts if a.get("code") in HEADLINE_ALERTS]
    if summary.get("missing_files"):
        rows.append(("missing_files", ", ".join(summary["missing_files"])))
    return [{"metric": name, "value": "" if value is None else str(value)} for name, value in rows]
