"""Every LLM role of the package, and realistic inputs for each (its output schema depends on them).

``all_roles()`` finds the :class:`~veille.roles.base.Role` objects by walking ``veille.roles``, so a
new role is picked up by the schema tests without being listed; ``ROLE_INPUTS`` must then give it
inputs (a test fails until it does). Roles are labelled by their module-level name, lower-cased
(``ANALYST_UPDATE`` -> ``analyst_update``): two roles may share a journal name (the incremental
analyst is journaled as ``analyst``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from pydantic import BaseModel

import veille.roles
from tests.test_offline_fixtures import synthetic_analyst_input, synthetic_planner_input
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.grid import load_grid
from veille.roles.analyst import ContradictionNote, Finding, Findings
from veille.roles.analyst_update import AnalystUpdateInput, KnownDocument
from veille.roles.base import Role
from veille.roles.critic import CriticInput
from veille.roles.judge import JudgeInput
from veille.roles.researcher import ResearcherInput
from veille.roles.reviser import ReviserInput
from veille.roles.writer import NumberedContradiction, NumberedFinding, SourceRef, WriterInput
from veille.settings import Settings
from veille.steps.headings import axis_titles

__all__ = ["ROLE_INPUTS", "all_roles", "role_cases"]

QUESTION = "Que disent les documents sur le débit de sauvegarde de Sauvia, Barzo et Quillon ?"
DRAFT = (
    "## Synthèse\n\nBarzo sauvegarde à 2,6 Go/s. Sauvia coûte 95 EUR par To. Quillon reste à mesurer.\n\n"
    "## Points clés\n\n- Débit de Barzo : 2,6 Go/s [1].\n- Prix de Sauvia : 95 EUR par To [2][3].\n\n"
    "## Ce qui reste incertain\n\n- Le débit de Quillon n'est pas mesuré [3].\n"
)


def _sources(n: int) -> list[SourceRef]:
    return [
        SourceRef(number=i, id=f"bk-{i:02d}", title=f"Source {i}", date="2026-01-0{i}", source_type="forum")
        for i in range(1, n + 1)
    ]


def _planner() -> list[BaseModel]:
    return [synthetic_planner_input(), synthetic_planner_input(max_subtasks=3, max_docs=2)]


def _analyst() -> list[BaseModel]:
    return [
        synthetic_analyst_input(QUESTION, ["bk-01", "bk-02", "bk-03"]),
        synthetic_analyst_input(QUESTION, ["bk-04"], subtask_id="st-2"),
        synthetic_analyst_input(QUESTION, [], subtask_id="st-3"),
    ]


def _known(ids: list[str]) -> list[KnownDocument]:
    return [
        KnownDocument(id=d.id, date=d.date, source_type=d.source_type, title=d.title)
        for d in synthetic_analyst_input(QUESTION, ids).documents
    ]


def _analyst_update() -> list[BaseModel]:
    previous = Findings(
        findings=[
            Finding(statement="Barzo sauvegarde à 2,6 Go/s.", doc_ids=["bk-01"], figures=["2,6 Go/s"]),
            Finding(statement="Sauvia coûte 95 EUR par To.", doc_ids=["bk-02", "bk-03"]),
        ],
        contradictions=[
            ContradictionNote(doc_ids=["bk-02", "bk-03"], retained="bk-03", reason="plus récent")
        ],
        open_questions=["Débit de Quillon ?"],
    )
    new = synthetic_analyst_input(QUESTION, ["bk-04", "bk-05"]).documents
    return [
        AnalystUpdateInput(
            subtask_id="st-1", question=QUESTION, documents=new, known_documents=_known(["bk-01", "bk-02", "bk-03"]),
            previous=previous,
        ),
        # One new document, nothing read before it (all ids: one): no contradiction is possible.
        AnalystUpdateInput(
            subtask_id="st-2", question=QUESTION, documents=new[:1], known_documents=[],
            previous=Findings(findings=[]),
        ),
    ]  # fmt: skip


QUESTIONS = {"st-1": QUESTION, "st-2": "Combien coûte chaque outil ?"}
AXES = axis_titles(QUESTIONS)


def _writer() -> list[BaseModel]:
    return [
        WriterInput(
            request_title="Sauvegarde",
            request="Comparer Sauvia, Barzo et Quillon et recommander un outil.",
            questions=QUESTIONS,
            axes=AXES,
            findings=[
                NumberedFinding(subtask_id="st-1", statement="Débit de Barzo : 2,6 Go/s.", sources=[1]),
                NumberedFinding(subtask_id="st-2", statement="Sauvia : 95 EUR par To.", sources=[2, 3]),
            ],
            contradictions=[
                NumberedContradiction(subtask_id="st-2", retained=[3], rejected=[2], reason="plus récent")
            ],
            open_questions=["Débit de Quillon ?"],
            sources=_sources(3),
            mandatory_mentions=["Barzo"],
            min_words=40,
            max_words=400,
        ),
        # One source, one axis: no contradiction can have two sides.
        WriterInput(
            request_title="Sauvegarde",
            request="Comparer.",
            questions={"st-1": QUESTION},
            axes=axis_titles({"st-1": QUESTION}),
            findings=[
                NumberedFinding(subtask_id="st-1", statement="Débit de Barzo : 2,6 Go/s.", sources=[1])
            ],
            sources=_sources(1),
            mandatory_mentions=["Barzo"],
        ),
    ]


def _grid_criteria() -> dict[str, str]:
    return dict(load_grid(Settings().grid_file).criteria)


def _critic() -> list[BaseModel]:
    return [
        CriticInput(
            draft=DRAFT,
            criteria=_grid_criteria(),
            request="Comparer.",
            source_count=3,
            min_words=40,
            max_words=400,
            forbidden_words=["révolutionnaire"],
            mandatory_mentions=["Barzo"],
        )
    ]


STRUCTURE = Dossier(
    synthesis=[CitedText(text="Barzo sauvegarde à 2,6 Go/s", citations=[1]), CitedText(text="Sauvia coûte 95 EUR par To"),
               CitedText(text="Quillon reste à mesurer")],
    sections=[AxisSection(axis="st-1", points=[KeyPoint(text="Débit de Barzo : 2,6 Go/s", citations=[1])]),
              AxisSection(axis="st-2", points=[KeyPoint(text="Prix de Sauvia : 95 EUR par To", citations=[2, 3])])],
    uncertainties=[CitedText(text="Le débit de Quillon n'est pas mesuré", citations=[3])],
    recommendation=[CitedText(text="Barzo est le plus rapide mesuré", citations=[1])],
)  # fmt: skip


def _reviser() -> list[BaseModel]:
    return [
        ReviserInput(
            draft=STRUCTURE,
            axes=AXES,
            instructions=["Longueur : 38 mots, il en faut entre 40 et 400."],
            sources=_sources(3),
            mandatory_mentions=["Barzo"],
            min_words=40,
            max_words=400,
        )
    ]


def _judge() -> list[BaseModel]:
    return [
        JudgeInput(prompt="Comparer.", reference=DRAFT, responses=[DRAFT]),
        JudgeInput(prompt="Comparer.", reference=DRAFT, responses=[DRAFT, "Rien.", DRAFT.upper()]),
    ]


def _researcher() -> list[BaseModel]:
    return [
        ResearcherInput(subtask_id="st-1", question=QUESTION, request_title="Sauvegarde", date="2026-12-02")
    ]


ROLE_INPUTS: dict[str, Callable[[], list[BaseModel]]] = {
    "planner": _planner,
    "analyst": _analyst,
    "analyst_update": _analyst_update,
    "writer": _writer,
    "critic": _critic,
    "reviser": _reviser,
    "judge": _judge,
    "researcher": _researcher,
}


def all_roles() -> dict[str, Role[BaseModel, BaseModel]]:
    """Every module-level Role object under ``veille.roles`` by label (its name there, lower-cased),
    in label order."""
    found: dict[str, Role[BaseModel, BaseModel]] = {}
    for info in pkgutil.iter_modules(veille.roles.__path__, "veille.roles."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Role):
                found[name.lower()] = value
    return {label: found[label] for label in sorted(found)}


def role_cases() -> list[tuple[str, Role[BaseModel, BaseModel], BaseModel]]:
    """(case id, role, input) for every role and every input of :data:`ROLE_INPUTS` whose schema goes
    on the wire: a role with tools (the grounded researcher) is answered in free text, its JSON is
    written by code from the grounding metadata (tests/test_web_grounding.py). The case id starts
    with the role's label."""
    cases = []
    for label, role in all_roles().items():
        if role.tools:
            continue
        for i, data in enumerate(ROLE_INPUTS[label]() if label in ROLE_INPUTS else []):
            cases.append((f"{label}-{i}", role, data))
    return cases
