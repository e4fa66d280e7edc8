from veille.journal import CallRecord
from veille.run.summary import usage_note


def _record(role: str, call_id: str, cost: float | None, **kw: object) -> CallRecord:
    return CallRecord(
        run_id="r",
        call_id=call_id,
        attempt=1,
        role=role,
        backend="gemini",
        model="m",
        input_tokens=100,
        output_tokens=10,
        reasoning_tokens=5,
        cost_usd=cost,
        status="ok",
        started_at="2026-11-30T00:00:00Z",
        **kw,  # type: ignore[arg-type]
    )


def test_usage_note_sums_the_roles_asked_for() -> None:
    records = [
        _record("critic", "a", 0.001),
        _record("reviser", "b", 0.002, cache_hit=True),
        _record("analyst", "c", 1.0),
    ]
    note = usage_note(records, "critic", "reviser")
    assert note == "critic+reviser: 2 call(s), 1 cache hit(s), 200 in / 30 out tokens, $0.0030"


def test_usage_note_never_shows_a_silent_zero_cost() -> None:
    records = [_record("planner", "a", None), _record("planner", "a", 0.5, estimated=True)]
    note = usage_note(records, "planner")
    assert note.endswith("(estimated), cost unknown")
    assert "1 call(s)" in note  # two attempts of one call
