"""Scripted test models (in the spirit of pydantic-ai's TestModel / FunctionModel), for flow tests.

``ScriptedModel(responses={"planner": [plan], "critic": [bad_json, evaluation]})`` answers each role
from its own FIFO queue (key ``"*"`` is a queue shared by every role without one); when a queue is
empty, ``function(request)`` answers, if given. A scripted item is a JSON string, a pydantic object
(dumped to JSON), a :class:`~veille.models.base.RawResponse` (returned as is) or an exception
instance (raised, e.g. ``TransientModelError("…")``). Every request is kept in ``.requests``.

Token counts are estimated from text length (:func:`veille.tokens.estimate_tokens`) and flagged
``estimated``; the scripted backend costs nothing.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from veille.models.base import Model, ModelDefaults, ModelRequest, RawResponse, Usage
from veille.models.grounding import GOOGLE_SEARCH
from veille.providers import Provider, registered
from veille.tokens import estimate_tokens

__all__ = ["ScriptExhaustedError", "ScriptedItem", "ScriptedModel", "as_provider", "night_on"]

ScriptedItem = str | BaseModel | RawResponse | Exception
ScriptFunction = Callable[[ModelRequest], ScriptedItem | Awaitable[ScriptedItem]]


class ScriptExhaustedError(AssertionError):
    """A test asked for more answers than it scripted (an AssertionError: it is a test bug)."""


class ScriptedModel(ModelDefaults):
    """A backend answering from per-role queues, then from a function of the request."""

    name = "scripted"
    free = True  # a test double: costs nothing, never refused by the cost budget
    tools = frozenset({GOOGLE_SEARCH})  # answers grounded requests from its script too

    def __init__(
        self,
        responses: Mapping[str, Sequence[ScriptedItem]] | None = None,
        function: ScriptFunction | None = None,
        *,
        cacheable: bool = False,
    ) -> None:
        self._queues: dict[str, deque[ScriptedItem]] = {
            role: deque(items) for role, items in (responses or {}).items()
        }
        self.function = function
        self.cacheable = cacheable  # True lets a test exercise the response cache without a server
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    def add(self, role: str, *items: ScriptedItem) -> None:
        """Queue more answers for ``role`` (``"*"``: any role)."""
        with self._lock:
            self._queues.setdefault(role, deque()).extend(items)

    def remaining(self, role: str | None = None) -> int:
        with self._lock:
            if role is not None:
                return len(self._queues.get(role, ()))
            return sum(len(q) for q in self._queues.values())

    def requests_for(self, role: str) -> list[ModelRequest]:
        with self._lock:
            return [r for r in self.requests if r.role == role]

    def _next(self, request: ModelRequest) -> ScriptedItem | None:
        with self._lock:
            self.requests.append(request)
            for key in (request.role, "*"):
                queue = self._queues.get(key)
                if queue:
                    return queue.popleft()
        return None

    async def generate(self, request: ModelRequest) -> RawResponse:
        item = self._next(request)
        if item is None:
            if self.function is None:
                raise ScriptExhaustedError(
                    f"ScriptedModel: no scripted answer left for role {request.role!r} and no function"
                )
            produced: Any = self.function(request)
            item = await produced if inspect.isawaitable(produced) else produced
        if isinstance(item, Exception):
            raise item
        if isinstance(item, RawResponse):
            return item
        if isinstance(item, BaseModel):
            text = item.model_dump_json()
        elif isinstance(item, str):
            text = item
        else:
            raise TypeError(
                f"ScriptedModel: unsupported scripted item {type(item).__name__}; "
                "expected str, a pydantic model, RawResponse or an exception"
            )
        usage = Usage(
            input_tokens=estimate_tokens(request.system) + estimate_tokens(request.prompt),
            output_tokens=estimate_tokens(text),
            estimated=True,
        )
        return RawResponse(text=text, usage=usage, model=request.model, finish_reason="STOP")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


@contextmanager
def as_provider(model: Model) -> Iterator[str]:
    """``model`` registered as a provider named after it (``veille.providers.registered``) for the
    block; yields the name, which settings then select (``backend`` or ``roles.<role>.provider``).
    Its factory is the object itself: a run on it cannot be rebuilt in another process."""
    entry = Provider(
        model.name,
        lambda _settings: model,
        f"test double {type(model).__name__}",
        version=lambda _settings: model.version,
        free=model.free,
    )
    with registered(entry) as name:
        yield name


@contextmanager
def night_on(model: Model) -> Iterator[Model]:
    """Flows run in this block have ``model`` as their backend: registered as a provider
    (:func:`as_provider`) and named by ``VEILLE_BACKEND``, as a user names one. Both are undone on
    exit."""
    before = os.environ.get("VEILLE_BACKEND")
    with as_provider(model) as name:
        os.environ["VEILLE_BACKEND"] = name
        try:
            yield model
        finally:
            if before is None:
                os.environ.pop("VEILLE_BACKEND", None)
            else:
                os.environ["VEILLE_BACKEND"] = before
