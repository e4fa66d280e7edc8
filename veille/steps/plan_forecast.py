"""What each branch's analyst will not read whole within its token budget, forecast at plan time
(issue 37: the reading budget and what was not read are in plan.json and the summary)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from veille.corpus.sections import read_within_budget
from veille.roles.planner import Plan
from veille.steps.reading import reading_query

__all__ = ["reading_forecast"]


def reading_forecast(plan: Plan, bodies: Mapping[str, str], budget: int) -> dict[str, Any]:
    """What each branch's analyst will not read whole within ``budget`` tokens (the same function
    the analyst uses, veille.steps.reading): ``{"budget": N, "not_read": {st: {doc: {...}}}}``."""
    not_read: dict[str, dict[str, dict[str, int]]] = {}
    for st in plan.sub_tasks:
        readings = read_within_budget({i: bodies.get(i, "") for i in st.doc_ids}, reading_query(st), budget)
        parts = {
            i: {"tokens_read": r.tokens_read, "tokens_total": r.tokens_total}
            for i, r in sorted(readings.items())
            if not r.whole
        }
        if parts:
            not_read[st.id] = parts
    return {"budget": budget, "not_read": not_read}
