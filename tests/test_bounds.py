"""Issue 23 item 4, code's bounds (veille/steps/bounds.py, sanitize_dossier): for any model answer,
whole items are dropped, never cut, and what is kept is within the Settings' bounds.

Properties: every kept finding or item is an input one, unchanged and in order; none is blank or a
repeat; each is within ``max_item_words``; at most ``max_findings`` per branch; a dossier's items
hold at most ``report_words_factor`` × ``max_words`` words unless only what may not be dropped is
left; an alert exactly when something was dropped.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.dossier import SYNTHESIS_MIN, AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry
from veille.roles.analyst import Finding
from veille.roles.limits import Bounds
from veille.roles.writer import SourceRef
from veille.steps.bounds import bound_findings, bound_report, item_words
from veille.steps.write import sanitize_dossier

WORDS = st.sampled_from(["Kestrel", "débit", "1 180", "tokens/s", "", ".", "—", "Orvet", "KESTREL", "  "])
TEXT = st.lists(WORDS, max_size=40).map(" ".join)
BOUNDS = st.builds(
    Bounds,
    max_findings=st.integers(1, 12),
    max_item_words=st.integers(1, 30),
    max_points_per_axis=st.integers(1, 8),
    report_words_factor=st.floats(1.0, 4.0),
)


@settings(max_examples=300, deadline=None, database=None)
@given(statements=st.lists(TEXT, max_size=60), bounds=BOUNDS)
def test_findings_are_kept_whole_within_the_bounds(statements: list[str], bounds: Bounds) -> None:
    findings = [Finding(statement=s, doc_ids=["doc-1"]) for s in statements]
    kept, alerts = bound_findings(findings, bounds, "st-1")

    assert len(kept) <= bounds.max_findings
    it = iter(findings)
    assert all(any(k is f for f in it) for k in kept)  # a subsequence of the answer, objects unchanged
    keys = [" ".join(k.statement.split()).casefold() for k in kept]
    assert len(keys) == len(set(keys)) and all(any(c.isalnum() for c in key) for key in keys)
    assert all(len(k.statement.split()) <= bounds.max_item_words for k in kept)
    assert bool(alerts) == (len(kept) < len(findings))
    # Nothing droppable is dropped: a finding left out is blank, a repeat, too long or over the count.
    if len(kept) < bounds.max_findings:
        for f in findings:
            key = " ".join(f.statement.split()).casefold()
            fits = any(c.isalnum() for c in key) and len(f.statement.split()) <= bounds.max_item_words
            assert not fits or key in keys


def _cited(texts: list[str]) -> list[CitedText]:
    return [CitedText(text=t, citations=[1]) for t in texts]


DOSSIERS = st.builds(
    lambda syn, points, ledger, unc, rec: Dossier(
        synthesis=_cited(syn),
        sections=[
            AxisSection(axis=f"st-{i}", points=[KeyPoint(text=t, citations=[1]) for t in axis])
            for i, axis in enumerate(points, 1)
        ],
        contradictions=[LedgerEntry(subject=s, retained=[1], rejected=[2], reason=r) for s, r in ledger],
        uncertainties=_cited(unc),
        recommendation=_cited(rec),
    ),
    st.lists(TEXT, max_size=6),
    st.lists(st.lists(TEXT, max_size=15), max_size=4),
    st.lists(st.tuples(TEXT, TEXT), max_size=5),
    st.lists(TEXT, max_size=6),
    st.lists(TEXT, max_size=4),
)


def _items(d: Dossier) -> list[str]:
    return [
        *(t.text for t in d.synthesis),
        *(p.text for s in d.sections for p in s.points),
        *(f"{e.subject}|{e.reason}" for e in d.contradictions),
        *(t.text for t in d.uncertainties),
        *(t.text for t in d.recommendation),
    ]


@settings(max_examples=300, deadline=None, database=None)
@given(dossier=DOSSIERS, limit=st.integers(0, 400))
def test_report_is_bounded_by_dropping_whole_items(dossier: Dossier, limit: int) -> None:
    bounded, alerts = bound_report(dossier, limit)

    before, after = _items(dossier), _items(bounded)
    rest = iter(before)
    assert all(any(a == b for b in rest) for a in after)  # whole items, in order, none rewritten
    floor = (
        all(not s.points for s in bounded.sections)
        and not bounded.uncertainties
        and not bounded.contradictions
        and len(bounded.recommendation) <= 1
        and len(bounded.synthesis) <= SYNTHESIS_MIN
    )
    assert item_words(bounded) <= limit or floor
    assert bool(alerts) == (after != before)
    assert [s.axis for s in bounded.sections] == [s.axis for s in dossier.sections]  # axes stay


SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title="T", date="2026-01-01", source_type="note") for n in (1, 2)
]


@settings(max_examples=100, deadline=None, database=None)
@given(dossier=DOSSIERS, bounds=BOUNDS, max_words=st.integers(20, 300))
def test_sanitised_dossier_is_within_every_bound(dossier: Dossier, bounds: Bounds, max_words: int) -> None:
    axes = [s.axis for s in dossier.sections]
    clean, _ = sanitize_dossier(dossier, SOURCES, axes, bounds=bounds, max_words=max_words)

    assert all(len(s.points) <= bounds.max_points_per_axis for s in clean.sections)
    texts = [t.text for t in (*clean.synthesis, *clean.uncertainties, *clean.recommendation)]
    texts += [p.text for s in clean.sections for p in s.points]
    assert all(len(t.split()) <= bounds.max_item_words for t in texts)
    floor = (SYNTHESIS_MIN + 1) * bounds.max_item_words  # what bound_report never drops
    assert item_words(clean) <= max(bounds.report_words(max_words), floor)
