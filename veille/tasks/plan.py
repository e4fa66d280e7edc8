"""Task: the planner call and plan validation (seed 001)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from prefect import get_run_logger
from prefect.cache_policies import NO_CACHE
from prefect.exceptions import MissingContextError

from veille.alerts import Alert, alert
from veille.roles.base import Asker
from veille.roles.planner import Plan, PlannerInput
from veille.steps.catalogue import LeftOut, PlannerCatalogue
from veille.steps.news import Changes
from veille.steps.plan import PlanOutcome, make_plan
from veille.steps.plan_reading import reading_forecast
from veille.steps.plan_reuse import planner_basis, previous_settled, reusable_plan
from veille.steps.plan_stable import Previous, stable_alerts, stable_plan
from veille.steps.request_read import document_texts
from veille.steps.screen import flagged_documents
from veille.steps.settle_memo import remembered_settle
from veille.steps.text_relevance import TextRelevance
from veille.tasks.answer_key import AnswerKey
from veille.tasks.clients import MODEL_TASK_RETRIES, model_key
from veille.tasks.datatask import task
from veille.tasks.reuse import Reuse

__all__ = ["PLAN_CACHE_POLICY", "plan", "plan_catalogue"]

# Keyed on what determines the plan: the planner input (request, catalogue, limits) and the model
# key, which carries a digest of the planner's code and of the backend's (tasks.clients.model_key):
# a changed prompt, plan validation or engine gives another key, with no version to bump. The
# client is excluded: it is not data (and a live object). The answer cache's one fingerprint
# (tasks/answer_key.py).
PLAN_CACHE_POLICY = AnswerKey(task="plan") - "client"


@task(
    name="plan",
    cache_policy=PLAN_CACHE_POLICY,
    persist_result=True,
    **MODEL_TASK_RETRIES,
)
def plan(
    client: Asker,
    data: PlannerInput,
    model_key: str,
    cache_scope: str = "",
    flagged: dict[str, str] | None = None,
    left_out: list[LeftOut] | None = None,
    previous: Plan | None = None,
    reused_note: str = "",
    token_budget: int | None = None,
    text: TextRelevance | None = None,
) -> PlanOutcome:
    """Planner over the catalogue only, then validation and coverage; raises PlanUnusableError on an
    empty plan. ``flagged``: documents the screen flagged; ``left_out``: left out before planning;
    ``previous``: the previous night's plan to reuse instead of asking (veille.steps.plan_reuse).

    ``cache_scope`` ("" or the flow run's id with ``use_cache=False``) only enters the cache key: a
    retry of the flow run reuses its own plan, other runs do not."""
    del cache_scope  # part of the cache key only
    outcome = make_plan(
        client,
        data,
        flagged=flagged or {},
        left_out=left_out or [],
        previous=previous,
        reused_note=reused_note,
        token_budget=token_budget,
        text=text,
    )
    return outcome.model_copy(update={"basis": planner_basis(data, model_key)})


def _log_reuse(why: str) -> None:
    """Why the previous plan is, or is not, reused: in the flow run's log (the UI's Logs tab)."""
    with suppress(MissingContextError):  # called outside a flow run (tests of the pure pieces)
        get_run_logger().info("plan reuse: %s", why)


def plan_catalogue(
    client: Asker,
    shown: PlannerCatalogue,
    suspected: list[Alert],
    reuse: Reuse,
    changes: Changes | None = None,
    text: TextRelevance | None = None,
) -> PlanOutcome:
    """The ``plan`` task over the catalogue step's output, its result persisted (tasks/reuse.py);
    ``suspected``: the screen's alerts (flagged documents are checked after planning).

    ``changes``: what changed since the previous completed run; with few new documents and the
    same request, that run's plan is reused (no planner call) and code places the new documents.
    Not with ``use_cache=False``: that run plans afresh. ``text``: the documents' text measured
    against the request (veille.steps.text_relevance), the same for every backend."""
    key = model_key(reuse.settings, "planner")
    previous, why = None, "use_cache is off: the planner plans afresh"
    if reuse.settings.use_cache:
        previous, why = reusable_plan(
            changes,
            planner_basis(shown.data, key),
            [e.id for e in shown.data.catalogue],
            max_new=reuse.settings.replan_after_new,
        )
    _log_reuse(why)
    note = ""
    if previous is not None and changes is not None and changes.previous is not None:
        note = (
            f"plan du dossier précédent ({changes.previous.run_id}) repris sans appel au planificateur : "
            f"{len(changes.new)} document(s) nouveau(x) laissé(s) au code (placés ou écartés, avec leur raison)"
        )
    planning = plan.with_options(result_storage=reuse.storage)
    spent = getattr(client, "budget_spent", None)
    if spent is not None and spent():
        # The night's budget is spent (a retried night): the plan code builds is not cached, so a
        # night with budget left asks the planner again (veille/models/budget.py).
        planning = plan.with_options(cache_policy=NO_CACHE, persist_result=False)
    args = (client, shown.data, key)
    common: dict[str, Any] = {
        "cache_scope": reuse.scope,
        "flagged": flagged_documents(suspected),
        "left_out": shown.left_out,
        "token_budget": reuse.settings.planner_token_budget,  # bounds the coverage re-ask too
        "text": text,
    }
    outcome = planning(*args, **common, previous=previous, reused_note=note)
    settled = _settled(outcome, shown, reuse, common)
    last = previous_settled(changes) if previous is not None else None
    if last is None or changes is None:
        return settled
    # A reused plan keeps last night's settled sub-tasks: a new document goes to its axis's
    # sub-task, or to one more when they are full, and moves no other (veille.steps.plan_stable).
    # No re-plan: code already splits an axis whose sub-tasks are full, so asking the planner
    # again would only move every branch (and make a new document cost a full night).
    return _stable(settled, last, changes, shown, reuse)


def _stable(
    settled: PlanOutcome, last: Previous, changes: Changes, shown: PlannerCatalogue, reuse: Reuse
) -> PlanOutcome:
    data = shown.data
    plan, unplaced = stable_plan(
        last,
        settled.plan,
        [e.id for e in data.catalogue],
        changes.touched,
        max_subtasks=data.max_subtasks,
        max_docs=data.max_docs,
    )
    budget = reuse.settings.analyst_token_budget
    if budget is not None and plan.reading:
        bodies = data.texts or document_texts(reuse.settings.database, [e.id for e in data.catalogue])
        plan = plan.model_copy(update={"reading": {**plan.reading, **reading_forecast(plan, bodies, budget)}})
    plan, alerts = stable_alerts(plan, settled.alerts)
    crowded = [i for i in unplaced if i in set(changes.new)]
    if crowded:
        alerts.append(
            alert(
                "plan",
                "plan.new_crowded_out",
                f"{len(crowded)} document(s) nouveau(x) non lu(s) : toutes les sous-tâches du plan repris "
                f"sont pleines ({', '.join(crowded)}) ; relever max_subtasks ou max_docs pour les lire",
                severity="error",
            )
        )
    return settled.model_copy(update={"plan": plan, "alerts": alerts})


def _settled(
    outcome: PlanOutcome, shown: PlannerCatalogue, reuse: Reuse, common: dict[str, Any]
) -> PlanOutcome:
    """The outcome with the request read once (the planner's proposal checked against the request
    and the documents' text, veille.steps.request_read), then what each analyst reads settled by
    the documents' passages per axis of that reading (veille.steps.plan_reading) — the same code
    for every backend. Outside the cached task: pure code, a few seconds at 2,000 documents, and
    the bodies never enter a cache key (their digests key the settling kept for an unchanged
    night, veille.steps.settle_memo)."""
    data = shown.data
    bodies = data.texts or document_texts(reuse.settings.database, [e.id for e in data.catalogue])
    settings = reuse.settings
    return remembered_settle(
        settings.cache_dir if settings.use_cache else None,
        outcome,
        data,
        bodies,
        budget=settings.analyst_token_budget,
        authority_file=settings.authority_file,
        flagged=common["flagged"],
        left_out=common["left_out"],
        text=common["text"],
    )
