"""Task: one analyst per validated sub-task (mapped), reading only its documents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task, unmapped
from prefect.cache_policies import INPUTS, CacheKeyFnPolicy
from pydantic import BaseModel

from tasks.clients import MODEL_TASK_RETRIES, model_key
from tasks.reuse import Reuse
from veille.roles.base import Asker
from veille.roles.planner import SubTask
from veille.run.inputs import collect_branches
from veille.run.killpoints import kill_point
from veille.steps.analyse import Analysis, analyse_subtask
from veille.store.readers import fetch_documents

__all__ = [
    "ANALYSE_CACHE_POLICY",
    "ANALYSE_CACHE_VERSION",
    "AnalystJob",
    "InjectedFaultError",
    "analyse",
    "analyse_sub_tasks",
    "analyst_jobs",
    "branch_note",
]

# Bump when the analyst's prompt or output handling changes. Not TASK_SOURCE: a code edit elsewhere
# in this file must not invalidate every persisted branch (a retry would then rerun them all).
ANALYSE_CACHE_VERSION = "1"


class AnalystJob(BaseModel):
    """Everything one branch's result depends on: the cache key is computed from it."""

    sub_task: SubTask
    doc_hashes: dict[str, str]  # content hash of each document: an edited document invalidates the branch
    model_key: str


class InjectedFaultError(RuntimeError):
    """Fault injected by the ``fail_subtasks`` flow parameter (tests, operations drills)."""

    retryable = False  # the same fault would fire again: no task retries
    expected_failure = True  # a drill: one log line, no traceback (veille/ops/logfilter.py)


def analyst_jobs(
    sub_tasks: Sequence[SubTask], snapshot: Sequence[tuple[str, str]], model_key: str
) -> list[AnalystJob]:
    """One job per sub-task, with the content hash of each of its documents (from document_snapshot)."""
    hashes = dict(snapshot)
    return [
        AnalystJob(sub_task=st, doc_hashes={i: hashes.get(i, "") for i in st.doc_ids}, model_key=model_key)
        for st in sub_tasks
    ]


def _version(_ctx: Any, _inputs: dict[str, Any]) -> str:
    return f"analyse-v{ANALYSE_CACHE_VERSION}"


# The client is not data; the database path and the fault flag do not change a successful result
# (the fault never produces one; ``cache_scope`` is what keeps a drill branch out of shared entries).
ANALYSE_CACHE_POLICY = INPUTS - "client" - "db_path" - "fault" + CacheKeyFnPolicy(cache_key_fn=_version)


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
) -> Analysis:
    """Fetch the sub-task's documents (own read-only DuckDB connection) and run its analyst."""
    del cache_scope  # part of the cache key only (see cache_scopes)
    if fault:
        raise InjectedFaultError(f"{subtask_id}: injected fault (fail_subtasks)")
    documents = fetch_documents(db_path, job.sub_task.doc_ids)
    analysis = analyse_subtask(client, job.sub_task, documents)
    kill_point("analyse")  # crash tests: branch computed, result not yet persisted
    get_run_logger().info(branch_note(subtask_id, len(documents), analysis, client))
    return analysis


def branch_note(subtask_id: str, documents: int, analysis: Analysis, client: object) -> str:
    """The branch's own log line (its task run's Logs tab): documents read, findings, tokens."""
    journal = getattr(client, "journal", None)  # the run's ModelClient; other Askers have none
    records = [r for r in journal.records() if r.subtask_id == subtask_id] if journal is not None else []
    tokens_in = sum(r.input_tokens for r in records)
    tokens_out = sum(r.output_tokens + r.reasoning_tokens for r in records)
    return (
        f"analyse {subtask_id}: {documents} document(s) read, {len(analysis.findings.findings)} finding(s), "
        f"{len(analysis.findings.contradictions)} contradiction(s); {tokens_in} tokens in, {tokens_out} out "
        f"({len(records)} model attempt(s))"
    )


def analyse_sub_tasks(
    client: Asker, sub_tasks: Sequence[SubTask], snapshot: Sequence[tuple[str, str]], reuse: Reuse
) -> list[Analysis]:
    """One mapped ``analyse`` run per sub-task (results persisted, drill faults injected, see
    tasks/reuse.py), collected in plan order; a failed branch is a ``failed`` Analysis, the others
    survive (collect_branches)."""
    ids = [st.id for st in sub_tasks]
    branches = analyse.with_options(result_storage=reuse.storage).map(
        analyst_jobs(sub_tasks, snapshot, model_key(reuse.settings, "analyst")),
        ids,
        client=unmapped(client),
        db_path=unmapped(reuse.settings.database),
        fault=[sid in reuse.faults for sid in ids],
        cache_scope=reuse.branch_scopes(ids),
    )
    return collect_branches(sub_tasks, branches)
