"""The review step (seed 000): critic → arbiter → reviser, bounded and stopping on a valid draft.

The loop stops as soon as the arbiter validates: the reviser is never called after a valid verdict.
It is bounded by ``max_rounds`` critic evaluations, so the reviser runs at most ``max_rounds - 1``
times and the kept draft is always one the arbiter has seen. Exhausted → the last draft is kept,
marked not validated, and an alert is raised.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.arbiter import arbitrate
from veille.citations import invalid_citations, normalize_citations
from veille.grid import Grid
from veille.models.base import ModelError
from veille.roles.base import Asker
from veille.roles.critic import CRITIC, CriticInput
from veille.roles.reviser import REVISER, ReviserInput
from veille.roles.writer import SourceRef
from veille.run.killpoints import kill_point
from veille.steps.write import strip_title

__all__ = ["ReviewOutcome", "RoundRecord", "review_loop"]


class RoundRecord(BaseModel):
    """One round of the review history (review.json)."""

    round: int
    scores: dict[str, int]
    mean: float
    valid: bool
    instructions: list[str]
    word_count: int
    draft: str
    remarks: list[str] = Field(default_factory=list)


class ReviewOutcome(BaseModel):
    validated: bool
    rounds: list[RoundRecord]
    final_draft: str
    alerts: list[Alert] = Field(default_factory=list)


def review_loop(
    client: Asker,
    draft: str,
    *,
    grid: Grid,
    sources: Sequence[SourceRef],
    request: str,
    max_rounds: int,
) -> ReviewOutcome:
    """critic → arbiter → (reviser) until valid or ``max_rounds`` evaluations."""
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    rounds: list[RoundRecord] = []
    alerts: list[Alert] = []
    for number in range(1, max_rounds + 1):
        critic_input = CriticInput(
            draft=draft,
            criteria=dict(grid.criteria),
            request=request,
            source_count=len(sources),
            min_words=grid.min_words,
            max_words=grid.max_words,
            max_sentence_words=grid.max_sentence_words,
            forbidden_words=list(grid.forbidden_words),
            mandatory_mentions=list(grid.mandatory_mentions),
        )
        try:
            evaluation = client.ask(CRITIC, critic_input).output.model_dump()
        except ModelError as exc:
            # No evaluation = every score missing = 0: the arbiter fails the grid, never passes it silently.
            alerts.append(
                Alert(
                    code="review.critic_failed",
                    severity="warning",
                    stage="review",
                    message=f"tour {number} : critique en échec ({type(exc).__name__}), notes comptées 0",
                )
            )
            evaluation = {}
        kill_point("review")  # crash tests: a critic round evaluated
        verdict = arbitrate(evaluation, draft, grid, sources)
        rounds.append(
            RoundRecord(
                round=number,
                scores=verdict.scores,
                mean=round(verdict.mean, 3),
                valid=verdict.valid,
                instructions=verdict.instructions,
                word_count=verdict.word_count,
                draft=draft,
                remarks=[str(r) for r in evaluation.get("remarks", [])],
            )
        )
        if verdict.valid or number == max_rounds:
            break
        reviser_input = ReviserInput(
            draft=draft,
            instructions=verdict.instructions,
            sources=list(sources),
            mandatory_mentions=list(grid.mandatory_mentions),
            min_words=grid.min_words,
            max_words=grid.max_words,
            max_sentence_words=grid.max_sentence_words,
            forbidden_words=list(grid.forbidden_words),
            invalid_citations=invalid_citations(draft, sources),
        )
        try:
            revised = client.ask(REVISER, reviser_input).output
        except ModelError as exc:
            alerts.append(
                Alert(
                    code="review.reviser_failed",
                    severity="warning",
                    stage="review",
                    message=f"tour {number} : réviseur en échec ({type(exc).__name__}), brouillon conservé",
                )
            )
            break
        draft = normalize_citations(strip_title(revised.markdown))
    validated = rounds[-1].valid
    if not validated:
        alerts.append(
            Alert(
                code="review.not_validated",
                severity="warning",
                stage="review",
                message=f"grille non satisfaite après {len(rounds)} tour(s) : rapport conservé, non validé "
                f"({len(rounds[-1].instructions)} consigne(s) restantes)",
            )
        )
    return ReviewOutcome(validated=validated, rounds=rounds, final_draft=draft, alerts=alerts)
