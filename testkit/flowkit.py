"""Helpers for flow tests: a small corpus on disk and a scripted model that answers every role
from the typed role input (so answers follow whatever plan the flow validated)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.models.base import ModelRequest
from veille.roles.analyst import Finding, Findings
from veille.roles.planner import Plan, SubTask
from veille.roles.reviser import ReviserInput
from veille.roles.writer import WriterInput

__all__ = ["AXES", "DOCS", "PERFECT", "dossier_from", "read_json", "responder", "write_corpus"]

# id, date, source type, title, body (short French documents about three fictitious engines)
DOCS: list[tuple[str, str, str, str, str]] = [
    (
        "doc-01",
        "2026-02-10",
        "fiche-fournisseur",
        "Fiche Kestrel : débit annoncé",
        "Kestrel annonce 1 400 tokens/s par GPU sur des invites courtes.",
    ),
    (
        "doc-02",
        "2026-07-08",
        "benchmark-interne",
        "Banc d'essai de juillet : Kestrel et Tamaris",
        "Le banc mesure 1 180 tokens/s pour Kestrel et 950 tokens/s pour Tamaris.",
    ),
    (
        "doc-03",
        "2026-03-01",
        "grille-tarifaire",
        "Tarifs Tamaris 2026",
        "La licence Tamaris coûte 9 000 EUR par GPU et par an.",
    ),
    ("doc-04", "2026-06-11", "compte-rendu", "Dimensionnement 2027", "La plateforme aura 12 GPU en 2027."),
    (
        "doc-05",
        "2026-04-02",
        "bulletin-securite",
        "Bulletin : faille dans Orvet 2.4",
        "Une faille d'élévation de privilèges touche Orvet 2.4.",
    ),
    (
        "doc-06",
        "2026-05-20",
        "note-de-version",
        "Orvet 2.5 corrige la faille",
        "La version 2.5 d'Orvet corrige la faille du bulletin d'avril.",
    ),
    (
        "doc-07",
        "2026-01-15",
        "note-interne",
        "Menu de la cantine",
        "Le menu de la cantine change en février.",
    ),
]

# (question, doc ids) of the scripted plan
AXES: list[tuple[str, list[str]]] = [
    ("Quels débits Kestrel et Tamaris atteignent-ils sur notre charge ?", ["doc-01", "doc-02"]),
    ("Quel est le coût des licences pour 12 GPU ?", ["doc-03", "doc-04"]),
    ("Les failles d'Orvet sont-elles corrigées ?", ["doc-05", "doc-06"]),
]

GRID_TOML = """threshold = 4
mean_min = 4.8
min_words = 30
max_words = 600
max_sentence_words = 25
forbidden_words = ["révolutionnaire"]
mandatory_mentions = []
[criteria]
clarity = "Phrases courtes et claires."
concreteness = "Des chiffres avec leur unité."
citations = "Chaque fait suivi de sa source."
tone = "Neutre et factuel."
correctness = "Orthographe irréprochable."
"""

PERFECT = {"clarity": 5, "concreteness": 5, "citations": 5, "tone": 5, "correctness": 5, "remarks": []}


def write_corpus(root: Path, docs: Sequence[tuple[str, str, str, str, str]] = DOCS) -> Path:
    """A corpus folder (request.md, docs/, grid.toml with a short word range)."""
    (root / "docs").mkdir(parents=True)
    (root / "request.md").write_text(
        '---\ntitle: "Kestrel, Tamaris ou Orvet pour 2027 ?"\nterms: [Kestrel, Tamaris, Orvet]\n'
        'mandatory_mentions: ["Kestrel"]\n---\n\nCompare Kestrel, Tamaris et Orvet : débit, coût, sécurité.\n',
        encoding="utf-8",
    )
    for doc_id, date, source_type, title, body in docs:
        (root / "docs" / f"{doc_id}.md").write_text(
            f'---\nid: {doc_id}\ndate: "{date}"\nsource_type: {source_type}\ntitle: "{title}"\n---\n\n{body}\n',
            encoding="utf-8",
        )
    (root / "grid.toml").write_text(GRID_TOML, encoding="utf-8")
    return root


def dossier_from(
    numbers: Sequence[int], axes: Sequence[str], missing_axes: Sequence[str] = (), *, extra: str = ""
) -> Dossier:
    """A structure whose rendering passes every hard check: one point per source number, spread over
    ``axes``; ``extra`` is appended to the first key point's text."""
    numbers = list(numbers) or [1]
    axes = list(axes) or ["st-1"]
    points: dict[str, list[KeyPoint]] = {axis: [] for axis in axes}
    for i, n in enumerate(numbers):
        points[axes[i % len(axes)]].append(
            KeyPoint(text=f"Kestrel et ses concurrents : constat numéro {i + 1} du dossier", citations=[n])
        )
    first = points[axes[0]]
    if first and extra:
        first[0] = KeyPoint(text=first[0].text + extra, citations=first[0].citations)
    return Dossier(
        synthesis=[
            CitedText(text="Kestrel mène sur le débit mesuré au banc d'essai", citations=numbers[:1]),
            CitedText(text="Tamaris coûte plus cher par GPU"),
            CitedText(text="Orvet a corrigé sa faille en version 2.5"),
        ],
        sections=[AxisSection(axis=axis, points=kept) for axis, kept in points.items()],
        uncertainties=[CitedText(text=axis) for axis in missing_axes]
        or [CitedText(text="Le coût du support.")],
        recommendation=[CitedText(text="Le débit mesuré favorise Kestrel", citations=numbers[:1])],
    )


def _input_dossier(data: WriterInput | ReviserInput) -> Dossier:
    numbers = [s.number for s in data.sources]
    missing = data.missing_axes if isinstance(data, WriterInput) else []
    return dossier_from(numbers, list(data.axes or {}), missing)


def responder(
    *,
    plan: Plan | None = None,
    critic: Callable[[int], dict[str, Any]] | None = None,
    analyst_fail: set[str] | None = None,
    foreign_citation: str | None = None,
) -> Callable[[ModelRequest], Any]:
    """A ScriptedModel ``function``: every role answers from its typed input (``request.input``).

    ``critic(n)`` gives the n-th evaluation (1-based); default: perfect scores.
    ``analyst_fail``: sub-task ids whose analyst raises. ``foreign_citation``: a doc id every analyst
    also cites (outside its set) to exercise the code filter.
    """
    default_plan = Plan(
        sub_tasks=[SubTask(id=f"st-{i}", question=q, doc_ids=d) for i, (q, d) in enumerate(AXES, 1)],
        excluded=["doc-07"],
    )
    critic_calls = {"n": 0}

    def answer(request: ModelRequest) -> Any:
        data: Any = request.input
        if request.role == "planner":
            return plan or default_plan
        if request.role == "analyst":
            if analyst_fail and data.subtask_id in analyst_fail:
                raise ValueError(f"scripted analyst failure for {data.subtask_id}")
            findings = [Finding(statement=f"{d.title} : {d.body}", doc_ids=[d.id]) for d in data.documents]
            if foreign_citation:
                findings.append(Finding(statement="Fait hors périmètre.", doc_ids=[foreign_citation]))
            return Findings(findings=findings, open_questions=[f"Reste à vérifier pour {data.subtask_id}."])
        if request.role in ("writer", "reviser"):
            return _input_dossier(data)
        if request.role == "critic":
            critic_calls["n"] += 1
            return json.dumps(critic(critic_calls["n"]) if critic else PERFECT)
        raise AssertionError(f"unexpected role {request.role}")

    return answer


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
