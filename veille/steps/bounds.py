"""Code's bounds on what a model makes us write (issue 23, item 4): whole items dropped, never cut.

"Precision before recall": a cut sentence in the dossier is worse than a missing one, so every bound
here drops whole items, with one alert saying what and how many.

- :func:`bound_findings`: an analyst's answer keeps its first ``max_findings`` findings, without the
  blank ones, the repeats (case and spacing aside) and those over ``max_item_words`` words;
- :func:`bound_report`: the dossier's items hold at most ``report_words_factor`` × the grid's
  ``max_words`` words in all; past it, whole items are dropped from the end, least central first:
  uncertainties, recommendation sentences beyond the first, key points of the axis with the most
  (down to one per axis), synthesis sentences beyond the schema's minimum, ledger entries, then the
  last point of each axis, until the items fit (the per-item bounds and the per-axis cap are
  :func:`veille.steps.write.sanitize_dossier`'s).
"""

from __future__ import annotations

from collections.abc import Sequence

from veille.alerts import Alert, alert
from veille.dossier import SYNTHESIS_MIN, Dossier
from veille.roles.analyst import Finding
from veille.roles.limits import Bounds

__all__ = ["bound_findings", "bound_report", "item_words"]


def bound_findings(
    findings: Sequence[Finding], bounds: Bounds, subtask_id: str
) -> tuple[list[Finding], list[Alert]]:
    """The findings code keeps (order kept) and one alert when any was dropped."""
    kept: list[Finding] = []
    seen: set[str] = set()
    blank = repeated = long = over = 0
    for finding in findings:
        words = finding.statement.split()
        key = " ".join(words).casefold()
        if not any(c.isalnum() for c in key):
            blank += 1
        elif key in seen:
            repeated += 1
        elif len(words) > bounds.max_item_words:
            long += 1
        elif len(kept) >= bounds.max_findings:
            over += 1
        else:
            seen.add(key)
            kept.append(finding)
    if not blank + repeated + long + over:
        return kept, []
    message = (
        f"{subtask_id} : bornes du code, constats retirés entiers : {blank} vide(s), {repeated} doublon(s), "
        f"{long} de plus de {bounds.max_item_words} mots, {over} au-delà de {bounds.max_findings} par branche"
    )
    return kept, [alert("analyse", "analyse.bounded", message, subject=subtask_id)]


def item_words(dossier: Dossier) -> int:
    """Words of every text the dossier's items hold (what the model wrote, as code kept it)."""
    texts = [t.text for t in (*dossier.synthesis, *dossier.uncertainties, *(dossier.recommendation or []))]
    texts += [p.text for s in dossier.sections for p in s.points]
    texts += [f"{e.subject} {e.reason}" for e in dossier.contradictions]
    return sum(len(t.split()) for t in texts)


def _drop_one(dossier: Dossier) -> bool:
    """Drop the least central item left (module docstring's order); False when none may go."""
    for items, keep in ((dossier.uncertainties, 0), (dossier.recommendation or [], 1)):
        if len(items) > keep:
            items.pop()
            return True
    fullest = max(dossier.sections, key=lambda s: len(s.points), default=None)
    if fullest is not None and len(fullest.points) > 1:
        fullest.points.pop()
        return True
    if len(dossier.synthesis) > SYNTHESIS_MIN:
        dossier.synthesis.pop()
        return True
    if dossier.contradictions:
        dossier.contradictions.pop()
        return True
    for section in dossier.sections:  # last: the one point left of an axis
        if section.points:
            section.points.pop()
            return True
    return False


def bound_report(dossier: Dossier, limit: int, stage: str = "report") -> tuple[Dossier, list[Alert]]:
    """``dossier`` with at most ``limit`` words in its items (a copy), and an alert when any was dropped."""
    bounded = dossier.model_copy(deep=True)
    before = words = item_words(bounded)
    dropped = 0
    while words > limit and _drop_one(bounded):
        dropped += 1
        words = item_words(bounded)
    if not dropped:
        return bounded, []
    message = (
        f"rapport borné par le code à {limit} mots : {dropped} élément(s) retiré(s) entiers "
        f"({before} → {words} mots) : incertitudes, recommandations au-delà de la première, puis points des "
        "axes les plus longs d'abord"
    )
    return bounded, [alert(stage, "report.words_bounded", message, severity="warning")]
