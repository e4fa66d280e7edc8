"""The dossier code renders when the writer failed every attempt (issue 23): the analysts'
numbered findings, axis by axis, and their contradiction notes, in the structure the writer would
have filled. Sanitised and reviewed like the writer's, so every guarantee of the rendered report
holds; the alert ``write.rendered_by_code`` heads the summary and run.json names the writer in
``rendered_by_code``."""

from __future__ import annotations

from veille.alerts import Alert, alert
from veille.dossier import SYNTHESIS_MAX, AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry
from veille.models.budget import BudgetExceededError
from veille.roles.writer import WriterInput

__all__ = ["RENDERED_BY_CODE", "code_dossier", "rendered_by_code_alert"]

RENDERED_BY_CODE = "write.rendered_by_code"


def code_dossier(data: WriterInput) -> Dossier:
    """Each finding a key point of its axis, with its sources; the first finding of each axis (at
    most :data:`SYNTHESIS_MAX`) as the synthesis; open questions as uncertainties."""
    sections = [
        AxisSection(
            axis=axis,
            points=[
                KeyPoint(text=f.statement, citations=f.sources) for f in data.findings if f.subtask_id == axis
            ],
        )
        for axis in data.axes
    ]
    synthesis = [
        CitedText(text=s.points[0].text, citations=s.points[0].citations) for s in sections if s.points
    ][:SYNTHESIS_MAX]
    ledger = [
        LedgerEntry(
            subject="Divergence entre sources", retained=c.retained, rejected=c.rejected, reason=c.reason
        )
        for c in data.contradictions
    ]
    uncertain = [CitedText(text=q, citations=[]) for q in data.open_questions]
    advice: list[CitedText] | None = [] if data.kind == "choice" else None  # none when no choice is asked
    return Dossier(
        synthesis=synthesis,
        sections=sections,
        contradictions=ledger,
        uncertainties=uncertain,
        recommendation=advice,
    )


def rendered_by_code_alert(error: BaseException) -> Alert:
    if isinstance(error, BudgetExceededError):
        return alert(
            "report",
            RENDERED_BY_CODE,
            "budget de coût de la nuit atteint (max_cost_usd) : rédacteur non appelé, dossier rendu par "
            "le code à partir des constats validés des analystes et de leurs contradictions",
            severity="error",
        )
    return alert(
        "report",
        RENDERED_BY_CODE,
        f"rédacteur en échec à chaque tentative ({type(error).__name__}) : dossier rendu par le code à "
        "partir des constats validés des analystes et de leurs contradictions, sans rédaction",
        severity="error",
    )
