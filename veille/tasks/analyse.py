"""Task: one analyst per validated sub-task (mapped), reading only its documents.

A sub-task that only gained documents since the previous completed run reads only them, with its
previous findings (veille.steps.analyse_update, issue 13 item 4); one that did not change at all
takes its previous findings without a model call. Both need the previous run's folder
(findings.json); without it, or when anything else changed, the branch reads all its documents.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prefect import get_run_logger, unmapped
from prefect.futures import as_completed
from pydantic import BaseModel, Field

from veille import progress
from veille.alerts import alert
from veille.checkpoints import checkpoint
from veille.models.budget import BudgetExceededError
from veille.roles.analyst import Findings
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.roles.planner import SubTask
from veille.run.inputs import collect_branches
from veille.settings import Settings
from veille.steps.analyse import Analysis, analyse_subtask
from veille.steps.analyse_update import (
    Decision,
    PreviousBranch,
    UpdateJob,
    carried_analysis,
    decide,
    previous_branches,
    update_subtask,
)
from veille.steps.news import Changes
from veille.steps.reading import PartRead, read_note
from veille.store.readers import fetch_documents, section_digests
from veille.tasks.answer_key import AnswerKey
from veille.tasks.clients import MODEL_TASK_RETRIES, model_key, offline_client
from veille.tasks.datatask import task
from veille.tasks.reuse import Reuse

__all__ = [
    "ANALYSE_CACHE_POLICY",
    "AnalystJob",
    "InjectedFaultError",
    "analyse",
    "analyse_sub_tasks",
    "analyst_basis",
    "analyst_jobs",
    "branch_decisions",
    "branch_key",
    "branch_note",
    "edited_by_sections",
    "load_previous_branches",
    "offline_branches",
]


class AnalystJob(BaseModel):
    """Everything one branch's result depends on: the cache key is computed from it."""

    sub_task: SubTask
    doc_hashes: dict[str, str]  # content hash of each document: an edited document invalidates the branch
    model_key: str  # branch_key: both analysts' settings and code digests
    bounds: Bounds = Field(default_factory=Bounds)  # code's bounds on its findings (Settings)
    token_budget: int | None = (
        None  # tokens of document text the analyst reads (Settings.analyst_token_budget)
    )


class InjectedFaultError(RuntimeError):
    """Fault injected by the ``fail_subtasks`` flow parameter (tests, operations drills)."""

    retryable = False  # the same fault would fire again: no task retries
    expected_failure = True  # a drill: one log line, no traceback (veille/ops/logfilter.py)


def analyst_jobs(
    sub_tasks: Sequence[SubTask],
    snapshot: Sequence[tuple[str, str]],
    model_key: str,
    token_budget: int | None = None,
    bounds: Bounds | None = None,
) -> list[AnalystJob]:
    """One job per sub-task, with the content hash of each of its documents (from document_snapshot)
    and the input budget its analyst reads within."""
    hashes = dict(snapshot)
    return [
        AnalystJob(
            sub_task=st,
            doc_hashes={i: hashes.get(i, "") for i in st.doc_ids},
            model_key=model_key,
            token_budget=token_budget,
            bounds=bounds or Bounds(),
        )
        for st in sub_tasks
    ]


def branch_key(settings: Settings) -> str:
    """The model key of a branch (``AnalystJob.model_key``): what determines its result besides its
    documents, for the full and the incremental analyst alike (tasks.clients.model_key: settings,
    code digests; computed, so a changed prompt, step or engine never serves a stale branch)."""
    return f"{model_key(settings, 'analyst')}+{model_key(settings, 'analyst_update')}"


def analyst_basis(settings: Settings) -> str:
    """What a branch's findings were written under (findings.json ``analyst_basis``): a later night
    builds on them only under the same one — same analysts, same code, same input budget (findings
    read within another budget are read again)."""
    budget = settings.analyst_token_budget
    return branch_key(settings) + ("" if budget is None else f"|read-{budget}")


def _update_digest(_ctx: Any, inputs: dict[str, Any]) -> str:
    update = inputs.get("update")
    if not isinstance(update, UpdateJob):
        return "full"  # a full analysis: its job (documents, model key) is the key
    # The incremental branch: the previous findings and which documents are new (their content
    # hashes are in the job) enter the key.
    return "update|" + hashlib.sha256(update.model_dump_json().encode()).hexdigest()[:24]


# The client is not data; the database path and the fault flag do not change a successful result
# (the fault never produces one; ``cache_scope`` is what keeps a drill branch out of shared entries).
# ``update`` enters the key through _update_digest;
# ``carry`` (the previous findings of an unchanged sub-task) and ``carry_read`` (what they were read
# from in part) are the analysis of this very job, and
# ``why`` is a log line.
ANALYSE_CACHE_POLICY = (
    AnswerKey(task="analyse", derived=_update_digest)
    - "client"
    - "db_path"
    - "fault"
    - "update"
    - "carry"
    - "carry_read"
    - "why"
)


@task(
    name="analyse",
    task_run_name="analyse-{subtask_id}",
    cache_policy=ANALYSE_CACHE_POLICY,
    persist_result=True,
    **MODEL_TASK_RETRIES,
)
def analyse(
    job: AnalystJob,
    subtask_id: str,
    client: Asker,
    db_path: Path,
    fault: bool = False,
    cache_scope: str = "",
    update: UpdateJob | None = None,
    carry: Findings | None = None,
    why: str = "",
    carry_read: dict[str, PartRead] | None = None,
) -> Analysis:
    """Fetch the sub-task's documents (own read-only DuckDB connection) and run its analyst: over
    all of them, or (``update``) over the new ones with the previous findings; ``carry``: the
    previous findings of this unchanged sub-task, taken without a model call."""
    del cache_scope  # part of the cache key only (see cache_scopes)
    if fault:
        raise InjectedFaultError(f"{subtask_id}: injected fault (fail_subtasks)")
    documents = fetch_documents(db_path, job.sub_task.doc_ids)
    new = [d for d in documents if update is not None and d.id in set(update.new_ids)]
    if update is not None and new:
        analysis = update_subtask(client, job.sub_task, documents, update, job.token_budget, job.bounds)
        by_sections = (
            f" ({len(update.edited_sections)} edited, by their changed sections)"
            if update.edited_sections
            else ""
        )
        mode = (
            f"incremental ({why}): {len(new)} new document(s) read{by_sections}, "
            f"{len(update.previous.findings)} finding(s) carried over"
            + (" or checked against the unchanged sections" if update.edited_sections else "")
        )
    elif carry is not None:
        analysis = carried_analysis(job.sub_task, carry, carry_read)
        mode = f"unchanged ({why}): 0 document(s) read, {len(carry.findings)} finding(s) carried over"
    else:
        analysis = analyse_subtask(client, job.sub_task, documents, job.token_budget, job.bounds)
        mode = f"{len(documents)} document(s) read" + (f" (full analysis: {why})" if why else "")
    if analysis.read:
        mode += f"; read in part: {read_note(analysis.read)}"
    checkpoint("analyse")  # observers (crash tests): branch computed, result not yet persisted
    get_run_logger().info(branch_note(subtask_id, mode, analysis, client))
    return analysis


def branch_note(subtask_id: str, mode: str | int, analysis: Analysis, client: object) -> str:
    """The branch's own log line (its task run's Logs tab): how it read (``mode``: full with the
    reason, incremental or unchanged; an int: documents read), findings, tokens."""
    journal = getattr(client, "journal", None)  # the run's ModelClient; other Askers have none
    records = [r for r in journal.records() if r.subtask_id == subtask_id] if journal is not None else []
    tokens_in = sum(r.input_tokens for r in records)
    tokens_out = sum(r.output_tokens + r.reasoning_tokens for r in records)
    read = f"{mode} document(s) read" if isinstance(mode, int) else mode
    return (
        f"analyse {subtask_id}: {read}; {len(analysis.findings.findings)} finding(s), "
        f"{len(analysis.findings.contradictions)} contradiction(s); {tokens_in} tokens in, {tokens_out} out "
        f"({len(records)} model attempt(s))"
    )


def load_previous_branches(
    settings: Settings, changes: Changes | None
) -> tuple[dict[str, PreviousBranch], str, str]:
    """(branches of the previous completed run, its run id, why there are none): its findings.json
    in its run folder, joined with its plan and document snapshot (from the warehouse)."""
    previous = changes.previous if changes is not None else None
    if previous is None:
        return {}, "", "no previous completed run"
    path = settings.runs_dir / previous.run_id / "findings.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, previous.run_id, f"findings of {previous.run_id} unreadable ({type(exc).__name__})"
    plan: Mapping[str, Any] | None = previous.plan
    branches = previous_branches(raw, plan, previous.documents)
    return branches, previous.run_id, f"sub-task absent from {previous.run_id}"


def branch_decisions(
    settings: Settings,
    sub_tasks: Sequence[SubTask],
    jobs: Sequence[AnalystJob],
    changes: Changes | None,
) -> list[Decision]:
    """Full, incremental or unchanged, per sub-task (veille.steps.analyse_update.decide). Never
    with ``use_cache=False``: that run analyses everything afresh."""
    if not settings.use_cache:
        return [Decision("full", "use_cache is off") for _ in sub_tasks]
    branches, run_id, why_none = load_previous_branches(settings, changes)
    basis = analyst_basis(settings)
    return [
        decide(st, job.doc_hashes, basis, branches.get(st.id), previous_run=run_id, why_none=why_none)
        for st, job in zip(sub_tasks, jobs, strict=True)
    ]


def analyse_sub_tasks(
    client: Asker,
    sub_tasks: Sequence[SubTask],
    snapshot: Sequence[tuple[str, str]],
    reuse: Reuse,
    changes: Changes | None = None,
) -> list[Analysis]:
    """One mapped ``analyse`` run per sub-task (results persisted, drill faults injected, see
    tasks/reuse.py), collected in plan order; a failed branch is a ``failed`` Analysis, the others
    survive (collect_branches). ``changes``: what changed since the previous completed run, whose
    findings an unchanged or only-extended sub-task builds on (branch_decisions)."""
    ids = [st.id for st in sub_tasks]
    settings = reuse.settings
    jobs = analyst_jobs(
        sub_tasks, snapshot, branch_key(settings), settings.analyst_token_budget, settings.bounds()
    )
    decisions = [
        # A drill branch really runs on its retry, as it ignores what earlier nights cached.
        Decision("full", "drill branch (fail_subtasks)") if st.id in reuse.drill else d
        for st, d in zip(sub_tasks, branch_decisions(reuse.settings, sub_tasks, jobs, changes), strict=True)
    ]
    branches = analyse.with_options(result_storage=reuse.storage).map(
        jobs,
        ids,
        client=unmapped(client),
        db_path=unmapped(reuse.settings.database),
        fault=[sid in reuse.faults for sid in ids],
        cache_scope=reuse.branch_scopes(ids),
        update=edited_by_sections(decisions, reuse.settings.database),
        carry=[d.carry for d in decisions],
        carry_read=[dict(d.previous.read) if d.kind == "carry" and d.previous else None for d in decisions],
        why=[_why(d) for d in decisions],
    )
    progress.report("analyse", 0, len(ids))
    for _ in as_completed(branches):  # whatever each one's state: collect_branches reads them
        progress.advance("analyse")
    return collect_branches(sub_tasks, branches)


def edited_by_sections(decisions: Sequence[Decision], database: Path) -> list[UpdateJob | None]:
    """Each branch's update job; an edited document whose version read by the previous run has its
    section digests in the corpus database (kept at ingest) is read by its changed sections only."""
    versions = [
        (i, d.previous.doc_hashes.get(i, "")) for d in decisions if d.previous is not None for i in d.edited
    ]
    known = section_digests(database, versions) if versions else {}
    jobs: list[UpdateJob | None] = []
    for d in decisions:
        then = d.previous.doc_hashes if d.previous is not None else {}
        found = {i: known[(i, then.get(i, ""))] for i in d.edited if (i, then.get(i, "")) in known}
        jobs.append(d.update_with(found))
    return jobs


def _why(decision: Decision) -> str:
    if decision.kind == "full":
        return decision.reason
    return f"{decision.reason}, since {decision.previous_run}" if decision.previous_run else decision.reason


def offline_branches(
    analyses: Sequence[Analysis], sub_tasks: Sequence[SubTask], settings: Settings, run_id: str, journal: Path
) -> list[Analysis]:
    """The branches the night's cost budget refused to the model, analysed by the offline engine
    instead (code, cost 0, journaled in ``journal``), each with an alert; the others unchanged.
    Run in the flow, not in the cached ``analyse`` task: a later night with budget left asks the
    model again rather than reusing the engine's findings."""
    refused = {
        a.subtask_id
        for a in analyses
        if a.status == "failed" and (a.error or "").startswith(BudgetExceededError.__name__)
    }
    if not refused:
        return list(analyses)
    out = []
    with offline_client(settings, run_id, journal) as engine:
        for analysis, sub_task in zip(analyses, sub_tasks, strict=True):
            if sub_task.id not in refused:
                out.append(analysis)
                continue
            documents = fetch_documents(settings.database, sub_task.doc_ids)
            redone = analyse_subtask(
                engine, sub_task, documents, settings.analyst_token_budget, settings.bounds()
            )
            note = (
                f"{sub_task.id} : budget de coût de la nuit atteint (max_cost_usd), analyste non appelé : "
                "constats du moteur hors ligne (code)"
            )
            redone.alerts.insert(0, alert("analyse", "analyse.offline_budget", note, subject=sub_task.id))
            out.append(redone)
    return out
