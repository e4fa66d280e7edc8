"""The alert a step raises for an answer kept without some of its items (issue 38 item 3).

The seam keeps an answer whose invalid items it could drop one by one (``veille.models.salvage``,
``ModelResult.dropped``): the rest is used, and the reader is told, in one alert per answer, how
many items went and of which kind, so a model that keeps slipping on the same thing shows.
"""

from __future__ import annotations

from typing import Any

from veille.alerts import Alert, alert
from veille.models.base import ModelResult

__all__ = ["ITEMS_DROPPED", "dropped_items_alerts", "kind_label"]

ITEMS_DROPPED = "model.items_dropped"

# Pydantic's error types (and the seam's own kinds) as the reader is told them.
_LABELS = {
    "too_short": "trop peu d'éléments (une contradiction à un seul document…)",
    "string_too_long": "texte au-delà de sa limite",
    "too_long": "liste au-delà de sa limite",
    "surplus": "au-delà du nombre permis",
    "duplicate": "doublon",
    "literal_error": "valeur hors de la liste permise (identifiant inconnu…)",
    "enum": "valeur hors de la liste permise (identifiant inconnu…)",
    "missing": "champ manquant",
}


def kind_label(kind: str) -> str:
    """``"contradictions:too_short"`` → ``"contradictions : trop peu d'éléments (…)"``."""
    path, _, error = kind.rpartition(":")
    label = _LABELS.get(error, f"invalide ({error})")
    return f"{path} : {label}" if path else label


def dropped_items_alerts(
    stage: str, result: ModelResult[Any], who: str, subject: str | None = None
) -> list[Alert]:
    """One warning when ``result`` was kept without some of its items (none else). ``who``: the
    role as the reader knows it (« rédacteur », « analyste de st-2 »)."""
    dropped = getattr(result, "dropped", ())  # an Asker's stand-in may carry only .output
    if not dropped:
        return []
    total = sum(count for _kind, count in dropped)
    kinds = " ; ".join(f"{kind_label(kind)} ×{count}" for kind, count in dropped)
    return [
        alert(
            stage,
            ITEMS_DROPPED,
            f"réponse du {who} gardée sans ses {total} élément(s) invalide(s), le reste est utilisé : "
            f"{kinds}",
            severity="warning",
            subject=subject,
        )
    ]
