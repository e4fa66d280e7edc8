"""LLM judge (seed 002): sees the reference and all N responses together, scores each 1–5 per criterion.

The verdict's shape is built per request: one required property per response, ``r0`` … ``r{N-1}``
(:func:`verdict_schema`), each holding the four integer criteria and a justification. So the JSON
schema itself says "exactly one score per response": any answer that follows it is valid, and
nothing is checked beyond what the schema shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block

__all__ = [
    "INSTRUCTIONS",
    "JUDGE",
    "JUDGE_CRITERIA",
    "JudgeInput",
    "JudgeScore",
    "JudgeVerdict",
    "build_prompt",
    "make_verdict",
    "response_key",
    "verdict_schema",
]

JUDGE_CRITERIA = ("accuracy", "usefulness", "tone", "format")


class JudgeScore(BaseModel):
    accuracy: int = Field(ge=1, le=5, description="Facts and figures agree with the reference")
    usefulness: int = Field(ge=1, le=5, description="Helps decide: comparison, figures, contradictions")
    tone: int = Field(ge=1, le=5, description="Neutral and factual")
    format: int = Field(ge=1, le=5, description="Follows the requested structure")
    justification: str


class JudgeVerdict(BaseModel):
    """Base of the per-request verdicts of :func:`verdict_schema` (fields ``r0`` … ``r{N-1}``)."""

    def by_response(self) -> list[JudgeScore]:
        """The scores in response order (index 0 first)."""
        return [getattr(self, response_key(i)) for i in range(len(type(self).model_fields))]


class JudgeInput(BaseModel):
    prompt: str
    reference: str
    responses: list[str]


def response_key(index: int) -> str:
    """The verdict's property for the response at ``index`` (0-based): ``r0``, ``r1``, …"""
    return f"r{index}"


@lru_cache(maxsize=64)
def verdict_schema(responses: int) -> type[JudgeVerdict]:
    """A verdict with exactly one required :class:`JudgeScore` per response, ``r0`` … ``r{N-1}``."""
    fields: dict[str, Any] = {
        response_key(i): (JudgeScore, Field(description=f"Scores of response {response_key(i)}"))
        for i in range(responses)
    }
    return create_model("JudgeVerdict", __base__=JudgeVerdict, **fields)


def make_verdict(scores: Sequence[JudgeScore]) -> JudgeVerdict:
    """The verdict for ``len(scores)`` responses, score ``i`` for response ``i``."""
    return verdict_schema(len(scores))(**{response_key(i): s for i, s in enumerate(scores)})


# --- prompt (seed 002) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es un évaluateur. Tu compares plusieurs réponses à une même demande, toutes ensemble, à une réponse de référence.
{UNTRUSTED_NOTICE}
Réponds avec une propriété par réponse, nommée par l'identifiant de la réponse (r0, r1, …), sans en oublier.
Pour chaque réponse, donne un entier de 1 à 5 par critère :
- accuracy : les faits et chiffres concordent avec la référence ;
- usefulness : la réponse aide à décider (comparaison, chiffres, contradictions tranchées) ;
- tone : neutre et factuel ;
- format : respecte la structure demandée (sections, puces, sources citées).
Justifie en une ou deux phrases. Juge chaque réponse sur son contenu, pas sur sa position ni sa longueur."""


def build_prompt(data: JudgeInput) -> str:
    """The request, the reference, then every response as a delimited data block with its id."""
    responses = "\n\n".join(
        data_block("reponse", text, id=response_key(i)) for i, text in enumerate(data.responses)
    )
    ids = ", ".join(response_key(i) for i in range(len(data.responses)))
    return (
        f"Demande :\n{data.prompt.strip()}\n\n{data_block('reference', data.reference)}\n\n"
        f"Réponses à évaluer ({len(data.responses)} : {ids}) :\n{responses}"
    )


JUDGE: Role[JudgeInput, JudgeVerdict] = Role(
    name="judge",
    input_type=JudgeInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda data: verdict_schema(len(data.responses)),
)
