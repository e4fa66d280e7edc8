"""Alerts for people, aggregated by code: one line per code with its count and first subjects, then at
most a few full messages. The printed size stays bounded whatever the corpus size (2,000 invalid files
give one line and a handful of examples, not 2,000 lines); every alert stays in alerts.json / ingest.json.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from veille.plaintext import inline_text

__all__ = ["DETAIL_PER_SEVERITY", "alert_lines", "log_alerts"]

# Full messages shown per code: every error a user must fix is named, up to a bound.
DETAIL_PER_SEVERITY: Mapping[str, int] = {"error": 25, "warning": 3, "info": 2}
_SUBJECTS = 3
_ORDER = {"error": 0, "warning": 1, "info": 2}


def _field(alert: Any, name: str) -> Any:
    """An alert's field as one plain line: a message may quote a model or a document (a question, a
    critic's remark, a validation error), shown as text in the summary and the logs."""
    value = alert.get(name) if isinstance(alert, Mapping) else getattr(alert, name, None)
    return None if value is None else inline_text(value)


def alert_lines(alerts: Iterable[Any], *, indent: str = "  ", max_chars: int = 600) -> list[str]:
    """Lines for ``alerts`` (Alert objects or their dicts), grouped by (severity, code), errors first."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for alert in alerts:
        key = (str(_field(alert, "severity") or "warning"), str(_field(alert, "code")))
        groups.setdefault(key, []).append(alert)
    lines: list[str] = []
    for (severity, code), members in sorted(
        groups.items(), key=lambda kv: (_ORDER.get(kv[0][0], 3), kv[0][1])
    ):
        if len(members) == 1:
            lines.append(
                f"{indent}[{severity}] {code} : {_cut(str(_field(members[0], 'message')), max_chars)}"
            )
            continue
        subjects = [str(_field(a, "subject")) for a in members if _field(a, "subject")][:_SUBJECTS]
        more = f", … (+{len(members) - len(subjects)})" if len(members) > len(subjects) else ""
        lines.append(f"{indent}[{severity}] {code} ×{len(members)} : {', '.join(subjects)}{more}")
        shown = DETAIL_PER_SEVERITY.get(severity, 2)
        for alert in members[:shown]:
            lines.append(f"{indent}    {_cut(str(_field(alert, 'message')), max_chars)}")
        if len(members) > shown:
            lines.append(f"{indent}    … {len(members) - shown} more (alerts.json / veille ingest log)")
    return lines


_LEVELS = {"info": logging.INFO, "warning": logging.WARNING}


def log_alerts(log: logging.Logger | logging.LoggerAdapter[logging.Logger], alerts: Iterable[Any]) -> None:
    """Log ``alerts`` as ``code: message`` lines, at most :data:`DETAIL_PER_SEVERITY` per code, then one
    line per code saying how many more: a task's log is a view too, bounded whatever the corpus size."""
    counts: dict[tuple[str, str], int] = {}
    for alert in alerts:
        key = (str(_field(alert, "severity") or "warning"), str(_field(alert, "code")))
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= DETAIL_PER_SEVERITY.get(key[0], 2):
            log.log(_LEVELS.get(key[0], logging.ERROR), "%s: %s", key[1], _field(alert, "message"))
    for (severity, code), count in counts.items():
        more = count - DETAIL_PER_SEVERITY.get(severity, 2)
        if more > 0:
            log.log(
                _LEVELS.get(severity, logging.ERROR),
                "%s: %d more of this code, %d in all (every one in the run's alerts.json)",
                code,
                more,
                count,
            )


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"
