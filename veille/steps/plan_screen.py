"""Code's own exclusion proposal: the deterministic engine's text screen, for every backend (issue 37).

The planner proposes what to leave out; code honours it when the plan reads most of what the text
asks for (veille.steps.plan_reading). A plan with nothing to honour — one that excludes nothing
(places everything, or one sub-task and nothing said of the rest), or one that reads little of what
the text asks for (excludes everything, invents ids, or is another corpus's plan) — used to have its
exclusions overruled wholesale: every document naming a compared option was then read, homonyms and
injection documents included. Code now falls back on a proposal of its own: the one the offline
engine's planner makes from the same catalogue and the same texts (``veille.offline.planner.plan``,
its relevance screen), checked like a planner's answer (make_plan) and by the same rule (it stands
when its own placement reads most of what the text asks for). Code's screen alone never takes out a
document whose own words carry the request's subject or whose passages score as relevant to an axis
(``spared``: the screen misses some on-topic documents, two text measures must agree), unless the
injection screen flagged it. So a broken model plan reads what the offline plan reads plus only
those spared documents, whatever the backend. A plan to honour keeps its exclusions and placements; code's proposal judges only the
documents it said nothing of (its silence is no judgement: a homonym it neither placed nor excluded
was placed by code's coverage because it names an option). On the offline backend the planner's
proposal is that proposal: nothing changes there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from veille.offline.authority import load_authority
from veille.offline.planner import plan as deterministic_plan
from veille.roles.base import In, Out, Role
from veille.roles.planner import ExclusionReason, Plan, PlannerInput
from veille.steps.plan import LeftOutLike, PlanUnusableError, make_plan
from veille.steps.plan_alerts import LOW_COVERAGE
from veille.steps.plan_validate import repair_ids

if TYPE_CHECKING:
    from veille.models.base import ModelResult
    from veille.steps.text_relevance import TextRelevance

__all__ = ["CodeProposal", "Screen", "Withheld", "code_proposal", "withheld"]

# The exclusions a settled plan honours (veille.steps.plan_reading): the proposal's own, and code's
# text measure.
_HONOURED: tuple[ExclusionReason, ...] = ("planner_excluded", "off_topic")


@dataclass(frozen=True)
class Screen:
    """A proposal's placement and exclusions (document ids)."""

    placed: frozenset[str]
    excluded: frozenset[str]

    @classmethod
    def of(cls, plan: Plan, known: Collection[str]) -> Screen:
        """``plan``'s ids as validation reads them (« DOC-03 » is doc-03), unknown ones left out."""
        ids = set(known)
        placed_ids, _ = repair_ids([i for st in plan.sub_tasks for i in st.doc_ids], ids)
        excluded_ids, _ = repair_ids(list(plan.excluded), ids)
        placed = frozenset(i for i in placed_ids if i in ids)
        return cls(placed, frozenset(i for i in excluded_ids if i in ids) - placed)

    def _replace_excluded(self, excluded: frozenset[str]) -> Screen:
        return Screen(self.placed, excluded - self.placed)


@dataclass(frozen=True)
class CodeProposal:
    """Code's own proposal: ``raw`` as the deterministic engine made it, ``checked`` once through
    the checks a planner's answer goes through (make_plan: validation, code's text measure,
    coverage, the flagged documents), as on the offline backend."""

    raw: Screen
    checked: Screen
    flagged: frozenset[str] = frozenset()  # the injection screen's documents: never spared


class _NoModel:
    """make_plan's client for a proposal already given (``previous``): no model is ever asked."""

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        raise RuntimeError(f"code's own proposal asks no model (role {role.name})")


def code_proposal(
    data: PlannerInput,
    bodies: Mapping[str, str],
    authority_file: Path | None = None,
    *,
    flagged: Mapping[str, str] | None = None,
    left_out: Sequence[LeftOutLike] = (),
    text: TextRelevance | None = None,
    proposed: Plan | None = None,
) -> CodeProposal:
    """The offline engine's proposal for ``data`` over ``bodies`` (framing types from
    ``authority_file``, as the offline backend reads them), raw and checked like a planner's
    answer (``flagged``, ``left_out``, ``text``: make_plan's). When it is ``proposed`` (the
    planner's, on the offline backend) it was checked already: not again."""
    framing = load_authority(authority_file).framing() if authority_file is not None else frozenset()
    proposal = deterministic_plan(data.model_copy(update={"texts": None}), framing, bodies=bodies)
    ids = [e.id for e in data.catalogue]
    raw = Screen.of(proposal, ids)
    marked = frozenset(flagged or ())
    if proposed is not None and Screen.of(proposed, ids) == raw:
        return CodeProposal(raw, raw, marked)
    try:
        checked = make_plan(
            _NoModel(), data, previous=proposal, flagged=flagged, left_out=left_out, reask=False, text=text
        ).plan
    except PlanUnusableError:  # nothing to read by code's proposal: it covers nothing, stands for nothing
        return CodeProposal(raw, Screen(frozenset(), frozenset()), marked)
    out = frozenset(e.id for e in checked.exclusions if e.reason in _HONOURED)
    return CodeProposal(raw, Screen.of(checked, ids)._replace_excluded(out), marked)


@dataclass(frozen=True)
class Withheld:
    """What the settled plan does not read whatever the text measured: ``wanted`` (out of the
    documents the axes ask for), ``placed`` (out of the documents the plan placed), ``by_code``
    (true when code's proposal stood in for the planner's)."""

    wanted: frozenset[str]
    placed: frozenset[str]
    by_code: bool
    spared: frozenset[str] = frozenset()  # code's proposal excluded them, their words kept them


def withheld(
    reasons: Mapping[str, ExclusionReason],
    placed: Collection[str],
    wanted: Collection[str],
    proposed: Screen,
    code: CodeProposal | None,
    spared: Collection[str] = (),
) -> Withheld:
    """The exclusions that stand. ``proposed``: the planner's own proposal; ``placed``: its plan
    once validated and covered; ``code``: code's proposal (:func:`code_proposal`); ``spared``: the
    documents whose own words carry the request's subject (veille.steps.subject), which code's
    proposal never takes out on its own (two text measures must agree to overrule a silent or
    broken planner; the homonyms it is for carry the subject only by naming an option)."""
    want = set(wanted)

    def covers(ids: Collection[str]) -> bool:
        return bool(want) and len(want & set(ids)) >= LOW_COVERAGE * len(want)

    by_text = {i for i, r in reasons.items() if r == "off_topic"}  # code's text measure (make_plan)
    own = frozenset(i for i, r in reasons.items() if r in _HONOURED) if covers(placed) else frozenset()
    # The planner's proposal is code's (the offline backend): it went through the same checks.
    if code is None or code.raw == proposed or not covers(code.checked.placed):
        return Withheld(own, frozenset(), False)
    # A document the injection screen flagged and code's proposal excludes is out whatever its
    # words: two signals against it, and its words are the ones written to be read.
    spared = frozenset(spared) - code.flagged
    screen = Screen(code.checked.placed, code.checked.excluded - spared)
    kept = code.checked.excluded & spared
    if proposed.excluded and covers(placed):
        # A plan to honour: its exclusions and placements stand; on the documents it said nothing
        # of (neither placed nor excluded, then placed or not by code's coverage), code's proposal.
        silent = screen.excluded - proposed.placed - proposed.excluded
        return Withheld(own | silent, silent, bool(silent), kept - proposed.placed - proposed.excluded)
    return Withheld(frozenset(screen.excluded | by_text), screen.excluded, True, kept)
