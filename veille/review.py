"""Writing and the review loop (seeds 000 and 004): writer, then critic → arbiter → reviser.

The loop stops as soon as the arbiter validates: the reviser is never called after a valid verdict.
It is bounded by ``max_rounds`` critic evaluations, so the reviser runs at most ``max_rounds - 1``
times and the kept draft is always one the arbiter has seen. Exhausted → the last draft is kept,
marked not validated, and an alert is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.analysis import Analysis, ModelClientLike, number_findings
from veille.arbiter import arbitrate
from veille.citations import invalid_citations, normalize_citations
from veille.corpus import Request
from veille.grid import Grid
from veille.killpoints import kill_point
from veille.models.base import ModelError
from veille.report import strip_title
from veille.roles import critic as critic_role
from veille.roles import reviser as reviser_role
from veille.roles import writer as writer_role
from veille.roles.critic import CriticInput, evaluation_schema
from veille.roles.reviser import ReviserInput
from veille.roles.writer import Draft, SourceRef, WriterInput
from veille.sourcemeta import source_metadata

__all__ = [
    "ReviewOutcome",
    "RoundRecord",
    "WrittenDraft",
    "review_loop",
    "write_draft",
    "write_sourced_draft",
]


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


def write_draft(client: ModelClientLike, data: WriterInput) -> tuple[str, list[Alert]]:
    """The writer's Markdown (title stripped, citation lists normalised) and orphan alerts."""
    result = client.call(
        "writer", writer_role.INSTRUCTIONS, writer_role.build_prompt(data), Draft, payload=data
    )
    draft = normalize_citations(strip_title(result.output.markdown))
    alerts = []
    orphans = invalid_citations(draft, data.sources)
    if orphans:
        alerts.append(
            Alert(
                code="report.orphan_citation",
                severity="warning",
                stage="report",
                message=f"le rédacteur cite des numéros sans source {orphans} : consigne donnée au réviseur",
            )
        )
    return draft, alerts


class WrittenDraft(BaseModel):
    draft: str
    sources: list[SourceRef]
    writer_input: WriterInput
    alerts: list[Alert] = Field(default_factory=list)


def write_sourced_draft(
    client: ModelClientLike, analyses: Sequence[Analysis], request: Request, grid: Grid, db_path: Path
) -> WrittenDraft:
    """Number the cited sources (code, in order of first citation across branches), then have the
    writer turn the numbered findings into the draft: the model sees numbers, never document ids."""
    cited = [i for a in analyses for f in a.findings.findings for i in f.doc_ids]
    cited += [i for a in analyses for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)]
    metadata = source_metadata(db_path, cited)
    data, sources = number_findings(
        analyses,
        metadata,
        request_title=request.title,
        request=request.text,
        mandatory_mentions=grid.mandatory_mentions,
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
    )
    draft, alerts = write_draft(client, data)
    return WrittenDraft(draft=draft, sources=sources, writer_input=data, alerts=alerts)


def review_loop(
    client: ModelClientLike,
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
    schema = evaluation_schema(grid.criteria)
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
            evaluation = client.call(
                "critic",
                critic_role.INSTRUCTIONS,
                critic_role.build_prompt(critic_input),
                schema,
                payload=critic_input,
            ).output.model_dump()
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
            revised = client.call(
                "reviser",
                reviser_role.INSTRUCTIONS,
                reviser_role.build_prompt(reviser_input),
                Draft,
                payload=reviser_input,
            ).output
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
