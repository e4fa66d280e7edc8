"""The offline writer on an incremental night (issue 40 item 3, veille.steps.sections).

The step asks the writer for the axes whose findings changed only (``data.axes``), names the kept
ones (``data.kept_axes``: code merges their validated sections) and gives the previous night's
conclusions in tonight's numbers (``data.previous``), to update — the same input a model gets.
The offline writer composes the changed sections from their findings as on a full night, and the
conclusions from what it is shown, precision first:

- **ledger**: tonight's entries of the changed axes' notes, and each previous entry that cites
  none of the sources the changed axes cite (an entry touching them is settled again from
  tonight's notes, or dropped: a stale contradiction is worse than a missing one);
- **synthesis**: the scope sentence counts every axis (kept ones too) and the sources tonight's
  dossier cites; « À retenir » is the more concrete of tonight's best point and the previous one;
  the settled-divergences sentence counts the ledger above; the comparison sentence is the
  previous night's (its figures are the kept axes' too, which the writer is not shown);
- **recommendation** (a choice): the previous night's, for the same reason.

What differs from a full night's dossier of the same corpus is therefore confined to the changed
axes and to these conclusions; the differences are measured by ``bench/nights.py --compare``
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from veille.dossier import CitedText, Dossier, LedgerEntry
from veille.roles.writer import touched_sources

__all__ = ["COMPARISON_LEAD", "HIGHLIGHT_LEAD", "carried_ledger", "touched_sources", "updated_synthesis"]

HIGHLIGHT_LEAD = "À retenir : "  # the synthesis's most concrete point (veille.offline.writer)
COMPARISON_LEAD = "Sur les chiffres comparables, "  # the synthesis's comparison sentence


def _ledger_key(entry: LedgerEntry) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(sorted(entry.retained)), tuple(sorted(entry.rejected))


def carried_ledger(fresh: Sequence[LedgerEntry], previous: Dossier, touched: set[int]) -> list[LedgerEntry]:
    """Tonight's entries and the previous entries citing no touched source (not already there),
    in the previous ledger's order (an entry settled again between the same sources stands where
    it stood; new ones after): a ledger that did not change reads as it did, so the judge carries
    its score over (veille.graders.parts) instead of grading a reordered copy."""
    seen = {_ledger_key(e) for e in fresh}
    out = list(fresh)
    for entry in previous.contradictions:
        key = _ledger_key(entry)
        cited = {*entry.retained, *entry.rejected}
        if entry.retained and entry.rejected and not cited & touched and key not in seen:
            seen.add(key)
            out.append(entry.model_copy(deep=True))
    rank = {key: k for k, key in reversed(list(enumerate(map(_ledger_key, previous.contradictions))))}
    return sorted(out, key=lambda e: rank.get(_ledger_key(e), len(rank)))  # stable: new ones in order


def updated_synthesis(
    tonight: Sequence[CitedText], previous: Dossier, touched: set[int], value: Callable[[str], float]
) -> list[CitedText]:
    """Tonight's synthesis (scope, highlight, settled divergences) with the previous highlight when
    it cites no touched source and is the more concrete (``value``: the writer's measure), and the
    previous comparison sentence."""
    out = [c for c in tonight if not c.text.startswith(COMPARISON_LEAD)]
    before = next((c for c in previous.synthesis if c.text.startswith(HIGHLIGHT_LEAD)), None)
    now = next((i for i, c in enumerate(out) if c.text.startswith(HIGHLIGHT_LEAD)), None)
    if before is not None and before.citations and not set(before.citations) & touched:
        mine = value(out[now].text.removeprefix(HIGHLIGHT_LEAD)) if now is not None else -1.0
        if value(before.text.removeprefix(HIGHLIGHT_LEAD)) >= mine:
            if now is not None:
                out[now] = before.model_copy(deep=True)
            else:  # tonight's changed axes gave no concrete point: the generic line is replaced
                out[1:2] = [before.model_copy(deep=True)]
    out += [c.model_copy(deep=True) for c in previous.synthesis if c.text.startswith(COMPARISON_LEAD)]
    return out
