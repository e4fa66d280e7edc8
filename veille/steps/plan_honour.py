"""Which of the planner's exclusions the documents' text overrules (issue 37, item 2: « the planner's
proposal is honoured wherever the text supports it », both ways).

A plan reading most of what the text asks for has its exclusions honoured (veille.steps.plan_screen):
the planner may know what the text does not say. Not against the text, though: a document the
planner excluded is read when its text supports reading it — it carries the request's subject
(veille.steps.subject), has a passage relevant to an axis (veille.steps.plan_axes), and names the
compared options, if it names any, in the comparison's sense (veille.steps.option_sense: a homonym's
exclusion stands) — unless the injection screen flagged it (its words are the ones written to be
read). The override is said in plan.json (``reading.overruled``, with its reason), in an alert and in
the run summary. Code's own exclusions (its text measure's ``off_topic``, duplicates, the period)
are not the planner's and are not reopened here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from veille.roles.planner import ExclusionReason
from veille.steps.plan_request import AxisProtocol
from veille.steps.plan_screen import CodeProposal

__all__ = ["overruled_exclusions"]


def overruled_exclusions(
    supported: Collection[str],
    reasons: Mapping[str, ExclusionReason],
    relevant: Mapping[str, Collection[str]],
    axes: Sequence[AxisProtocol],
    screen: CodeProposal | None = None,
) -> dict[str, str]:
    """Document id -> why it is read although the planner excluded it, for the ``supported``
    documents (the text supports reading them) whose exclusion is the planner's own; ``relevant``:
    per axis key, the documents with a passage relevant to it (the reason names the first such axis
    in the request's order)."""
    flagged = screen.flagged if screen is not None else frozenset()
    out: dict[str, str] = {}
    for doc_id in sorted(set(supported) - flagged):
        if reasons.get(doc_id) != "planner_excluded":
            continue
        axis = next((a for a in axes if doc_id in relevant.get(a.key, ())), None)
        where = f" « {axis.title.strip()} »" if axis is not None else ""
        out[doc_id] = (
            "exclu par le planificateur, lu quand même : son texte porte le sujet de la demande et "
            f"un passage pertinent pour l'axe{where}"
        )
    return out
