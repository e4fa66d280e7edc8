"""The night's cost budget (``settings.max_cost_usd``): past it, no model request is sent.

The spend is what the run's journal says: the ``cost_usd`` of every record of calls.jsonl, written
by every process of the run (a Dask worker appends to the same file), read incrementally (only the
bytes added since the last look). A request is admitted only while that spend is below the budget,
checked under the concurrency cap, right before the request is sent; once one is refused, every
later one is (the budget does not come back when a slower process's records arrive late).

The bound this gives, and the one tests check: a request is admitted only while the journaled spend
is below ``max_cost_usd``, and at most ``max_concurrent_calls`` requests of a process are in flight;
so the night's spend is below ``max_cost_usd`` plus the cost of the requests in flight when the
spend reached it: at most ``max_concurrent_calls`` × the dearest single request. A record whose cost
is unknown (a model missing from the price table, already alerted as ``cost.unknown_model``) counts
0: the budget cannot see what the price table does not price.

A refused request is journaled (``status`` error, ``error_class`` :data:`BUDGET_ERROR_CLASS`, no
HTTP request) and raised as :class:`BudgetExceededError`: the steps finish the night by code
(the plan built by code, the offline analyst, the dossier rendered by code).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

from veille.models.base import ModelError

__all__ = ["BUDGET_ERROR_CLASS", "BudgetExceededError", "CostBudget"]

BUDGET_ERROR_CLASS = "BudgetExceeded"


class BudgetExceededError(ModelError):
    """The night's cost budget is spent: this request was not sent (never retried)."""

    error_class = BUDGET_ERROR_CLASS
    expected_failure = True  # one log line, no traceback: the steps finish the night by code

    def __init__(self, role: str, spent: float = 0.0, limit: float = 0.0) -> None:
        super().__init__(
            f"{role}: budget de coût de la nuit atteint ({spent:.4f} $ dépensés, max_cost_usd = {limit:g} $) : "
            "appel non envoyé"
        )
        self.role, self.spent, self.limit = role, spent, limit

    def __reduce__(self) -> tuple[object, ...]:  # picklable across Dask workers
        return (type(self), (self.role, self.spent, self.limit))


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
        self._lock = threading.Lock()

    def admit(self, role: str) -> None:
        """Raise :class:`BudgetExceededError` unless a request of ``role`` may be sent now."""
        if self.limit is None:
            return
        with self._lock:
            spent = self._read()
            if self._closed or self._refused or spent >= self.limit:
                self._closed = True
                raise BudgetExceededError(role, spent, self.limit)

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
