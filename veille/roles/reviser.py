"""Reviser (seed 000): rewrites the dossier's structure following the arbiter's instructions.

It gets the structure back (not Markdown) and answers in the writer's per-request schema, so code
renders its answer exactly as it renders the writer's.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from veille.dossier import SYNTHESIS_MAX, SYNTHESIS_MIN, Dossier, dossier_schema
from veille.language import language
from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block
from veille.roles.limits import DOSSIER_ITEMS
from veille.roles.writer import SourceRef

__all__ = [
    "INSTRUCTIONS",
    "REVISER",
    "ReviserInput",
    "build_prompt",
    "output_schema",
]


class ReviserInput(BaseModel):
    draft: Dossier  # the structure the critic saw rendered
    axes: dict[str, str] = Field(default_factory=dict)  # sub-task id -> section title
    instructions: list[str]
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    forbidden_words: list[str] = Field(default_factory=list)


# --- prompt (seed 000) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es le réviseur d'un dossier de veille technique. Tu réponds en français.
Tu reçois la structure du dossier (JSON) et des consignes numérotées : applique TOUTES les consignes, sans rien changer d'autre.
{UNTRUSTED_NOTICE}
Rends la même structure : synthesis ({SYNTHESIS_MIN} à {SYNTHESIS_MAX} phrases), sections (une par axe, chaque point clé avec au moins un numéro de source),
contradictions (sujet, sources retenues, sources écartées, raison), uncertainties, recommendation.
Ne cite que les numéros de sources de la liste fournie, dans les listes citations ; ne supprime pas un fait sourcé sauf si une consigne le demande ; n'ajoute aucun fait.
Les titres, la liste des sources et le Markdown sont écrits par le code."""


def build_prompt(data: ReviserInput) -> str:
    """Instructions from the arbiter, the allowed source numbers, the axes, then the structure as data."""
    instructions = "\n".join(f"{i}. {text}" for i, text in enumerate(data.instructions, 1))
    sources = "\n".join(f"[{s.number}] {s.title} ({s.date})" for s in data.sources)
    axes = "\n".join(f"- {sid} : {title}" for sid, title in data.axes.items())
    extra = []
    if data.mandatory_mentions:
        extra.append(
            "Mentions obligatoires : " + ", ".join(f"« {m} »" for m in data.mandatory_mentions) + "."
        )
    extra.append(
        f"Longueur : {data.min_words} à {data.max_words} mots ; phrases de {data.max_sentence_words} mots au plus."
    )
    if data.forbidden_words:
        extra.append("Mots interdits : " + ", ".join(f"« {w} »" for w in data.forbidden_words) + ".")
    structure = json.dumps(data.draft.model_dump(), ensure_ascii=False, indent=1)
    return (
        f"Consignes :\n{instructions or '(aucune)'}\n\n{' '.join(extra)}\n\n"
        f"Sources disponibles :\n{sources or '(aucune)'}\n\nAxes :\n{axes or '(aucun)'}\n\n"
        f"{data_block('brouillon', structure)}"
    )


def output_schema(data: ReviserInput) -> type[BaseModel]:
    """The writer's schema for the same sources and axes."""
    # A draft without a recommendation (no choice asked) is revised without one.
    return dossier_schema((s.number for s in data.sources), data.axes, data.draft.recommendation is not None)


REVISER: Role[ReviserInput, BaseModel] = Role(
    name="reviser",
    input_type=ReviserInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=output_schema,
    # The axes' titles are the request's words; "" (not checked) when too short to tell.
    prose_language=lambda data: language(" ; ".join(data.axes.values())),
    items=DOSSIER_ITEMS,
)
