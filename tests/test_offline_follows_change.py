"""The offline engine follows the change (issue 40 item 3) through the model path's code: the
writer asked for the changed axes only (veille.steps.sections.changed_only) updates the previous
conclusions precision first (veille.offline.writer_update), the critic measures the sections
shown and leaves the whole-dossier rules to the arbiter, the judge grades a part on what it covers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry, render_body
from veille.grid import Grid
from veille.offline.critic import criticise
from veille.offline.judge import judge
from veille.offline.writer import write
from veille.offline.writer_update import carried_ledger
from veille.roles.critic import CriticInput
from veille.roles.judge import JudgeInput
from veille.roles.writer import NumberedContradiction, NumberedFinding, SourceRef, WriterInput
from veille.steps.review import _shown_to_critic
from veille.steps.sections import changed_only, merge_sections
from veille.textstats import count_words

OPTIONS = ["Kestrel", "Tamaris"]
AXES = {"st-1": "Débit", "st-2": "Prix", "st-3": "Support"}
SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title=f"Document {n}", date=f"2026-0{n}-01", source_type="note")
    for n in range(1, 7)
]
FINDINGS = [
    NumberedFinding(subtask_id="st-1", statement="Kestrel sert 1 420 tokens/s par GPU.", sources=[1]),
    NumberedFinding(subtask_id="st-1", statement="Tamaris sert 1 180 tokens/s par GPU.", sources=[2]),
    NumberedFinding(subtask_id="st-2", statement="Kestrel coûte 3 600 EUR par GPU et par an.", sources=[3]),
    NumberedFinding(subtask_id="st-2", statement="Tamaris coûte 2 900 EUR par GPU et par an.", sources=[4]),
    NumberedFinding(subtask_id="st-3", statement="Kestrel est maintenu jusqu'en 2029.", sources=[5]),
    NumberedFinding(
        subtask_id="st-3", statement="Tamaris publie une version toutes les 6 semaines.", sources=[6]
    ),
]


def _input(**update: object) -> WriterInput:
    data = WriterInput(
        request_title="Kestrel ou Tamaris ?",
        request="Comparer Kestrel et Tamaris.",
        questions={axis: f"Que disent les documents sur {title} ?" for axis, title in AXES.items()},
        axes=AXES,
        findings=FINDINGS,
        sources=SOURCES,
        options=OPTIONS,
        mandatory_mentions=OPTIONS,
        min_words=20,
        max_words=1000,
    )
    return data.model_copy(update=update)


def test_a_night_that_keeps_axes_writes_the_others_and_keeps_the_conclusions_it_cannot_see() -> None:
    full = write(_input())
    kept = {s.axis: s for s in full.sections if s.axis != "st-2"}
    asked = changed_only(_input(previous=full), kept)
    assert list(asked.axes) == ["st-2"] and asked.kept_words > 0
    night = merge_sections(write(asked), kept, AXES)
    assert night.sections == full.sections  # the same findings: the same sections
    assert night.synthesis[0] == full.synthesis[0]  # every axis counted, every cited source too
    assert night.recommendation == full.recommendation  # weighed on every axis, the writer sees one
    assert render_body(night, AXES) == render_body(full, AXES)


def test_the_kept_sections_words_count_against_the_length_of_the_whole_dossier() -> None:
    full = write(_input())
    kept = {s.axis: s for s in full.sections if s.axis != "st-2"}
    asked = changed_only(_input(previous=full), kept)
    shown = count_words(render_body(write(asked), asked.axes))
    tight = asked.model_copy(update={"max_words": shown + asked.kept_words - 1})
    assert count_words(render_body(write(tight), asked.axes)) < shown  # a point of st-2 given up
    assert (
        len(
            write(asked.model_copy(update={"kept_words": 0, "max_words": tight.max_words})).sections[0].points
        )
        == 2
    )


ENTRY = st.builds(
    LedgerEntry,
    subject=st.sampled_from(["Débit", "Prix"]),
    retained=st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True),
    rejected=st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True),
    reason=st.just("La source la plus récente prime."),
)


@settings(max_examples=200, deadline=None)
@given(
    fresh=st.lists(ENTRY, max_size=3),
    previous=st.lists(ENTRY, max_size=5),
    touched=st.sets(st.integers(1, 6)),
)
def test_a_previous_ledger_entry_touching_a_changed_source_is_never_carried(
    fresh: list[LedgerEntry], previous: list[LedgerEntry], touched: set[int]
) -> None:
    out = carried_ledger(fresh, Dossier(contradictions=previous), touched)
    tonight = [e for e in out if any(e is f for f in fresh)]
    assert len(tonight) == len(fresh) and all(any(e is f for e in tonight) for f in fresh)  # all of them
    # In the previous ledger's order (an unchanged ledger reads as it did: branch offedit2), the
    # entries it did not have after, in tonight's order.
    key = lambda e: (tuple(sorted(e.retained)), tuple(sorted(e.rejected)))  # noqa: E731
    rank = {key(e): k for k, e in reversed(list(enumerate(previous)))}
    ranks = [rank.get(key(e), len(rank)) for e in out]
    assert ranks == sorted(ranks)
    assert [e for e in out if key(e) not in rank] == [e for e in fresh if key(e) not in rank]
    carried = [e for e in out if not any(e is f for f in fresh)]
    assert all(not {*e.retained, *e.rejected} & touched for e in carried)
    keys = [(tuple(sorted(e.retained)), tuple(sorted(e.rejected))) for e in carried]
    assert len(set(keys)) == len(keys)
    kept = [e for e in previous if not {*e.retained, *e.rejected} & touched]
    assert {(tuple(sorted(e.retained)), tuple(sorted(e.rejected))) for e in kept} <= set(keys) | {
        (tuple(sorted(e.retained)), tuple(sorted(e.rejected))) for e in fresh
    }


def test_a_previous_contradiction_of_a_changed_branch_is_settled_again_not_carried() -> None:
    note = NumberedContradiction(subtask_id="st-2", retained=[3], rejected=[4], reason="Plus récent.")
    previous = Dossier(
        contradictions=[LedgerEntry(subject="Prix", retained=[3], rejected=[4], reason="Ancienne raison.")]
    )
    kept = {"st-1": AxisSection(axis="st-1"), "st-3": AxisSection(axis="st-3")}
    gone = write(changed_only(_input(previous=previous), kept))  # tonight's notes: none on it
    assert gone.contradictions == []
    again = write(changed_only(_input(previous=previous, contradictions=[note]), kept))
    assert [(e.retained, e.rejected) for e in again.contradictions] == [([3], [4])]
    assert "Ancienne raison" not in again.contradictions[0].reason


GRID = Grid(
    criteria={"clarité": "Phrases courtes.", "citations": "Des sources."},
    min_words=300,
    max_words=1000,
    mandatory_mentions=("Orvet",),
)


def test_the_critic_measures_the_sections_shown_and_leaves_length_and_mentions_to_the_arbiter() -> None:
    dossier = Dossier(
        synthesis=[
            CitedText(text=t, citations=[1]) for t in ("Kestrel et Tamaris.", "Deux moteurs.", "Rien.")
        ],
        sections=[
            AxisSection(
                axis=a,
                points=[
                    KeyPoint(text=f.statement, citations=f.sources) for f in FINDINGS if f.subtask_id == a
                ],
            )
            for a in AXES
        ],
        uncertainties=[CitedText(text="Rien d'ouvert.")],
        recommendation=None,
    )
    shown = _shown_to_critic(dossier, AXES, ["st-1", "st-3"])

    def scores(draft: str) -> dict[str, object]:
        data = CriticInput(
            draft=draft, criteria=GRID.criteria, request="Kestrel ?", source_count=6, min_words=GRID.min_words,
            max_words=GRID.max_words, mandatory_mentions=list(GRID.mandatory_mentions), axes=list(AXES.values()),
        )  # fmt: skip
        return criticise(data)

    partial = scores(shown)
    assert partial["clarité"] == 5 and partial["citations"] == 5, partial  # notes are no uncited bullets
    assert not [r for r in partial["remarks"] if "mots" in str(r) or "Orvet" in str(r)], partial
    whole = scores(render_body(dossier, AXES))  # the whole draft: too short, Orvet missing
    assert any("mots" in str(r) for r in whole["remarks"]) and any(
        "Orvet" in str(r) for r in whole["remarks"]
    )


REFERENCE = """## Synthèse

Kestrel sert 1 420 tokens/s par GPU [1], Tamaris 1 180 tokens/s [2].

## Points clés

### Débit

- Kestrel sert 1 420 tokens/s par GPU [1].
- Tamaris sert 1 180 tokens/s par GPU [2].

### Prix

- Kestrel coûte 3 600 EUR par GPU et par an [3].
- Tamaris coûte 2 900 EUR par GPU et par an [4].
"""


def test_a_part_is_judged_on_what_it_covers_and_a_wrong_figure_costs() -> None:
    right = "### Prix\n\n- Kestrel coûte 3 600 EUR par GPU et par an [3].\n- Tamaris coûte 2 900 EUR par GPU et par an [4]."
    wrong = right.replace("3 600", "4 800").replace("2 900", "5 100")
    parts = judge(
        JudgeInput(prompt="Kestrel ?", reference=REFERENCE, responses=[right, wrong], criteria="dossier_part")
    )
    whole = judge(JudgeInput(prompt="Kestrel ?", reference=REFERENCE, responses=[right], criteria="dossier"))
    first, second = parts.model_dump()["r0"], parts.model_dump()["r1"]
    assert first["accuracy"] == 5 and first["usefulness"] == 5  # one axis of two: not penalised
    assert second["accuracy"] < first["accuracy"]
    assert whole.model_dump()["r0"]["accuracy"] < 5  # judged whole, half the reference is missing
