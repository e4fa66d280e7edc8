"""Critic (seed 000): scores the draft on the grid; integer scores 1–5, schema-validated."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from veille.roles.base import Role
from veille.roles.delimit import UNTRUSTED_NOTICE, data_block
from veille.roles.limits import CRITIC_ITEMS, ITEMS, REASON_CHARS

__all__ = ["CRITIC", "INSTRUCTIONS", "CriticInput", "build_prompt", "evaluation_schema"]


def evaluation_schema(criteria: Mapping[str, str]) -> type[BaseModel]:
    """Build the critic's output schema from the grid: one ``int`` in [1, 5] per criterion + remarks.

    One class per grid (criteria in their order), as the judge's is: every review round asked the
    same grid and built the same pydantic class again, which costs far more than the answer."""
    return _evaluation_schema(tuple(criteria.items()))


@lru_cache(maxsize=64)
def _evaluation_schema(criteria: tuple[tuple[str, str], ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        name: (int, Field(ge=1, le=5, description=definition)) for name, definition in criteria
    }
    fields["remarks"] = (
        list[Annotated[str, Field(max_length=REASON_CHARS)]],
        Field(
            default_factory=list,
            max_length=ITEMS,
            description="Precise, actionable corrections, one per problem",
        ),
    )
    return create_model("Evaluation", **fields)


class CriticInput(BaseModel):
    draft: str
    criteria: dict[str, str]  # name -> definition, from the grid
    request: str
    source_count: int
    # The grid's measurable rules, stated in the prompt (« Règles mesurables »).
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    forbidden_words: list[str] = Field(default_factory=list)
    mandatory_mentions: list[str] = Field(default_factory=list)
    # The structure the dossier must show: one "###" section per axis (these titles), a ledger
    # entry per contradiction the analysts noted, a recommendation.
    axes: list[str] = Field(default_factory=list)
    contradictions: int = 0


# --- prompt (seed 000) --------------------------------------------------------------------------

INSTRUCTIONS = f"""Tu es le critique d'un dossier de veille technique. Tu réponds en français.
Tu notes le brouillon sur chaque critère de la grille, par un entier de 1 à 5 (5 = irréprochable ; 4 = seuil d'acceptation).
{UNTRUSTED_NOTICE}
Donne aussi des remarques : des corrections précises et actionnables, une par problème, qui citent le passage concerné.
Ne réécris pas le texte. Note chaque critère, sans en oublier."""


def build_prompt(data: CriticInput) -> str:
    """Grid (criteria with definitions and measurable rules), request, then the draft as data."""
    criteria = "\n".join(f"- {name} : {definition}" for name, definition in data.criteria.items())
    rules = [
        f"longueur de {data.min_words} à {data.max_words} mots",
        f"phrases de {data.max_sentence_words} mots au plus",
        f"{data.source_count} sources numérotées de 1 à {data.source_count}",
    ]
    if data.forbidden_words:
        rules.append("mots interdits : " + ", ".join(f"« {w} »" for w in data.forbidden_words))
    if data.mandatory_mentions:
        rules.append("mentions obligatoires : " + ", ".join(f"« {m} »" for m in data.mandatory_mentions))
    if data.axes:
        rules.append("une section par axe : " + ", ".join(f"« {a} »" for a in data.axes))
    if data.contradictions:
        rules.append(f"{data.contradictions} contradiction(s) relevée(s) par les analystes, à trancher")
    return (
        f"Grille :\n{criteria}\n\nRègles mesurables : {' ; '.join(rules)}.\n\n"
        f"Demande à laquelle le dossier répond : {data.request.strip()}\n\n"
        f"{data_block('brouillon', data.draft)}"
    )


CRITIC: Role[CriticInput, BaseModel] = Role(
    name="critic",
    input_type=CriticInput,
    instructions=INSTRUCTIONS,
    build_prompt=build_prompt,
    output_schema=lambda data: evaluation_schema(data.criteria),
    items=CRITIC_ITEMS,
)
