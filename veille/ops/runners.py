"""The flow's task runners, chosen from Settings when a run starts.

The optional Dask extra is only imported when the Dask task runner is selected.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Self, cast

from prefect.task_runners import ThreadPoolTaskRunner

from veille.ops.server import LOOPBACK
from veille.settings import Settings

if TYPE_CHECKING:
    from prefect.futures import PrefectFuture
    from prefect.task_runners import TaskRunner

__all__ = ["SettingsTaskRunner", "build_task_runner", "settings_task_runner"]


def build_task_runner(settings: Settings) -> TaskRunner[Any]:
    """The task runner selected by ``settings.task_runner``.

    - ``threads`` (default): ``ThreadPoolTaskRunner(max_workers=settings.max_workers)``.
    - ``dask``: ``DaskTaskRunner`` connected to ``settings.dask_address`` (an existing cluster's
      scheduler, e.g. ``tcp://10.0.0.5:8786``) or, without an address, a temporary local cluster
      bound to 127.0.0.1 with ``min(max_workers, cpu count)`` worker processes and no dashboard.
    """
    if settings.task_runner == "threads":
        return ThreadPoolTaskRunner(max_workers=settings.max_workers)
    if settings.task_runner == "dask":
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:  # optional extra
            raise RuntimeError(
                "task_runner='dask' needs the optional extra: pip install -c constraints.txt '.[dask]'"
            ) from exc
        if settings.dask_address:
            return DaskTaskRunner(address=settings.dask_address)  # type: ignore[no-any-return]
        n_workers = max(1, min(settings.max_workers, os.cpu_count() or 1))
        return DaskTaskRunner(  # type: ignore[no-any-return]
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": n_workers,
                "threads_per_worker": 1,
                "processes": True,
                "host": LOOPBACK,
                "dashboard_address": None,
            },
        )
    raise ValueError(f"settings.task_runner: expected 'threads' or 'dask', got {settings.task_runner!r}")


class SettingsTaskRunner(ThreadPoolTaskRunner):  # type: ignore[type-arg]
    """The veille flow's task runner: the real one is chosen from Settings when a run starts.

    Prefect enters ``flow.task_runner.duplicate()`` at the start of every flow run, so returning
    :func:`build_task_runner` here makes ``settings.task_runner`` (veille.toml or VEILLE_TASK_RUNNER
    in the worker's environment) apply to `veille run`, deployments and `veille serve` alike,
    without building anything at import time.
    """

    def duplicate(self) -> Self:
        return cast(Self, build_task_runner(Settings()))


def settings_task_runner() -> TaskRunner[PrefectFuture[Any]]:
    """A :class:`SettingsTaskRunner`, typed as ``@flow(task_runner=...)`` expects.

    The cast is only for mypy: Prefect 3.9 annotates the parameter as
    ``TaskRunner[PrefectFuture[Any]]``, which even its own ``ThreadPoolTaskRunner()`` does not match.
    """
    return cast("TaskRunner[PrefectFuture[Any]]", SettingsTaskRunner())
