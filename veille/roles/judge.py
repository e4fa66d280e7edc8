"""LLM judge (seed 002): sees the reference and all N responses together, scores each 1–5 per criterion.

The verdict's shape is built per request: one required property per response, ``r0`` … ``r{N-1}``
(:func:`verdict_schema`), each holding the four integer criteria and a justification. So the JSON
schema itself says "exactly one score per response": any answer that follows it is valid, and
nothing is checked beyond what the schema shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block
from veille.roles.limits import TEXT_CHARS

__all__ = [
    "CRITERIA_TEXT",
    "INSTRUCTIONS",
    "JUDGE",
    "JUDGE_CRITERIA",
    "CriteriaKind",
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
    justification: str = Field(max_length=TEXT_CHARS)


class JudgeVerdict(BaseModel):
    """Base of the per-request verdicts of :func:`verdict_schema` (fields ``r0`` … ``r{N-1}``)."""

    def by_response(self) -> list[JudgeScore]:
        """The scores in response order (index 0 first)."""
        return [getattr(self, response_key(i)) for i in range(len(type(self).model_fields))]


CriteriaKind = Literal["dossier", "dossier_part", "generic"]


class JudgeInput(BaseModel):
    prompt: str
    reference: str
    responses: list[str]  # in the order shown to the judge
    criteria: CriteriaKind = "generic"  # dossier criteria only for veille's own reports
    # Original index of each shown response (``responses[k]`` is the caller's ``order[k]``): the
    # shuffled order, recorded with the call's payload. Not shown to the judge.
    order: list[int] = Field(default_factory=list)


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
Pour chaque réponse, donne un entier de 1 à 5 par critère, selon les définitions jointes à la demande.
L'exactitude passe avant tout : une réponse fausse, ou qui ne répond pas (« je ne sais pas »), reçoit accuracy 1 ou 2, quels que soient son ton et sa forme ; une réponse juste formulée autrement que la référence n'est pas pénalisée pour ses mots.
Les réponses sont présentées dans un ordre tiré au hasard : leur position ne dit rien de leur qualité. N'accorde aucun point pour la longueur, l'abondance de mise en forme ou l'assurance du ton.
Justifie en une ou deux phrases."""

# Criteria definitions shown with the request: veille's dossiers (sources, contradictions), or any
# {prompt, response, reference} row of `veille grade` (seed 002: accuracy, usefulness, tone, format).
CRITERIA_TEXT: dict[str, str] = {
    "dossier": """- accuracy : les faits et chiffres concordent avec la référence ;
- usefulness : la réponse aide à décider (comparaison, chiffres, contradictions tranchées) ;
- tone : neutre et factuel ;
- format : respecte la structure demandée (sections, puces, sources citées).""",
    # One part of a dossier (veille.graders.parts): an axis's key points, or the conclusions.
    "dossier_part": """Chaque réponse est une partie d'un dossier : les points clés d'un axe, ou les conclusions (synthèse, contradictions tranchées, incertitudes, recommandation). Évalue-la sur ce qu'elle couvre, sans la pénaliser pour les parties qu'elle ne contient pas.
- accuracy : les faits et chiffres qu'elle donne concordent avec la référence ;
- usefulness : elle aide à décider sur ce qu'elle couvre (comparaison, chiffres, contradictions tranchées) ;
- tone : neutre et factuel ;
- format : puces, sources citées.""",
    "generic": """- accuracy : les faits, les chiffres et la conclusion concordent avec la référence (un autre destinataire, une autre valeur ou une autre étape est une erreur) ;
- usefulness : la réponse traite ce que la demande pose, sans manque ni détour ;
- tone : adapté à la demande, clair et sans emphase ;
- format : respecte le format que la demande impose, sinon se lit facilement.""",
}


def build_prompt(data: JudgeInput) -> str:
    """The request, the reference, then every response as a delimited data block with its id."""
    responses = "\n\n".join(
        data_block("reponse", text, id=response_key(i)) for i, text in enumerate(data.responses)
    )
    ids = ", ".join(response_key(i) for i in range(len(data.responses)))
    return (
        f"Demande :\n{data.prompt.strip()}\n\n{data_block('reference', data.reference)}\n\n"
        f"Critères (entier de 1 à 5 chacun) :\n{CRITERIA_TEXT[data.criteria]}\n\n"
        f"Réponses à évaluer ({len(data.responses)} : {ids}) :\n{responses}"
    )


JUDGE: Role[JudgeInput, JudgeVerdict] = Role(
    name="judge",
    input_type=JudgeInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda data: verdict_schema(len(data.responses)),
)
