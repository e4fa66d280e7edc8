"""The nightly watch's plan (issue 13): last night's plan, when still valid, instead of a new one.

A planner call re-plans everything, and a new plan moves documents between sub-tasks, which
invalidates every branch's cache (their keys are the sub-task and its documents' content). So when
the request, its limits and the planner's model are those of the previous completed run, and few
documents are new, that run's plan is the proposal: documents gone are dropped, the new ones are
left to code's coverage step (placed where they fit, or excluded with a reason, as for a planner
that forgot them), and the usual validation, flags and alerts apply. A changed document keeps its
place: its branch is invalidated by its content hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from veille.roles.planner import Plan, PlannerInput
from veille.steps.news import Changes
from veille.steps.plan import PlanOutcome
from veille.steps.plan_stable import Previous

__all__ = ["crowded_out", "planner_basis", "previous_settled", "reusable_plan"]


def planner_basis(data: PlannerInput, model_key: str) -> str:
    """What a plan answers besides the catalogue: the request, terms, caps, and the model key (its
    settings and the digest of the code behind it, tasks.clients.model_key)."""
    basis = data.model_dump(exclude={"catalogue", "findings", "texts"}) | {"model": model_key}
    return hashlib.sha256(json.dumps(basis, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _recorded_plan(raw: Mapping[str, Any]) -> Plan | None:
    try:
        return Plan.model_validate({k: raw.get(k) or [] for k in ("sub_tasks", "excluded", "exclusions")})
    except ValidationError:
        return None  # a plan.json of another layout: re-plan


def reusable_plan(
    changes: Changes | None, basis: str, known_ids: Collection[str], *, max_new: int
) -> tuple[Plan | None, str]:
    """(the previous plan as a proposal, why) or (None, why not). The proposal keeps the previous
    sub-tasks over the documents still in the catalogue and excludes only what the planner
    excluded; the new documents are in neither (code places them)."""
    previous = changes.previous if changes is not None else None
    if changes is None or previous is None:
        return None, "no previous completed run"
    if previous.plan is None or previous.plan.get("basis") != basis:
        return None, "the request, its limits or the planner changed since the previous run"
    if max_new <= 0 or len(changes.new) > max_new:
        return None, f"{len(changes.new)} new document(s) (re-plan above {max_new})"
    # The planner's validated plan when the night recorded it (veille.steps.plan_reading), not
    # the plan code settled from it: code settles tonight's again, the new documents included.
    validated = (previous.plan.get("reading") or {}).get("validated")
    plan = _recorded_plan(validated if isinstance(validated, Mapping) else previous.plan)
    if plan is None:
        return None, "the previous plan could not be read"
    known = set(known_ids)
    sub_tasks = [
        st.model_copy(update={"doc_ids": [i for i in st.doc_ids if i in known], "flags": {}})
        for st in plan.sub_tasks
    ]
    sub_tasks = [st for st in sub_tasks if st.doc_ids]
    if not sub_tasks:
        return None, "none of the previous plan's documents is left"
    excluded = [e.id for e in plan.exclusions if e.reason == "planner_excluded" and e.id in known]
    proposal = Plan(sub_tasks=sub_tasks, excluded=excluded)
    return proposal, f"plan of {previous.run_id} reused, {len(changes.new)} new document(s) placed by code"


def crowded_out(outcome: PlanOutcome, changes: Changes | None) -> list[str]:
    """New documents a reused plan left out for lack of room (reason ``cap``): then re-plan."""
    new = set(changes.new) if changes is not None else set()
    return [e.id for e in outcome.plan.exclusions if e.reason == "cap" and e.id in new]


def previous_settled(changes: Changes | None) -> Previous | None:
    """The plan the previous completed run settled and read (its plan.json), which tonight's keeps
    stable (veille.steps.plan_stable); None when it cannot be read."""
    previous = changes.previous if changes is not None else None
    if previous is None or previous.plan is None:
        return None
    raw = previous.plan
    try:
        plan = Plan.model_validate({k: raw.get(k) or [] for k in ("sub_tasks", "excluded", "exclusions")})
    except ValidationError:
        return None
    if not plan.sub_tasks:
        return None
    axes = (raw.get("reading") or {}).get("sub_task_axes") or {}
    clean = {str(k): str(v) for k, v in axes.items()} if isinstance(axes, Mapping) else {}
    return Previous(plan.sub_tasks, clean, plan.exclusions)
