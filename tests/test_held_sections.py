"""A rewritten section in the words a validated night passed is held like a kept one (issue 40
item 3, branch offedit2): ``SectionCache.store`` marks each validated section's text in id space
(``text_keys``) and ``validated`` finds exactly the rewritten sections equal to one of them — the
same points, citations (as document ids, whatever tonight's numbering), superseded marks and
title, under the same rules; any other word, citation or rule is another text, reviewed again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.dossier import AxisSection, Dossier, KeyPoint
from veille.roles.writer import SourceRef
from veille.steps.sections import SectionCache, text_keys

AXES = {"st-1": "Débit", "st-2": "Prix", "st-3": "Support"}
TEXTS = ["Kestrel sert 1 420 tokens/s.", "Tamaris coûte 2 900 EUR.", "Orvet est maintenu jusqu'en 2029."]


def _sources(order: list[str]) -> list[SourceRef]:
    return [
        SourceRef(number=n, id=i, title=i, date="2026-01-01", source_type="note")
        for n, i in enumerate(order, start=1)
    ]


POINT = st.builds(
    lambda text, ids, superseded: (text, ids, superseded),
    st.sampled_from(TEXTS),
    st.lists(st.sampled_from(["doc-a", "doc-b", "doc-c"]), min_size=1, max_size=2, unique=True),
    st.booleans(),
)
SECTIONS = st.fixed_dictionaries({axis: st.lists(POINT, min_size=1, max_size=3) for axis in AXES})


def _dossier(sections: dict[str, list[tuple[str, list[str], bool]]], sources: list[SourceRef]) -> Dossier:
    number = {s.id: s.number for s in sources}
    return Dossier(
        sections=[
            AxisSection(
                axis=axis,
                points=[
                    KeyPoint(text=t, citations=[number[i] for i in ids], superseded=sup)
                    for t, ids, sup in pts
                ],
            )
            for axis, pts in sections.items()
        ]
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    night1=SECTIONS,
    night2=SECTIONS,
    order=st.permutations(["doc-a", "doc-b", "doc-c"]),
    same_rules=st.booleans(),
)
def test_only_a_section_in_the_words_a_validated_night_passed_is_held(
    tmp_path_factory: pytest.TempPathFactory,
    night1: dict[str, list[tuple[str, list[str], bool]]],
    night2: dict[str, list[tuple[str, list[str], bool]]],
    order: list[str],
    same_rules: bool,
) -> None:
    path = tmp_path_factory.mktemp("held") / "sections.sqlite"
    cache = SectionCache(path)
    first = _sources(["doc-a", "doc-b", "doc-c"])
    cache.store(_dossier(night1, first), first, {}, "rules-1", AXES)
    tonight = _sources(list(order))  # another numbering: compared in id space
    keys = text_keys(_dossier(night2, tonight), tonight, AXES, "rules-1" if same_rules else "rules-2")
    expected = {axis for axis in AXES if night1[axis] == night2[axis]} if same_rules else set()
    assert cache.validated(keys) == expected


def test_a_dossier_stored_without_its_axes_marks_nothing(tmp_path: Path) -> None:
    cache = SectionCache(tmp_path / "sections.sqlite")
    sources = _sources(["doc-a", "doc-b", "doc-c"])
    night = {axis: [(TEXTS[0], ["doc-a"], False)] for axis in AXES}
    cache.store(_dossier(night, sources), sources, {}, "rules-1")
    assert cache.validated(text_keys(_dossier(night, sources), sources, AXES, "rules-1")) == set()
