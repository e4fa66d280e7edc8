"""The night's cost budget (``settings.max_cost_usd``): past it, no model request is sent.

The spend is what the run's journal says: the ``cost_usd`` of every record of calls.jsonl, written
by every process of the run (a Dask worker appends to the same file), read incrementally (only the
bytes added since the last look). A request is admitted only while that spend is below the budget,
checked under the concurrency cap, right before the request is sent; once one is refused, every
later one is (the budget does not come back when a slower process's records arrive late).

A hard cap (issue 38 item 4). Each request is admitted with the most it may cost: its input
(every UTF-8 byte a token, an upper bound for the byte-level tokenizers of the providers) and its
``max_output_tokens`` (veille.models.outcap, sent to the provider), at the model's prices. It
leaves only if the journaled spend + what the requests still in flight may cost + its own most
fits ``max_cost_usd`` — it waits while only the requests in flight stand in its way, and is refused
when the spend alone leaves no room; its reservation ends when its record reaches the journal (keyed
by call id and attempt). So, in one process, the night's spend never exceeds ``max_cost_usd`` as long as the
provider bills no more output than it was allowed. Across processes (Dask workers) a worker sees
the others' spend, not their requests in flight: the bound there is ``max_cost_usd`` plus, per other
process, its ``max_concurrent_calls`` requests' most. A request admitted with no reservation (a
model missing from the price table, already alerted as ``cost.unknown_model``, counts 0: the budget
cannot see what the price table does not price) keeps the older bound: ``max_cost_usd`` plus the
requests in flight when the spend reached it.

A refused request is journaled (``status`` error, ``error_class`` :data:`BUDGET_ERROR_CLASS`, no
HTTP request) and raised as :class:`BudgetExceededError`: the steps finish the night by code
(the plan built by code, the offline analyst, the dossier rendered by code).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

from veille.models.base import ModelError, ModelRequest, Usage
from veille.models.pricing import PriceTable

__all__ = ["BUDGET_ERROR_CLASS", "BudgetExceededError", "CostBudget", "most_cost"]

BUDGET_ERROR_CLASS = "BudgetExceeded"


class BudgetExceededError(ModelError):
    """The night's cost budget is spent: this request was not sent (never retried)."""

    error_class = BUDGET_ERROR_CLASS
    expected_failure = True  # one log line, no traceback: the steps finish the night by code

    def __init__(self, role: str, spent: float = 0.0, limit: float = 0.0, most: float = 0.0) -> None:
        needed = f" + jusqu'à {most:.4f} $ pour cet appel (entrée et sortie maximale)" if most else ""
        super().__init__(
            f"{role}: budget de coût de la nuit atteint ({spent:.4f} $ dépensés ou engagés{needed}, "
            f"max_cost_usd = {limit:g} $) : appel non envoyé"
        )
        self.role, self.spent, self.limit, self.most = role, spent, limit, most

    def __reduce__(self) -> tuple[object, ...]:  # picklable across Dask workers
        return (type(self), (self.role, self.spent, self.limit, self.most))


class CostBudget:
    """The run's spend read from its journal, and the admission rule of the module docstring."""

    def __init__(self, limit: float | None, path: Path | None, in_memory: object = None) -> None:
        self.limit = limit
        self.path = path
        self._records = in_memory  # a CallJournal when the journal has no file (tests)
        self._offset = 0
        self._total = 0.0
        self._refused: Counter[str] = Counter()  # role -> requests refused, from the journal
        self._closed = False  # a refusal was seen: every later request is refused
        self._held: dict[str, float] = {}  # "call_id:attempt" -> the most its request may cost
        self._lock = threading.Lock()

    def admit(self, role: str, most: float = 0.0, key: str = "") -> bool:
        """Whether a request of ``role`` that may cost up to ``most`` may be sent now: True, and
        ``most`` is held until the journal has the record ``key`` (``"call_id:attempt"``); False
        when it fits only once requests in flight have ended (ask again then). Raise
        :class:`BudgetExceededError` when it does not fit what is left."""
        if self.limit is None:
            return True
        with self._lock:
            spent = self._read()
            if self._closed or self._refused or spent >= self.limit or spent + most > self.limit:
                self._closed = True
                raise BudgetExceededError(role, spent + sum(self._held.values()), self.limit, most)
            if spent + sum(self._held.values()) + most > self.limit:
                return False  # the requests in flight may leave room once their costs are known
            if most and key:
                self._held[key] = most
            return True

    def release(self, call_id: str) -> None:
        """Drop what the requests of ``call_id`` still hold (the call is over: its records are in
        the journal, or it failed before one could be)."""
        with self._lock:
            for key in [k for k in self._held if k.startswith(f"{call_id}:")]:
                del self._held[key]

    def exhausted(self) -> bool:
        """Whether a request would be refused now (no budget: never)."""
        if self.limit is None:
            return False
        with self._lock:
            spent = self._read()
            return self._closed or bool(self._refused) or spent >= self.limit

    def spent(self) -> float:
        """USD the run's journal records so far (unknown costs count 0)."""
        with self._lock:
            return self._read()

    def refused(self) -> dict[str, int]:
        """Requests refused by the budget so far, by role (every process of the run)."""
        with self._lock:
            self._read()
            return dict(self._refused)

    def _read(self) -> float:
        if self.path is None:
            records = list(getattr(self._records, "records", list)())
            self._refused = Counter(r.role for r in records if r.error_class == BUDGET_ERROR_CLASS)
            for r in records:
                self._held.pop(f"{r.call_id}:{r.attempt}", None)
            return sum(r.cost_usd or 0.0 for r in records)
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return self._total
        end = data.rfind(b"\n") + 1  # complete lines only: another process may be mid-write
        for line in data[:end].splitlines():
            self._take(line)
        self._offset += end
        return self._total

    def _take(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            return  # not a record: the warehouse reports it when it reads the journal
        if not isinstance(record, dict):
            return
        cost = record.get("cost_usd")
        if isinstance(cost, int | float):
            self._total += float(cost)
        if record.get("error_class") == BUDGET_ERROR_CLASS:
            self._refused[str(record.get("role"))] += 1
        self._held.pop(f"{record.get('call_id')}:{record.get('attempt')}", None)  # its cost is known


def most_cost(prices: PriceTable, request: ModelRequest) -> float | None:
    """The most ``request`` may cost: every UTF-8 byte of what it sends a token, and its
    ``max_output_tokens`` (None: the model is not priced, or the request has no output cap)."""
    if request.max_output_tokens is None:
        return None
    sent = request.system + request.prompt + "".join(a + e for a, e in request.feedback)
    usage = Usage(input_tokens=len(sent.encode("utf-8")), output_tokens=request.max_output_tokens)
    return prices.cost(request.model, usage)
