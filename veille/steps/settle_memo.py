"""The plan's settling kept for the same inputs (issue 40 item 4).

:func:`veille.steps.plan_settle.settle_plan` reads the request against every document's text and
places every document by its passages per axis: at 2,000 real-size documents most of an unchanged
night's CPU (docs/benchmarks.md). It is a pure function of its arguments, the code behind it and
the data files it reads (the bundled ``veille/data/`` and the authority file), so a night whose
inputs are all unchanged gets last night's result back (:func:`veille.steps.unchanged.remembered`,
one slot in ``<warehouse>/cache/settled.json``). The key holds every argument it reads: the
planner's plan and proposal, the planner input (catalogue, request, limits, findings), a digest of
each document's text (the texts never enter the file), the reading budget, the flagged and left-out
documents, the text relevance and the code and data digests; any difference settles again.

The outcome's alerts, coverage and basis are not read, only carried: settling returns the outcome
with its plan and reading replaced and its alerts followed by the settling's own. Those carried
fields name the night (a reused plan's alert names the previous run), so they stay out of the key:
what is kept is the settled plan, the reading and the added alerts, put back on tonight's outcome.
Kept only when the computed result is exactly that recomposition (checked each time it is computed):
a settling that read or changed a carried field would be recomputed every night, never served wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from veille.fingerprint import code_digest, text_digest
from veille.resources import data_dir
from veille.roles.planner import PlannerInput
from veille.steps.plan import LeftOutLike, PlanOutcome
from veille.steps.plan_settle import settle_plan
from veille.steps.text_relevance import TextRelevance
from veille.steps.unchanged import remembered

__all__ = ["remembered_settle", "settle_key"]


def _texts_digest(texts: Mapping[str, str]) -> str:
    """One digest of id -> text, independent of the mapping's order."""
    return text_digest(*(f"{doc_id}\x00{text_digest(texts[doc_id])}" for doc_id in sorted(texts)))


def _code(authority_file: Path | None) -> str:
    """The code and bundled data behind the settling (cached per process, as the installed tree
    does not change under a night), and the authority file's bytes (a user's file, read each time)."""
    bundled = tuple(sorted(p for p in data_dir().rglob("*") if p.is_file()))
    try:
        authority = authority_file.read_bytes().hex() if authority_file is not None else "-"
    except OSError:
        authority = "absent"
    return text_digest(code_digest(("veille.steps.plan_settle", __name__), bundled), authority)


def settle_key(
    outcome: PlanOutcome,
    data: PlannerInput,
    bodies: Mapping[str, str],
    budget: int | None,
    authority_file: Path | None,
    flagged: Mapping[str, str] | None,
    left_out: Sequence[LeftOutLike],
    text: TextRelevance | None,
) -> str:
    """The digest of everything :func:`settle_plan` reads: equal keys, equal results."""
    listed = {
        "outcome": outcome.model_dump(mode="json", include={"plan", "proposed", "reading"}),
        "data": data.model_dump(mode="json", exclude={"texts"}),
        "budget": budget,
        "authority_file": str(authority_file) if authority_file is not None else None,
        "flagged": dict(sorted((flagged or {}).items())),
        "left_out": [[e.id, e.reason, e.detail] for e in left_out],
        "text": text.model_dump(mode="json") if text is not None else None,
    }
    return text_digest(
        _code(authority_file),
        json.dumps(listed, ensure_ascii=False, sort_keys=True),
        _texts_digest(data.texts),
        _texts_digest(bodies),
    )


def remembered_settle(
    folder: Path | None,
    outcome: PlanOutcome,
    data: PlannerInput,
    bodies: Mapping[str, str],
    budget: int | None = None,
    authority_file: Path | None = None,
    *,
    flagged: Mapping[str, str] | None = None,
    left_out: Sequence[LeftOutLike] = (),
    text: TextRelevance | None = None,
) -> PlanOutcome:
    """:func:`settle_plan`'s result, kept in ``folder`` (None: computed, nothing kept) for the
    same arguments, code and data files."""

    def compute() -> PlanOutcome:
        return settle_plan(
            outcome, data, bodies, budget, authority_file, flagged=flagged, left_out=left_out, text=text
        )

    if folder is None:
        return compute()
    key = settle_key(outcome, data, bodies, budget, authority_file, flagged, left_out, text)
    return remembered(
        folder, "settled", key, compute, lambda s: _dump(outcome, s), lambda v: _load(outcome, v, compute)
    )


def _recomposed(outcome: PlanOutcome, kept: PlanOutcome, added: list[Any]) -> PlanOutcome:
    """Tonight's ``outcome`` with the kept plan and reading and its alerts followed by ``added``."""
    return outcome.model_copy(
        update={"plan": kept.plan, "reading": kept.reading, "alerts": [*outcome.alerts, *added]}
    )


def _dump(outcome: PlanOutcome, settled: PlanOutcome) -> Any:
    added = settled.alerts[len(outcome.alerts) :]
    if _recomposed(outcome, settled, added) != settled:
        return None  # not settling's shape (a carried field changed): computed every night
    return settled.model_copy(update={"alerts": added}).model_dump(
        mode="json", include={"plan", "reading", "alerts"}
    )


def _load(outcome: PlanOutcome, value: Any, compute: Callable[[], PlanOutcome]) -> PlanOutcome:
    if value is None:
        return compute()
    kept = PlanOutcome.model_validate({**value, "proposed": outcome.proposed.model_dump(mode="json")})
    return _recomposed(outcome, kept, list(kept.alerts))
