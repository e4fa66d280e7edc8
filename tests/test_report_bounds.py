"""Issue 23 item 4 (code's part): whatever the writer returns, the sanitised dossier is bounded —
no item over MAX_ITEM_WORDS words, at most MAX_POINTS_PER_AXIS key points per axis, duplicates
and blank items dropped — and an alert says what was removed."""

from __future__ import annotations

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, render_body
from veille.roles.writer import SourceRef
from veille.steps.write import MAX_ITEM_WORDS, MAX_POINTS_PER_AXIS, sanitize_dossier

SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title="T", date="2026-01-01", source_type="note") for n in (1, 2)
]


def test_a_maximal_writer_answer_is_bounded_with_an_alert() -> None:
    huge = "Kestrel débit " * 200_000  # a 400,000-word string
    repeated = KeyPoint(text="Kestrel mesure 1 180 tokens/s.", citations=[1])
    points = [KeyPoint(text=f"Point {i} sur le débit.", citations=[1]) for i in range(200)]
    points += [repeated.model_copy() for _ in range(401)] + [KeyPoint(text=huge, citations=[2])]
    points += [KeyPoint(text=t, citations=[1]) for t in ("", ".", " — ", "   ")]
    dossier = Dossier(
        synthesis=[CitedText(text=huge, citations=[1])]
        + [CitedText(text="Même phrase.", citations=[1])] * 30,
        sections=[AxisSection(axis="st-1", points=points)],
        uncertainties=[CitedText(text=".", citations=[]) for _ in range(30)],
    )
    clean, alerts = sanitize_dossier(dossier, SOURCES, ["st-1"])

    [axis] = clean.sections
    assert len(axis.points) == MAX_POINTS_PER_AXIS
    texts = [p.text for p in axis.points] + [s.text for s in clean.synthesis]
    assert all(0 < len(t.split()) <= MAX_ITEM_WORDS for t in texts)
    assert [s.text for s in clean.synthesis] == ["Même phrase."] and not clean.uncertainties
    rendered = render_body(clean, {"st-1": "st-1 — Débit"})
    assert len(rendered.split()) < 50 * MAX_POINTS_PER_AXIS
    codes = {a.code: a.message for a in alerts}
    assert "report.bounded" in codes and "doublon" in codes["report.bounded"]
    assert "report.empty_item" in codes
