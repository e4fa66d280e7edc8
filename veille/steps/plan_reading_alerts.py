"""The alerts of the plan's reading by code (veille.steps.plan_reading), one per condition."""

from __future__ import annotations

from collections.abc import Sequence

from veille.alerts import Alert, alert

__all__ = ["reading_alerts"]


def reading_alerts(
    added: Sequence[str],
    removed: Sequence[str],
    dated_out: Sequence[str],
    unplaced: Sequence[str],
    groups: Sequence[Sequence[str]],
    apart: Sequence[Sequence[str]] = (),
    overruled: Sequence[str] = (),
) -> list[Alert]:
    out: list[Alert] = []
    if overruled:
        out.append(
            alert(
                "plan",
                "plan.exclusion_overruled",
                "documents exclus par le planificateur mais lus : leur texte porte le sujet de la demande "
                f"et un passage pertinent pour un axe : {', '.join(overruled)}",
                severity="warning",
            )
        )
    if added:
        out.append(
            alert(
                "plan",
                "plan.read_by_text",
                f"documents ajoutés par le code (passage pertinent pour un axe) : {', '.join(added)}",
                severity="info",
            )
        )
    if removed:
        out.append(
            alert(
                "plan",
                "plan.no_relevant_passage",
                f"documents retirés (aucun passage ne concerne un axe de la demande) : {', '.join(removed)}",
                severity="warning",
            )
        )
    if dated_out:
        out.append(
            alert(
                "plan",
                "plan.out_of_period",
                f"documents hors de la période de la demande, non lus : {', '.join(dated_out)}",
                severity="info",
            )
        )
    if unplaced:
        out.append(
            alert(
                "plan",
                "plan.reading_cap",
                "documents pertinents non lus, toutes les sous-tâches sont pleines "
                f"(relever max_subtasks ou max_docs) : {', '.join(unplaced)}",
                severity="error",
            )
        )
    if apart:
        split = " ; ".join(", ".join(g) for g in apart)
        out.append(
            alert(
                "plan",
                "plan.group_apart",
                f"documents sur la même mesure lus par des sous-tâches différentes, faute de place : {split}",
                severity="warning",
            )
        )
    if groups:
        together = " ; ".join(", ".join(g) for g in groups)
        out.append(
            alert(
                "plan",
                "plan.same_subject",
                f"documents lus ensemble (même mesure) : {together}",
                severity="info",
            )
        )
    return out
