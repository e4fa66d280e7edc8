"""bench/month.py's own pieces: the fake planner reads back exactly what the planner prompt shows,
and the generated month is the same for the same seed (the bench's figures depend on both)."""

from __future__ import annotations

import importlib.util
import random
import sys
from types import ModuleType

import pytest

from veille.roles.planner import CatalogueEntry, PlannerInput, build_prompt
from veille.settings import PROJECT_ROOT


def _month() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_month", PROJECT_ROOT / "bench" / "month.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("with_summaries", [False, True])
def test_planner_prompt_parses_back_to_its_input(with_summaries: bool) -> None:
    data = PlannerInput(
        request_title="Kestrel, Tamaris ou Orvet pour 2027 ?",
        request="Compare Kestrel, Tamaris et Orvet : débit, coût, sécurité.\n\n- Débit\n- Coût",
        terms=["Kestrel", "Tamaris", "Orvet"],
        catalogue=[
            CatalogueEntry(
                id="doc-01", date="2026-02-10", source_type="fiche-fournisseur", title="Fiche Kestrel"
            ),
            CatalogueEntry(
                id="web-0123456789",
                date="2026-11-03",
                source_type="article-presse",
                title="Tamaris : grille tarifaire",
                summary="La licence coûte 9 000 EUR par GPU.",
            ),
            CatalogueEntry(
                id="doc-05",
                date="2026-04-02",
                source_type="bulletin-securite",
                title="Faille",
                copies=["doc-09"],
            ),
        ]
        + [  # a catalogue long enough for the summaries to fit the per-line budget
            CatalogueEntry(
                id=f"doc-{i}", date="2026-01-01", source_type="note", title=f"Note {i}", summary="Texte."
            )
            for i in range(10, 40)
        ],
        max_subtasks=6,
        max_docs=8,
        with_summaries=with_summaries,
    )
    prompt = build_prompt(data)
    parsed = _month()._planner_input(prompt)
    assert (parsed.request_title, parsed.request, parsed.terms) == (
        data.request_title,
        data.request,
        data.terms,
    )
    assert (parsed.max_subtasks, parsed.max_docs) == (6, 8)
    assert [(e.id, e.date, e.source_type, e.title) for e in parsed.catalogue] == [
        (e.id, e.date, e.source_type, e.title) for e in data.catalogue
    ]
    summaries = [e.summary for e in parsed.catalogue]
    if with_summaries:  # shown within the planner's token budget
        assert " — " in prompt and summaries == [e.summary for e in data.catalogue]
    else:
        assert set(summaries) == {None}


def test_generated_month_is_the_same_for_the_same_seed() -> None:
    month = _month()
    nights = [month.generate_items(random.Random(7), night, 3) for night in (1, 2)]
    again = [month.generate_items(random.Random(7), night, 3) for night in (1, 2)]
    assert nights == again and len({it.slug for night in nights for it in night}) == 6
    assert all(it.title and it.description and len(it.paragraphs) >= 2 for night in nights for it in night)
