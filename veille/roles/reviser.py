"""Reviser (seed 000): rewrites the draft following the arbiter's instructions."""

from __future__ import annotations

from pydantic import BaseModel, Field

from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block
from veille.roles.writer import Draft, SourceRef

__all__ = [
    "INSTRUCTIONS",
    "REVISER",
    "ReviserInput",
    "build_prompt",
]


class ReviserInput(BaseModel):
    draft: str
    instructions: list[str]
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    forbidden_words: list[str] = Field(default_factory=list)
    invalid_citations: list[int] = Field(default_factory=list)  # orphan numbers to remove


# --- prompt (seed 000) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es le réviseur d'un dossier de veille technique. Tu réponds en français.
Tu reçois un brouillon et des consignes numérotées : applique TOUTES les consignes, sans rien changer d'autre.
{UNTRUSTED_NOTICE}
Garde exactement les sections ## Synthèse (3 phrases), ## Points clés (puces finissant par leurs numéros de sources) et ## Ce qui reste incertain.
Ne cite que les numéros de sources de la liste fournie ; ne supprime pas un fait sourcé sauf si une consigne le demande ; n'ajoute aucun fait.
N'écris ni titre ni section Sources."""


def build_prompt(data: ReviserInput) -> str:
    """Instructions from the arbiter, the allowed source numbers, then the draft as data."""
    instructions = "\n".join(f"{i}. {text}" for i, text in enumerate(data.instructions, 1))
    sources = "\n".join(f"[{s.number}] {s.title} ({s.date})" for s in data.sources)
    extra = []
    if data.invalid_citations:
        extra.append(
            "Numéros orphelins à retirer : " + ", ".join(f"[{n}]" for n in data.invalid_citations) + "."
        )
    if data.mandatory_mentions:
        extra.append(
            "Mentions obligatoires : " + ", ".join(f"« {m} »" for m in data.mandatory_mentions) + "."
        )
    extra.append(
        f"Longueur : {data.min_words} à {data.max_words} mots ; phrases de {data.max_sentence_words} mots au plus."
    )
    if data.forbidden_words:
        extra.append("Mots interdits : " + ", ".join(f"« {w} »" for w in data.forbidden_words) + ".")
    return (
        f"Consignes :\n{instructions or '(aucune)'}\n\n{' '.join(extra)}\n\n"
        f"Sources disponibles :\n{sources or '(aucune)'}\n\n{data_block('brouillon', data.draft)}"
    )


REVISER: Role[ReviserInput, Draft] = Role(
    name="reviser",
    input_type=ReviserInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda _data: Draft,
)
