"""What a run may reuse from earlier runs, and which injected faults fire (docs/operations.md).

Task results persist under ``<warehouse>/prefect-results`` with input-keyed cache policies. The
``cache_scope`` that enters every key is "" (results shared across runs) or the flow run's id
(``use_cache=False``: kept to that flow run's attempts, so a retry still reruns only what failed).
Injected faults (``fail_subtasks``) fire on the flow run's first attempt only, so a retry succeeds.

Why the scope stays beside the code fingerprints (veille/fingerprint.py, issue 28): a fingerprint
says *which code* produced a result, the scope says *which runs* may reuse it. ``--no-cache`` must
not serve another run's result of the same code, yet a retry of that flow run must reuse what its
first attempt finished; a drill branch must fail whatever earlier nights cached. Neither depends on
the code, so no fingerprint can key it. It is a task parameter because Prefect's INPUTS policy keys
on parameters and the value differs between the branches of one mapped call (drills).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from veille.roles.base import Asker
from veille.run.inputs import results_dir
from veille.settings import Settings
from veille.tasks.asks import CachedAsker
from veille.tasks.clients import role_keys

__all__ = ["Reuse", "cache_scopes"]


@dataclass(frozen=True)
class Reuse:
    """The run's result storage, cache scope and drill (faults to inject, on the first attempt)."""

    settings: Settings
    flow_run_id: str
    drill: frozenset[str]
    faults: frozenset[str]

    @classmethod
    def of(
        cls, settings: Settings, flow_run_id: object, run_count: int, fail_subtasks: Sequence[str] | None
    ) -> Reuse:
        drill = frozenset(fail_subtasks or [])
        return cls(settings, str(flow_run_id), drill, drill if run_count <= 1 else frozenset())

    @property
    def storage(self) -> Path:
        return results_dir(self.settings)

    @property
    def scope(self) -> str:
        """The plan's and the cached asks' scope: --no-cache keeps results to this flow run."""
        return "" if self.settings.use_cache else f"flow-run:{self.flow_run_id}"

    def branch_scopes(self, subtask_ids: Sequence[str]) -> list[str]:
        """A drill branch is scoped to its flow run: its fault fires whatever earlier nights cached."""
        return cache_scopes(
            subtask_ids, self.drill, use_cache=self.settings.use_cache, flow_run_id=self.flow_run_id
        )

    def asker(self, client: Asker) -> CachedAsker:
        """Writer, critic, reviser and judge asked through the cached ``ask`` task (tasks/asks.py)."""
        return CachedAsker(
            client, storage=self.storage, model_keys=role_keys(self.settings), cache_scope=self.scope
        )


def cache_scopes(
    subtask_ids: Sequence[str], drill: Collection[str], *, use_cache: bool, flow_run_id: object
) -> list[str]:
    """The ``cache_scope`` of each branch: "" shares results across runs; the flow run's id keeps them
    within one flow run (its attempts).

    A drill branch (``fail_subtasks``) is scoped to its flow run, so on the first attempt its fault
    fires whatever earlier nights cached, and on the retry it really runs again while the other
    branches come from the cache. With ``use_cache=False`` every branch is scoped to the flow run:
    the first attempt computes all of them, a retry reuses what that attempt finished.
    """
    own = f"flow-run:{flow_run_id}"
    return [own if (not use_cache or sid in drill) else "" for sid in subtask_ids]
