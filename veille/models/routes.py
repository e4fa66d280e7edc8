"""One backend of a client, as a logical call sees it: the role's provider (per-role choice).

A night may answer its roles with several providers (analysts on a local server, the writer on
Gemini: ``roles.<role>.provider``). The client keeps one :class:`Route` per backend; a call runs on
its role's route, which decides from what the backend *declares* (``Model.free``,
``sends_http``, ``unpriced_is_free``) — never from its name — what the call costs, whether the
night's budget may refuse it and whether it takes the global model-call slot.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol

from veille.models.base import Model, ModelRequest, RawResponse
from veille.models.budget import most_cost
from veille.models.retry import RetryPolicy

if TYPE_CHECKING:
    from veille.models.budget import CostBudget
    from veille.models.pricing import PriceTable

__all__ = ["Route", "RouteOwner"]


BUDGET_POLL_S = 0.05  # a request waiting for the requests in flight to end looks again this often


class RouteOwner(Protocol):
    """What a route needs from its client (shared by every route of the night)."""

    prices: PriceTable

    @property
    def retry_policy(self) -> RetryPolicy: ...
    @property
    def budget(self) -> CostBudget: ...

    def cap(self) -> asyncio.Semaphore: ...
    def slot(self) -> AbstractAsyncContextManager[Any] | None: ...
    def take_grounded_call(self, request: ModelRequest) -> None: ...
    def note_unknown(self, model: str, *, grounding: bool) -> None: ...


class Route:
    """A :class:`veille.models.attempts.CallOwner` for one backend of the client."""

    def __init__(self, owner: RouteOwner, model: Model) -> None:
        self.owner = owner
        self.model = model

    @property
    def retry_policy(self) -> RetryPolicy:
        return self.owner.retry_policy

    def cap(self) -> asyncio.Semaphore:
        return self.owner.cap()  # one concurrency cap for the night, whichever provider answers

    def global_slot(self) -> AbstractAsyncContextManager[Any]:
        """The Prefect global slot for a backend that sends HTTP requests; none for local code."""
        slot = self.owner.slot() if self.model.sends_http else None
        return nullcontext() if slot is None else slot

    async def admit(self, request: ModelRequest, key: str = "") -> None:
        """The night's cost budget as a hard cap: the most ``request`` may cost (its input and its
        maximum output at the model's prices) must fit what is left; a free backend (code's
        answers) is never refused. ``key`` (``"call_id:attempt"``) holds that amount until the
        journal has its record; wait while the requests in flight alone stand in its way."""
        most = 0.0 if self.model.free else most_cost(self.owner.prices, request) or 0.0
        while not self.owner.budget.admit(request.role, most, key):
            await asyncio.sleep(BUDGET_POLL_S)

    def release(self, call_id: str) -> None:
        """End what the requests of ``call_id`` still hold of the budget (the call is over)."""
        self.owner.budget.release(call_id)

    def take_grounded_call(self, request: ModelRequest) -> None:
        self.owner.take_grounded_call(request)

    def cost(self, raw: RawResponse) -> float | None:
        """The call's cost: tokens, plus Google Search grounding for a grounded answer; ``None``
        for a model the table does not price (0 when the backend is a server in the building)."""
        if self.model.free:
            return 0.0
        prices = self.owner.prices
        if raw.model not in prices and self.model.unpriced_is_free:
            return 0.0
        cost = prices.cost(raw.model, raw.usage)
        grounding = self.grounding_cost(raw)
        if cost is not None:
            return None if grounding is None else cost + grounding
        self.owner.note_unknown(raw.model, grounding=False)
        return None

    def grounding_cost(self, raw: RawResponse) -> float | None:
        """What the provider bills for the searches of a grounded answer (0 when it did not
        search); ``None`` when the model has no grounding price (never a silent 0)."""
        if self.model.free or not raw.grounded:
            return 0.0
        prices = self.owner.prices
        if raw.model not in prices:  # already an unknown model (one alert, not two)
            return 0.0 if self.model.unpriced_is_free else None
        cost = prices.grounding_cost(raw.model, raw.search_queries)
        if cost is None:
            self.owner.note_unknown(raw.model, grounding=True)
        return cost
