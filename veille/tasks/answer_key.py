"""The answer cache's task layer: the Prefect cache key of the steps that call the model.

``plan``, ``analyse`` and ``ask`` keep their result under ``<warehouse>/prefect-results``, keyed by
``veille.models.cache.fingerprint`` (the function that keys the response cache) over the task's
name and its parameters, minus those that are not data (the client, a database path, a log line).
The parameters hold the role's input and its model key (``tasks.clients.model_key``: settings and a
digest of the code behind the answer) and the ``cache_scope`` (which runs may reuse the result,
``tasks/reuse.py``), so an edited prompt, schema, step or engine gets another key, with nothing bumped
by hand. A task that raises stores nothing: a retried flow run reruns only its failed branches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from prefect.cache_policies import CachePolicy
from prefect.context import TaskRunContext

from veille.models import cache as answer_cache

__all__ = ["AnswerKey"]

Derived = Callable[[Any, dict[str, Any]], str]


@dataclass(kw_only=True)  # after the base fields (key_storage, …): never positional
class AnswerKey(CachePolicy):
    """A Prefect cache policy: ``fingerprint({"task": task, "inputs": …})``. ``exclude``: parameters
    left out of the key (``AnswerKey(task="plan") - "client"`` adds one, like Prefect's ``INPUTS``);
    ``derived``: a function of the task context and parameters whose value enters the key in place
    of the excluded parameters it summarises."""

    task: str
    exclude: tuple[str, ...] = ()
    derived: Derived | None = field(default=None)

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str:
        kept = {name: value for name, value in inputs.items() if name not in self.exclude}
        material: dict[str, Any] = {"task": self.task, "inputs": kept}
        if self.derived is not None:
            material["derived"] = self.derived(task_ctx, inputs)
        return answer_cache.fingerprint(material)  # looked up here: the one function, spied by tests

    def __sub__(self, other: str) -> AnswerKey:
        if not isinstance(other, str):  # the same contract as Prefect's INPUTS
            raise TypeError("Can only subtract strings from key policies.")
        return replace(self, exclude=(*self.exclude, other))
