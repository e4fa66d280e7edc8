"""LLM judge (seed 002): sees the reference and all N responses together, scores each 1–5 per criterion."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field, model_validator

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
    "verdict_schema",
]

JUDGE_CRITERIA = ("accuracy", "usefulness", "tone", "format")


class JudgeScore(BaseModel):
    response_index: int = Field(ge=0, description="0-based index of the response")
    accuracy: int = Field(ge=1, le=5)
    usefulness: int = Field(ge=1, le=5)
    tone: int = Field(ge=1, le=5)
    format: int = Field(ge=1, le=5)
    justification: str


class JudgeVerdict(BaseModel):
    scores: list[JudgeScore]


class JudgeInput(BaseModel):
    prompt: str
    reference: str
    responses: list[str]


# --- prompt (seed 002) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es un évaluateur. Tu compares plusieurs réponses à une même demande, toutes ensemble, à une réponse de référence.
{UNTRUSTED_NOTICE}
Pour chaque réponse (response_index à partir de 0), donne un entier de 1 à 5 par critère :
- accuracy : les faits et chiffres concordent avec la référence ;
- usefulness : la réponse aide à décider (comparaison, chiffres, contradictions tranchées) ;
- tone : neutre et factuel ;
- format : respecte la structure demandée (sections, puces, sources citées).
Justifie en une ou deux phrases. Juge chaque réponse sur son contenu, pas sur sa position ni sa longueur."""


def build_prompt(data: JudgeInput) -> str:
    """The request, the reference, then every response as a delimited data block."""
    responses = "\n\n".join(
        data_block("reponse", text, index=str(i)) for i, text in enumerate(data.responses)
    )
    return (
        f"Demande :\n{data.prompt.strip()}\n\n{data_block('reference', data.reference)}\n\n"
        f"Réponses à évaluer ({len(data.responses)}) :\n{responses}"
    )


@lru_cache(maxsize=64)
def verdict_schema(responses: int) -> type[JudgeVerdict]:
    """:class:`JudgeVerdict` that only validates with exactly one score per index ``0..responses-1``."""

    class _Verdict(JudgeVerdict):
        @model_validator(mode="after")
        def _one_score_per_response(self) -> _Verdict:
            indices = [s.response_index for s in self.scores]
            if sorted(indices) != list(range(responses)):
                raise ValueError(
                    f"expected exactly one score for each response_index 0..{responses - 1}, got {sorted(indices)}"
                )
            return self

    _Verdict.__name__ = _Verdict.__qualname__ = "JudgeVerdict"
    return _Verdict


JUDGE: Role[JudgeInput, JudgeVerdict] = Role(
    name="judge",
    input_type=JudgeInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda data: verdict_schema(len(data.responses)),
)
