"""The reviser gets only the failing sections (issue 40 item 3), on every backend: the sections an
instruction points at, all of them when one concerns the dossier as a whole; the others come back
unchanged (veille.steps.review_scope)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from veille.arbiter import arbitrate, part_instructions
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, render_body
from veille.graders.parts import report_parts
from veille.grid import Grid
from veille.plaintext import md_escape
from veille.roles.base import In, Out, Role
from veille.roles.critic import CRITIC
from veille.roles.reviser import REVISER, ReviserInput
from veille.roles.writer import SourceRef
from veille.steps.review import review_loop
from veille.steps.review_scope import failing_axes

CRITERIA = {"clarity": "Phrases courtes.", "tone": "Neutre.", "citations": "Des sources."}
GRID = Grid(
    criteria=CRITERIA,
    min_words=10,
    max_words=400,
    max_sentence_words=20,
    forbidden_words=("leader",),
    mandatory_mentions=("Kestrel",),
)
AXES = {"st-1": "Débit", "st-2": "Prix", "st-3": "Support"}
SOURCES = [
    SourceRef(number=n, id=f"doc-{n}", title=f"Document {n}", date="2026-01-01", source_type="note")
    for n in (1, 2, 3)
]
LONG = "Kestrel " + " ".join(["traite des lots de requêtes"] * 6) + " sans arrêt."


class _Answer:
    def __init__(self, output: BaseModel) -> None:
        self.output = output


class Recording:
    """Critic: the given scores and remarks; reviser: its draft with the forbidden word and the
    long sentence rewritten (what it was asked), every input recorded."""

    def __init__(self, scores: dict[str, int], remarks: list[str] | None = None) -> None:
        self.scores = scores
        self.remarks = remarks or []
        self.revisions: list[ReviserInput] = []

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> Any:
        if role is CRITIC:
            answer: dict[str, Any] = {**self.scores, "remarks": self.remarks}
            return _Answer(CRITIC.schema_for(data).model_validate(answer))
        assert role is REVISER and isinstance(data, ReviserInput)
        self.revisions.append(data)
        fixed = (
            data.draft.model_dump_json()
            .replace("leader", "premier")
            .replace(LONG[:-1], "Kestrel traite des lots")
        )
        return _Answer(REVISER.schema_for(data).model_validate_json(fixed))


def _dossier(points: dict[str, list[str]]) -> Dossier:
    return Dossier(
        synthesis=[
            CitedText(text="Ce dossier compare Kestrel sur trois volets.", citations=[]),
            CitedText(text="Les chiffres viennent des documents.", citations=[1]),
            CitedText(text="Aucune divergence relevée.", citations=[]),
        ],
        sections=[
            AxisSection(axis=axis, points=[KeyPoint(text=t, citations=[n]) for t in points.get(axis, [])])
            for n, axis in enumerate(AXES, 1)
        ],
        uncertainties=[CitedText(text="Rien d'ouvert.", citations=[])],
        recommendation=None,
    )


GOOD = {"st-1": ["Kestrel sert 1 420 requêtes par seconde."], "st-2": ["Kestrel coûte 3 600 EUR."],
        "st-3": ["Kestrel est maintenu jusqu'en 2029."]}  # fmt: skip
ALL_FIVE = dict.fromkeys(CRITERIA, 5)


def _review(draft: Dossier, client: Recording, kept: tuple[str, ...] = ()) -> Dossier:
    outcome = review_loop(
        client, draft, grid=GRID, sources=SOURCES, request="Kestrel ?", max_rounds=2, axes=AXES, kept=kept
    )
    return outcome.final_dossier


def test_the_reviser_gets_only_the_section_an_instruction_points_at() -> None:
    draft = _dossier({**GOOD, "st-2": ["Kestrel est le leader du marché à 3 600 EUR."]})
    client = Recording(ALL_FIVE)
    final = _review(draft, client)
    (asked,) = client.revisions
    assert list(asked.axes) == ["st-2"]
    assert [s.axis for s in asked.draft.sections] == ["st-2"]
    by_axis = {s.axis: s for s in final.sections}
    assert [s.axis for s in final.sections] == list(AXES)  # code merges the others back, in order
    assert by_axis["st-1"].points[0].text == GOOD["st-1"][0]
    assert by_axis["st-3"].points[0].text == GOOD["st-3"][0]
    assert "leader" not in render_body(final, AXES)


def test_a_long_sentence_and_a_remark_quoting_a_section_point_at_those_sections() -> None:
    draft = _dossier({**GOOD, "st-3": [LONG]})
    remark = "La phrase « Kestrel sert 1 420 requêtes… » est vague."
    client = Recording(ALL_FIVE, [remark])
    _review(draft, client)
    (asked,) = client.revisions
    assert sorted(asked.axes) == ["st-1", "st-3"]


def test_an_instruction_about_the_whole_dossier_sends_every_section_not_kept() -> None:
    draft = _dossier({**GOOD, "st-2": ["Kestrel est le leader du marché à 3 600 EUR."]})
    client = Recording({**ALL_FIVE, "clarity": 3})  # a criterion's score: the dossier as a whole
    _review(draft, client, kept=("st-1",))
    (asked,) = client.revisions
    assert sorted(asked.axes) == ["st-2", "st-3"]


def test_a_remark_quoting_nothing_of_the_draft_sends_every_section() -> None:
    draft = _dossier({**GOOD, "st-2": ["Kestrel est le leader du marché à 3 600 EUR."]})
    client = Recording(ALL_FIVE, ["Le ton est « trop enthousiaste » par endroits."])
    _review(draft, client)
    (asked,) = client.revisions
    assert sorted(asked.axes) == list(AXES)


# --- property: no section an instruction points at is withheld from the reviser ----------------

WORDS = ["Kestrel", "leader", "débit", "prix", "requêtes", "EUR", "1 420", "sert", "le", "du", "marché"]
POINT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(lambda w: " ".join(w) + ".")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    points=st.fixed_dictionaries({axis: st.lists(POINT, max_size=3) for axis in AXES}),
    scores=st.fixed_dictionaries({c: st.integers(min_value=1, max_value=5) for c in CRITERIA}),
    remarks=st.lists(st.sampled_from(["« leader »", "« débit prix »", "Soyez concret.", ""]), max_size=2),
    held=st.sets(st.sampled_from(list(AXES))),
)
def test_every_section_an_instruction_traces_to_goes_to_the_reviser(
    points: dict[str, list[str]], scores: dict[str, int], remarks: list[str], held: set[str]
) -> None:
    draft = _dossier(points)
    rendered = render_body(draft, AXES)
    verdict = arbitrate({**scores, "remarks": remarks}, rendered, GRID, SOURCES, "fr")
    failing = failing_axes(draft, AXES, verdict, GRID, "fr", held)
    if failing is None:
        return  # every section not kept goes, as before
    assert not failing & held
    parts = report_parts(rendered)
    for axis, title in AXES.items():
        if axis in held or axis in failing:
            continue
        own = set(part_instructions(parts[f"axe:{md_escape(title)}"], GRID, "fr"))
        assert not own & set(verdict.instructions), axis  # a section with a fault is always sent
        text = " ".join(parts[f"axe:{md_escape(title)}"].split()).casefold()
        for remark in verdict.remarks:  # a remark quoting this section's words sends it
            quoted = [q.casefold() for q in remark.split("« ")[1:]]
            assert not quoted or not all(q.split(" »")[0] in text for q in quoted)
