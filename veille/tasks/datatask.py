"""The ``@task`` of every veille step: Prefect's task, whose arguments are data.

Prefect walks each argument of a task call twice (looking for upstream futures and states to record as
the run's inputs, then to resolve them): every field of every model, item of every list and entry of
every dict, for each of a night's task runs — a Settings (~100 visits), a draft, a plan, the
client. No veille task is given a future or a state inside a value (the flow calls its steps one after
the other; the mapped branches are collected by ``veille.tasks.analyse`` before anything reads them),
so each argument is passed as Prefect's ``opaque``: a future or state given as the argument itself is
still waited for, resolved and recorded as an input, and nothing inside it is visited. The task
receives the same objects as before (the annotation is removed before the call, before its run name,
cache key and retries read them). Measured by bench/flow_night_cpu.py (docs/benchmarks.md).

Only a call is: ``map`` stays Prefect's, since a mapped run may be sent to another task runner's
workers (Dask) whose own walk of the arguments rebuilt the annotation, a tuple, as a plain tuple
(tests/test_ops_dask.py: every branch got ``(('st-1',),)`` for its sub-task id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from prefect import Task
from prefect.utilities.annotations import BaseAnnotation, opaque, quote

__all__ = ["DataTask", "task"]

P = ParamSpec("P")
R = TypeVar("R")
# Keywords of Task.__call__ that are not the task's arguments.
_ENGINE_KEYWORDS = frozenset({"return_state", "wait_for", "deferred"})


def _data(value: Any) -> Any:
    """``value`` as ``opaque``: a quoted value's content (neither walked nor resolved either way: it
    holds no future); another annotation (``allow_failure``, ``opaque``) as it is."""
    if isinstance(value, quote):
        return opaque(value.unquote())
    if isinstance(value, BaseAnnotation):
        return value
    return opaque(value)


def _as_data(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args`` and ``kwargs`` (the task's own, not the engine's keywords) as data (``_data``)."""
    return (
        tuple(_data(a) for a in args),
        {k: v if k in _ENGINE_KEYWORDS else _data(v) for k, v in kwargs.items()},
    )


class DataTask(Task[P, R]):
    """A Prefect task whose arguments are data (module docstring); otherwise Prefect's own."""

    if not TYPE_CHECKING:  # the type checker reads Task's typed overloads

        def __call__(self, *args, **kwargs):
            args, kwargs = _as_data(args, kwargs)
            return super().__call__(*args, **kwargs)

        def with_options(self, **options):
            # Prefect's with_options builds a Task: the copy stays a DataTask.
            copy = super().with_options(**options)
            copy.__class__ = type(self)
            return copy


def task(**options: Any) -> Callable[[Callable[P, R]], Task[P, R]]:
    """``@task(...)``: as Prefect's (same options), giving a :class:`DataTask`."""

    def decorate(fn: Callable[P, R]) -> Task[P, R]:
        return DataTask(fn=fn, **options)

    return decorate
