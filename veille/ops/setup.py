"""Server-side objects veille needs on a Prefect server: the process work pool and the model-call limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from veille.ops.limits import MODEL_CALL_LIMIT

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient

__all__ = ["DEFAULT_POOL", "ensure_model_call_limit", "ensure_work_pool"]

DEFAULT_POOL = "veille-process"


def ensure_work_pool(client: SyncPrefectClient, name: str = DEFAULT_POOL) -> bool:
    """Create the ``process`` work pool ``name`` unless it exists. Returns True if created."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        pool = client.read_work_pool(name)
    except ObjectNotFound:
        client.create_work_pool(
            WorkPoolCreate(
                name=name,
                type="process",
                base_job_template=ProcessWorker.get_default_base_job_template(),
            )
        )
        return True
    if pool.type != "process":
        raise ValueError(f"work pool {name!r} exists with type {pool.type!r}; expected 'process'")
    return False


def ensure_model_call_limit(client: SyncPrefectClient, limit: int, name: str = MODEL_CALL_LIMIT) -> bool:
    """Create (or resize) the global concurrency limit on model calls. Returns True if created."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectNotFound

    if limit < 1:
        raise ValueError(f"model call limit must be >= 1, got {limit}")
    try:
        existing = client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=limit))
        return True
    if existing.limit != limit or not existing.active:
        client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=limit, active=True))
    return False
