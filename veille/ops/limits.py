"""The model-call slot: one slot of the Prefect global concurrency limit held around each model call.

Nothing runs at import time and no Prefect client is built before a slot is asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from veille.settings import Settings

__all__ = ["MODEL_CALL_LIMIT", "amodel_call_slot", "model_call_slot"]

# Name of the Prefect global concurrency limit shared by every model call of every run.
MODEL_CALL_LIMIT = "veille-model-calls"


# How long a "does the limit exist on this server?" answer is trusted, so a long-lived
# `veille serve` picks up a limit created after it started without one lookup per call.
_LIMIT_LOOKUP_TTL_S = 60.0

_limit_cache: dict[tuple[str, str], tuple[float, bool]] = {}
_limit_cache_lock = threading.Lock()


def _configured_api_url() -> str | None:
    from prefect.settings import get_current_settings

    return get_current_settings().api.url


def _cached_lookup(url: str, name: str) -> bool | None:
    with _limit_cache_lock:
        cached = _limit_cache.get((url, name))
    if cached is not None and time.monotonic() - cached[0] < _LIMIT_LOOKUP_TTL_S:
        return cached[1]
    return None


def _remember(url: str, name: str, exists: bool) -> bool:
    with _limit_cache_lock:
        _limit_cache[(url, name)] = (time.monotonic(), exists)
    return exists


def _limit_exists(url: str, name: str) -> bool:
    cached = _cached_lookup(url, name)
    if cached is not None:
        return cached
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            exists = bool(client.read_global_concurrency_limit_by_name(name).active)
    except Exception:
        # Missing limit (ObjectNotFound) or unreachable API: model calls go on under the local cap.
        exists = False
    return _remember(url, name, exists)


async def _alimit_exists(url: str, name: str) -> bool:
    cached = _cached_lookup(url, name)
    if cached is not None:
        return cached
    from prefect.client.orchestration import get_client

    try:
        async with get_client() as client:
            exists = bool((await client.read_global_concurrency_limit_by_name(name)).active)
    except Exception:
        exists = False
    return _remember(url, name, exists)


@contextmanager
def model_call_slot(settings: Settings, name: str = MODEL_CALL_LIMIT) -> Iterator[None]:
    """Hold one slot of the Prefect global concurrency limit ``name`` around one model call.

    Applies only when a Prefect API is configured (a server, not an ephemeral run) *and* the
    limit exists on it (``make deploy`` creates it). Otherwise it is a no-op and only the model
    layer's local cap (``settings.max_concurrent_calls``) bounds concurrency. The slot is
    leased, so a crashed process frees it when the lease expires. For code running on an
    event loop use :func:`amodel_call_slot`: this one blocks its thread while waiting.
    """
    del settings  # in the signature so a per-settings limit name can be added without API change
    url = _configured_api_url()
    if not url or not _limit_exists(url, name):
        yield
        return
    from prefect.concurrency.sync import concurrency

    with concurrency(name, occupy=1, strict=False):
        yield


@asynccontextmanager
async def amodel_call_slot(settings: Settings, name: str = MODEL_CALL_LIMIT) -> AsyncIterator[None]:
    """:func:`model_call_slot` for coroutines: waits for the slot without blocking the loop."""
    del settings
    url = _configured_api_url()
    if not url or not await _alimit_exists(url, name):
        yield
        return
    from prefect.concurrency.asyncio import concurrency

    async with concurrency(name, occupy=1, strict=False):
        yield
