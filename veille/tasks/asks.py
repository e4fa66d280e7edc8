"""Model calls of the writer, critic, reviser and judge cached by their inputs, like plan and analyse.

Those roles are asked inside the write, review and grade steps (several times in a review loop), so
the cache sits around each call rather than around the step: :class:`CachedAsker` wraps the run's
client and routes the asks of those roles through the ``ask`` task, whose cache policy (the answer
cache's task layer, tasks/answer_key.py) is the fingerprint of the role, its input (the exact data the prompt is built from) and the role's model key (its settings
and a digest of its code and of the backend's: tasks.clients.model_key). A
call that raises (transient error, schema exhausted, blocked) is a failed task run and is never
cached, so a critic failure does not outlive its run. The result (output, raw text, usage) is
persisted under ``<warehouse>/prefect-results``: an unchanged rerun makes no model call at all, on
every backend (the offline engine and scripted models included, which the response cache skips).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from veille.models.base import ModelResult
from veille.roles.base import Asker, Role
from veille.tasks.answer_key import AnswerKey
from veille.tasks.datatask import task

__all__ = ["ASK_CACHE_POLICY", "CACHED_ROLES", "CachedAsker", "ask"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

CACHED_ROLES: frozenset[str] = frozenset({"writer", "critic", "reviser", "judge"})

# The client is not data; the Role object holds functions (its name is keyed through role_name,
# its code through model_key). The answer cache's one fingerprint (tasks/answer_key.py).
ASK_CACHE_POLICY = AnswerKey(task="ask") - "client" - "role"


@task(name="ask", task_run_name="ask-{role_name}", cache_policy=ASK_CACHE_POLICY, persist_result=True)
def ask(
    client: Asker,
    role: Role[Any, Any],
    data: BaseModel,
    role_name: str,
    model_key: str,
    cache_scope: str = "",
) -> ModelResult[Any]:
    """One logical call of ``role`` (re-asks included) through the run's client."""
    del role_name, model_key, cache_scope  # part of the cache key only
    return client.ask(role, data)


class CachedAsker:
    """An :class:`~veille.roles.base.Asker` whose ``roles`` are asked through the cached ``ask`` task;
    other roles go straight to ``client``. ``model_keys`` maps a role name to its model key."""

    def __init__(
        self,
        client: Asker,
        *,
        storage: Path,
        model_keys: Mapping[str, str],
        cache_scope: str = "",
        roles: Collection[str] = CACHED_ROLES,
    ) -> None:
        self.client = client
        self.storage = storage
        self.model_keys = dict(model_keys)
        self.cache_scope = cache_scope
        self.roles = frozenset(roles)

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        if role.name not in self.roles or subtask_id is not None:
            return self.client.ask(role, data, subtask_id=subtask_id)
        cached = ask.with_options(result_storage=self.storage)
        result: ModelResult[Out] = cached(
            self.client, role, data, role.name, self.model_keys.get(role.name, ""), self.cache_scope
        )
        return result
