"""Property test of which exclusions stand when code settles the plan (veille.steps.plan_screen).

For arbitrary catalogues, planner proposals, code reasons and deterministic screens:
- a plan with nothing to honour (it excludes nothing, or reads less than half of what the text asks
  for) gets code's own proposal whenever that proposal reads most of what the text asks for: the
  result does not depend on which broken plan the planner gave;
- a planner's proposal identical to code's (the offline backend) is settled as before code had one;
- a proposal that excludes something and whose plan reads most of what the text asks for keeps its
  exclusions and placements; code's proposal judges only the documents it said nothing of.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.roles.planner import ExclusionReason
from veille.steps.plan_screen import CodeProposal, Screen, Withheld, withheld

IDS = [f"doc-{n:02d}" for n in range(1, 13)]
REASONS: list[ExclusionReason] = ["planner_excluded", "unassigned", "off_topic", "cap"]

ids = st.frozensets(st.sampled_from(IDS))


@st.composite
def screens(draw: st.DrawFn) -> Screen:
    placed = draw(ids)
    return Screen(placed, draw(ids) - placed)


@st.composite
def codes(draw: st.DrawFn) -> CodeProposal:
    return CodeProposal(draw(screens()), draw(screens()), draw(ids))


reasons = st.dictionaries(st.sampled_from(IDS), st.sampled_from(REASONS))


def _covers(wanted: frozenset[str], placed: frozenset[str]) -> bool:
    return bool(wanted) and 2 * len(wanted & placed) >= len(wanted)


@settings(max_examples=300, deadline=None)
@given(reasons, ids, ids, screens(), screens(), codes())
def test_a_plan_with_nothing_to_honour_gets_codes_proposal(
    why: dict[str, ExclusionReason],
    placed: frozenset[str],
    wanted: frozenset[str],
    a: Screen,
    b: Screen,
    code: Screen,
) -> None:
    broken = [p for p in (a, b) if p != code.raw and not (p.excluded and _covers(wanted, placed))]
    results = {withheld(why, placed, wanted, p, code) for p in broken}
    checked = code.checked  # code's proposal once through make_plan's checks
    if broken and _covers(wanted, checked.placed):
        # The same exclusions whatever broken plan was proposed: code's screen, and code's own text
        # measure (off_topic); the screen's exclusions leave the placed documents too.
        off_topic = {i for i, r in why.items() if r == "off_topic"}
        assert results == {Withheld(frozenset(checked.excluded | off_topic), checked.excluded, True)}


@settings(max_examples=300, deadline=None)
@given(reasons, ids, ids, codes())
def test_the_offline_proposal_is_settled_as_before(
    why: dict[str, ExclusionReason], placed: frozenset[str], wanted: frozenset[str], code: CodeProposal
) -> None:
    same = withheld(why, placed, wanted, code.raw, code)
    assert same == withheld(why, placed, wanted, code.raw, None)
    assert not same.placed and not same.by_code
    if _covers(wanted, placed):
        assert same.wanted == {i for i, r in why.items() if r in ("planner_excluded", "off_topic")}
    else:
        assert not same.wanted


@settings(max_examples=300, deadline=None)
@given(reasons, ids, ids, screens(), codes())
def test_a_sensible_plan_keeps_its_exclusions_and_placements(
    why: dict[str, ExclusionReason],
    placed: frozenset[str],
    wanted: frozenset[str],
    own: Screen,
    code: CodeProposal,
) -> None:
    if own.excluded and _covers(wanted, placed):
        kept = withheld(why, placed, wanted, own, code)
        planner = {i for i, r in why.items() if r in ("planner_excluded", "off_topic")}
        assert planner <= kept.wanted
        # Code's proposal never takes out what the planner placed, nor acts on what it excluded.
        assert not kept.placed & (own.placed | own.excluded)
        assert not (kept.wanted - planner) & (own.placed | own.excluded)
        assert kept.placed <= code.checked.excluded


@settings(max_examples=300, deadline=None)
@given(reasons, ids, ids, screens(), codes(), ids)
def test_code_never_takes_out_on_its_own_what_the_text_spares(
    why: dict[str, ExclusionReason],
    placed: frozenset[str],
    wanted: frozenset[str],
    own: Screen,
    code: CodeProposal,
    spared: frozenset[str],
) -> None:
    out = withheld(why, placed, wanted, own, code, spared)
    planner = {i for i, r in why.items() if r in ("planner_excluded", "off_topic")}
    kept = spared - code.flagged  # an injection the screen excludes is never spared by its words
    assert not out.placed & kept
    assert not (out.wanted - planner) & kept
    assert out.spared <= kept & code.checked.excluded
