"""The plan step's coverage record and its alerts: one alert per condition, naming every document.

Each document the coverage check put back ends in exactly one of ``plan.reask_placed`` (the
planner placed it when re-asked), ``plan.placed_by_code`` or ``plan.suspicious_exclusion`` (still
out: no room); the latter also names every other excluded document that names a request term or
is on topic (the planner's exclusion of a weak link stands, but not silently). ``plan.low_coverage`` (error) when the plan keeps less
than half of the documents naming a request term.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from veille.alerts import Alert, grouped_alert
from veille.roles.planner import CatalogueEntry, Exclusion, Plan
from veille.steps.coverage import Vocabulary

__all__ = ["LOW_COVERAGE", "CoverageReport", "coverage_report", "left_out_alert", "outcome_alerts"]

# Below this share of the term-naming documents kept, the plan is an error-level alert.
LOW_COVERAGE = 0.5


class CoverageReport(BaseModel):
    """What the coverage check found and did (PlanOutcome.coverage; benchmarks read it)."""

    term_naming: int = 0  # catalogue documents naming a request term
    term_naming_kept: int = 0  # of those, read by a sub-task of the final plan
    questioned: list[str] = Field(default_factory=list)  # left out although they concern the request
    reasked: bool = False  # the planner was asked once more with the validator's findings
    placed_by_planner: list[str] = Field(default_factory=list)  # questioned, placed on the re-ask
    placed_by_code: list[str] = Field(default_factory=list)
    off_topic_removed: list[str] = Field(default_factory=list)  # read by the plan, text off topic
    injection_excluded: list[str] = Field(default_factory=list)
    flagged_kept: list[str] = Field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        return self.term_naming_kept / self.term_naming if self.term_naming else None


def coverage_report(
    plan: Plan, catalogue: Sequence[CatalogueEntry], vocabulary: Vocabulary, **done: object
) -> CoverageReport:
    """The report for the final ``plan`` (``done``: the other fields, as recorded by make_plan)."""
    used = {i for st in plan.sub_tasks for i in st.doc_ids}
    # A homonym whose text code measured off topic names a term but is no coverage to lose.
    naming = [
        e.id
        for e in catalogue
        if vocabulary.relevance(e).names_term and not vocabulary.relevance(e).off_topic
    ]
    return CoverageReport(
        term_naming=len(naming),
        term_naming_kept=sum(1 for i in naming if i in used),
        **done,  # type: ignore[arg-type]
    )


def _where(plan: Plan) -> dict[str, str]:
    where: dict[str, str] = {}
    for st in plan.sub_tasks:
        for doc_id in st.doc_ids:
            where.setdefault(doc_id, st.id)
    return where


_WHY = {
    "planner_excluded": "écarté par le planificateur",
    "unassigned": "ni placé ni écarté",
    "cap": "aucune sous-tâche n'a de place (plafonds atteints)",
    "off_topic": "texte sans rapport avec la demande",
    "injection": "signalé comme injection",
}


def outcome_alerts(
    plan: Plan, report: CoverageReport, catalogue: Sequence[CatalogueEntry], vocabulary: Vocabulary
) -> list[Alert]:
    """The alerts of the coverage check on the final ``plan`` (empty when nothing was questioned)."""
    by_id = {e.id: e for e in catalogue}
    where = _where(plan)
    reasons: Mapping[str, Exclusion] = {e.id: e for e in plan.exclusions}
    after = " après réinterrogation" if report.reasked else ""
    alerts = []
    if report.placed_by_planner:
        alerts.append(
            grouped_alert(
                "plan.reask_placed",
                stage="plan",
                severity="info",
                head="documents placés par le planificateur quand il a été réinterrogé sur les constats du contrôle",
                subjects=report.placed_by_planner,
                items=[f"{i} → {where.get(i, '?')}" for i in report.placed_by_planner],
            )
        )
    if report.placed_by_code:
        alerts.append(
            grouped_alert(
                "plan.placed_by_code",
                stage="plan",
                head=f"documents qui concernent la demande laissés hors du plan{after}, placés par le code "
                "dans la sous-tâche la plus proche",
                subjects=report.placed_by_code,
                items=[f"{i} → {where.get(i, '?')}" for i in report.placed_by_code],
            )
        )
    if report.off_topic_removed:
        alerts.append(
            grouped_alert(
                "plan.off_topic_removed",
                stage="plan",
                head="documents retenus par le plan mais dont le texte ne concerne pas la demande "
                "(BM25 relatif au corpus), écartés par le code",
                subjects=report.off_topic_removed,
                items=[
                    f"{i} ({vocabulary.relevance(by_id[i]).describe()})" for i in report.off_topic_removed
                ],
            )
        )
    # Every document still out that was put back, names a term or is on topic, but injections and
    # those whose text code measured off topic (their exclusion is code's, said above or silent).
    questioned = set(report.questioned)
    still = [
        e.id
        for e in catalogue
        if e.id in reasons
        and reasons[e.id].reason not in ("injection", "off_topic")
        and not vocabulary.relevance(e).off_topic
        and (e.id in questioned or vocabulary.relevance(e).names_term or vocabulary.relevance(e).on_topic)
    ]
    if still:
        alerts.append(
            grouped_alert(
                "plan.suspicious_exclusion",
                stage="plan",
                head=f"documents écartés{after} alors qu'ils citent un terme de la demande ou en partagent le vocabulaire",
                subjects=still,
                items=[
                    f"{i} ({_WHY.get(reasons[i].reason, reasons[i].reason)} ; "
                    f"{vocabulary.relevance(by_id[i]).describe()})"
                    for i in still
                ],
            )
        )
    alerts += _flag_alerts(report, where)
    alerts += _low_coverage(plan, report, by_id, vocabulary)
    return alerts


def _flag_alerts(report: CoverageReport, where: Mapping[str, str]) -> list[Alert]:
    alerts = []
    if report.injection_excluded:
        alerts.append(
            grouped_alert(
                "plan.injection_excluded",
                stage="plan",
                head="documents signalés comme injection et sans rapport avec la demande, écartés par le code",
                subjects=report.injection_excluded,
            )
        )
    if report.flagged_kept:
        alerts.append(
            grouped_alert(
                "plan.injection_kept",
                stage="plan",
                head="documents signalés comme injection mais pertinents, gardés (signalés à leur analyste "
                "et dans les sources)",
                subjects=report.flagged_kept,
                items=[f"{i} → {where.get(i, '?')}" for i in report.flagged_kept],
            )
        )
    return alerts


def _low_coverage(
    plan: Plan, report: CoverageReport, by_id: Mapping[str, CatalogueEntry], vocabulary: Vocabulary
) -> list[Alert]:
    ratio = report.ratio
    if ratio is None or ratio >= LOW_COVERAGE:
        return []
    lost = [
        i
        for i in plan.excluded
        if i in by_id
        and vocabulary.relevance(by_id[i]).names_term
        and not vocabulary.relevance(by_id[i]).off_topic
    ]
    return [
        grouped_alert(
            "plan.low_coverage",
            stage="plan",
            severity="error",
            head=f"couverture insuffisante : le plan ne garde que {report.term_naming_kept} des "
            f"{report.term_naming} documents qui citent un terme de la demande ({ratio:.0%}) ; "
            "le dossier risque d'ignorer une part du sujet. Écartés",
            subjects=lost,
        )
    ]


def left_out_alert(left_out: Sequence[Exclusion]) -> Alert:
    """One info alert for the documents left out before planning (shortlist, duplicates)."""
    counts: dict[str, int] = {}
    for e in left_out:
        counts[e.reason] = counts.get(e.reason, 0) + 1
    by_reason = ", ".join(f"{reason} {n}" for reason, n in counts.items())
    return grouped_alert(
        "plan.left_out",
        stage="plan",
        severity="info",
        head=f"documents non montrés au planificateur ({by_reason})",
        subjects=[e.id for e in left_out],
    )
