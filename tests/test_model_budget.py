"""The night's cost budget (veille/models/budget.py), for any spend and any interleaving.

- the spend read from calls.jsonl is the sum of every complete record's cost, whatever chunks the
  writers' lines arrive in (a line half-written by another process is read once complete);
- the admission rule: with at most ``C`` requests in flight, the night's spend stays below
  ``max_cost_usd`` + ``C`` × the dearest request; once one request is refused, every later one is.
The end-to-end case through the real SDK is tests/test_e2e_gemini_budget.py.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.journal import CallJournal, CallRecord
from veille.models.budget import BUDGET_ERROR_CLASS, BudgetExceededError, CostBudget

COSTS = st.one_of(st.none(), st.floats(0.0, 5.0, allow_nan=False))


def _record(cost: float | None, refused: bool = False, role: str = "analyst") -> CallRecord:
    return CallRecord(
        run_id="run",
        call_id="c",
        attempt=1,
        role=role,
        backend="gemini",
        model="m",
        cost_usd=cost,
        status="error" if refused else "ok",
        error_class=BUDGET_ERROR_CLASS if refused else None,
        started_at="2026-12-04T00:00:00+00:00",
    )


@settings(max_examples=200, deadline=None, database=None)
@given(
    rows=st.lists(st.tuples(COSTS, st.booleans()), max_size=30),
    cuts=st.lists(st.integers(0, 4000), max_size=12),
)
def test_spend_is_every_complete_record_whatever_the_chunks(
    rows: list[tuple[float | None, bool]], cuts: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("journal") / "calls.jsonl"
    data = b"".join((_record(c, r).model_dump_json() + "\n").encode() for c, r in rows)
    budget = CostBudget(100.0, path)
    assert budget.spent() == 0.0  # no file yet
    written = 0
    for cut in sorted(min(c, len(data)) for c in cuts):
        with path.open("ab") as handle:
            handle.write(data[written:cut])
        written = max(written, cut)
        complete = data[: data[:written].rfind(b"\n") + 1].count(b"\n")
        assert budget.spent() == pytest.approx(sum(c or 0.0 for c, _ in rows[:complete]))
    with path.open("ab") as handle:
        handle.write(data[written:])
    assert budget.spent() == pytest.approx(sum(c or 0.0 for c, _ in rows))
    assert sum(budget.refused().values()) == sum(r for _, r in rows)


@settings(max_examples=300, deadline=None, database=None)
@given(
    costs=st.lists(st.floats(0.0, 3.0, allow_nan=False), min_size=1, max_size=40),
    limit=st.floats(0.01, 10.0, allow_nan=False),
    concurrency=st.integers(1, 6),
    schedule=st.lists(st.booleans(), max_size=120),
)
def test_spend_stays_below_the_budget_plus_the_requests_in_flight(
    costs: list[float], limit: float, concurrency: int, schedule: list[bool]
) -> None:
    """Requests of the given costs start (True) or the oldest in flight completes (False), at most
    ``concurrency`` in flight, as the client's semaphore allows; then everything in flight ends."""
    journal = CallJournal()
    budget = CostBudget(limit, None, journal)
    pending, in_flight = deque(costs), deque[float]()
    refused_once = False
    for start in [*schedule, *([False] * concurrency)]:
        if start and pending and len(in_flight) < concurrency:
            cost = pending.popleft()
            try:
                budget.admit("analyst")
            except BudgetExceededError:
                refused_once = True
                journal.append(_record(None, refused=True))
                continue
            assert not refused_once  # once refused, never admitted again
            in_flight.append(cost)
        elif in_flight:
            journal.append(_record(in_flight.popleft()))
    spent = sum(r.cost_usd or 0.0 for r in journal.records())
    assert spent < limit + concurrency * max(costs) or spent == pytest.approx(0.0)
    if refused_once:
        assert budget.refused() == {"analyst": sum(1 for r in journal.records() if r.error_class)}
    assert budget.exhausted() == (refused_once or spent >= limit)  # what the plan task asks first


def test_no_budget_never_refuses(tmp_path: Path) -> None:
    journal = CallJournal(tmp_path / "calls.jsonl")
    journal.append(_record(1_000.0))
    budget = CostBudget(None, tmp_path / "calls.jsonl")
    budget.admit("writer")  # no exception: max_cost_usd unset
    assert not budget.exhausted()
    assert budget.refused() == {}


@settings(max_examples=300, deadline=None, database=None)
@given(
    requests=st.lists(
        st.tuples(st.floats(0.0, 3.0, allow_nan=False), st.floats(0.0, 1.0, allow_nan=False)),
        min_size=1,
        max_size=40,
    ),
    limit=st.floats(0.01, 10.0, allow_nan=False),
    concurrency=st.integers(1, 6),
    schedule=st.lists(st.booleans(), max_size=160),
)
def test_with_each_request_priced_at_its_most_the_spend_never_exceeds_the_budget(
    requests: list[tuple[float, float]], limit: float, concurrency: int, schedule: list[bool]
) -> None:
    """Issue 38 item 4: each request is admitted with the most it may cost (its input and its
    max_output_tokens; it costs at most that, a share of it here) and held until its record is
    journaled. Whatever the interleaving and concurrency, the spend stays within max_cost_usd; a
    request that waits for the requests in flight is sent later, not refused."""
    journal = CallJournal()
    budget = CostBudget(limit, None, journal)
    pending = deque((most, most * share) for most, share in requests)
    in_flight: deque[tuple[str, float]] = deque()
    refused = 0
    n = 0
    for start in [*schedule, *([False] * (concurrency + len(requests)))]:
        if start and pending and len(in_flight) < concurrency:
            most, cost = pending[0]
            key = f"c{n}"
            try:
                admitted = budget.admit("analyst", most, f"{key}:1")
            except BudgetExceededError:
                pending.popleft()
                refused += 1
                journal.append(_record(None, refused=True).model_copy(update={"call_id": key}))
                n += 1
                continue
            if admitted:
                pending.popleft()
                in_flight.append((key, cost))
                n += 1
            else:
                assert in_flight  # only the requests in flight may make one wait
        elif in_flight:
            key, cost = in_flight.popleft()
            journal.append(_record(cost).model_copy(update={"call_id": key}))
        spent = sum(r.cost_usd or 0.0 for r in journal.records())
        assert spent <= limit + 1e-9
    if not refused and not pending:
        assert len([r for r in journal.records() if not r.error_class]) == len(requests)
