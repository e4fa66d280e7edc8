"""The review step (seed 000): critic → arbiter → reviser, bounded and stopping on a valid draft.

The loop stops as soon as the arbiter validates: the reviser is never called after a valid verdict.
It is bounded by ``max_rounds`` critic evaluations, so the reviser runs at most ``max_rounds - 1``
times and the kept draft is always one the arbiter has seen. Exhausted → the last draft is kept,
marked not validated, and an alert is raised.

The draft is the dossier's structure: the critic and the arbiter read it rendered (the grid's hard
checks run on the text the report will show), the reviser gets the structure back and answers in
the same schema; code sanitises every structure before it is rendered.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from veille import progress
from veille.alerts import Alert, alert
from veille.arbiter import Verdict, arbitrate
from veille.checkpoints import checkpoint
from veille.dossier import KEPT_NOTE, AxisSection, Dossier, KeyPoint, render_body
from veille.grid import Grid
from veille.language import request_language
from veille.models.base import ModelError
from veille.roles.base import Asker
from veille.roles.critic import CRITIC, CriticInput
from veille.roles.limits import Bounds
from veille.roles.reviser import REVISER, ReviserInput
from veille.roles.writer import SourceRef
from veille.steps.answer_items import dropped_items_alerts
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.inventory import Coverage
from veille.steps.review_scope import failing_axes
from veille.steps.sections import merge_sections
from veille.steps.verify import VerifyContext
from veille.steps.write import sanitize_dossier

__all__ = ["KEPT_NOTE", "ReviewOutcome", "RoundRecord", "review_loop"]


class RoundRecord(BaseModel):
    """One round of the review history (review.json)."""

    round: int
    scores: dict[str, int]
    mean: float
    valid: bool
    instructions: list[str]
    word_count: int
    draft: str  # the structure rendered, as the critic and the arbiter read it
    structure: Dossier
    remarks: list[str] = Field(default_factory=list)


class ReviewOutcome(BaseModel):
    validated: bool
    rounds: list[RoundRecord]
    final_dossier: Dossier
    final_draft: str  # final_dossier rendered
    alerts: list[Alert] = Field(default_factory=list)


def _critic_input(draft: str, grid: Grid, request: str, sources: Sequence[SourceRef],
                  axes: Mapping[str, str], contradictions: int) -> CriticInput:  # fmt: skip
    return CriticInput(
        draft=draft,
        criteria=dict(grid.criteria),
        request=request,
        source_count=len(sources),
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
        forbidden_words=list(grid.forbidden_words),
        mandatory_mentions=list(grid.mandatory_mentions),
        axes=list(axes.values()),
        contradictions=contradictions,
    )


def _shown_to_critic(dossier: Dossier, axes: Mapping[str, str], kept: Collection[str]) -> str:
    """The draft as the critic reads it: the kept axes' sections (validated on their night) are
    marked unchanged instead of shown again; the arbiter's hard checks read the whole draft."""
    if not kept:
        return render_body(dossier, axes)
    sections = [
        AxisSection(axis=s.axis, points=[KeyPoint(text=KEPT_NOTE)]) if s.axis in kept else s
        for s in dossier.sections
    ]
    return render_body(dossier.model_copy(update={"sections": sections}), axes)


def _evaluate(
    client: Asker, critic_input: CriticInput, number: int, alerts: list[Alert]
) -> dict[str, object]:
    try:
        answer = client.ask(CRITIC, critic_input)
        alerts += dropped_items_alerts("review", answer, f"critique (tour {number})")
        return answer.output.model_dump()
    except ModelError as exc:
        # No evaluation = every score missing = 0: the arbiter fails the grid, never passes it silently.
        alerts.append(
            alert(
                "review",
                "review.critic_failed",
                f"tour {number} : critique en échec ({type(exc).__name__}), notes comptées 0",
                severity="warning",
            )
        )
        return {}


def _revise(
    client: Asker,
    dossier: Dossier,
    instructions: list[str],
    grid: Grid,
    sources: Sequence[SourceRef],
    axes: Mapping[str, str],
    number: int,
    alerts: list[Alert],
    bounds: Bounds | None = None,
    kept: Collection[str] = (),
    language: str = "",
    context: VerifyContext | None = None,
    coverage: Coverage | None = None,
) -> Dossier | None:
    """The reviser's structure, sanitised (its changes alerted); None when the reviser failed.
    ``kept``: axes kept from a validated night or pointed at by no instruction: the reviser gets
    the other parts only, code merges."""
    kept_sections = {s.axis: s for s in dossier.sections if s.axis in kept}
    reviser_input = ReviserInput(
        draft=_without_evidence(dossier, kept),
        axes={axis: title for axis, title in axes.items() if axis not in kept},
        instructions=instructions,
        sources=list(sources),
        mandatory_mentions=list(grid.mandatory_mentions),
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
        forbidden_words=list(grid.forbidden_words),
    )
    try:
        answer = client.ask(REVISER, reviser_input)
    except ModelError as exc:
        alerts.append(
            alert(
                "review",
                "review.reviser_failed",
                f"tour {number} : réviseur en échec ({type(exc).__name__}), brouillon conservé",
                severity="warning",
            )
        )
        return None
    alerts += foreign_answer_alerts("review", answer, f"réviseur (tour {number})")
    alerts += dropped_items_alerts("review", answer, f"réviseur (tour {number})")
    revised = Dossier.model_validate(answer.output.model_dump())
    if dossier.recommendation is None:  # no choice asked: the revision has no recommendation either
        revised = revised.model_copy(update={"recommendation": None})
    clean, changed = sanitize_dossier(
        merge_sections(revised, kept_sections, axes) if kept_sections else revised,
        sources,
        list(axes),
        stage="review",
        bounds=bounds,
        max_words=grid.max_words,
        language=language,
        context=context,
        coverage=coverage,
    )
    alerts += changed
    return clean


def _without_evidence(dossier: Dossier, kept: Collection[str]) -> Dossier:
    """What the reviser revises: the axes not kept, without the evidence code located (code's
    data, located again on whatever the reviser returns; no model reads or writes it)."""
    sections = [
        AxisSection(axis=s.axis, points=[p.model_copy(update={"evidence": []}) for p in s.points])
        for s in dossier.sections
        if s.axis not in kept
    ]
    ledger = [e.model_copy(update={"evidence": []}) for e in dossier.contradictions]
    return dossier.model_copy(update={"sections": sections, "contradictions": ledger})


def _round_record(
    number: int, verdict: Verdict, rendered: str, dossier: Dossier, evaluation: Mapping[str, Any]
) -> RoundRecord:
    remarks = evaluation.get("remarks", [])
    return RoundRecord(
        round=number,
        scores=verdict.scores,
        mean=round(verdict.mean, 3),
        valid=verdict.valid,
        instructions=verdict.instructions,
        word_count=verdict.word_count,
        draft=rendered,
        structure=dossier,
        remarks=[str(r) for r in remarks] if isinstance(remarks, list) else [],
    )


def review_loop(
    client: Asker,
    draft: Dossier,
    *,
    grid: Grid,
    sources: Sequence[SourceRef],
    request: str,
    max_rounds: int,
    axes: Mapping[str, str],
    contradictions: int = 0,
    bounds: Bounds | None = None,
    kept: Collection[str] = (),
    context: VerifyContext | None = None,
    coverage: Coverage | None = None,
) -> ReviewOutcome:
    """critic → arbiter → (reviser) until valid or ``max_rounds`` evaluations.

    ``axes``: sub-task id -> section title (the sections the dossier must have); ``contradictions``:
    how many the analysts noted (the critic expects a ledger entry for them); ``bounds``: code's
    bounds on every structure (the writer's, from Settings); ``kept``: axes whose section was kept
    from a validated night (the critic and the reviser get the other parts); ``context``: the cited
    documents' texts, against which the draft and each revision are verified (veille.steps.verify)."""
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    rounds: list[RoundRecord] = []
    # The request's language: foreign sentences of a revision marked as quotations, and a hard
    # criterion of the arbiter (a dossier whose prose is in another language is never validated).
    language = request_language(request)
    dossier, alerts = sanitize_dossier(  # no alert when the write step's already sanitised it
        draft, sources, list(axes), stage="review", bounds=bounds, max_words=grid.max_words, language=language,
        context=context, coverage=coverage,
    )  # fmt: skip
    for number in range(1, max_rounds + 1):
        progress.report("review", number - 1, max_rounds, f"tour {number} : critique")
        rendered = render_body(dossier, axes)
        shown = _shown_to_critic(dossier, axes, kept)
        evaluation = _evaluate(
            client, _critic_input(shown, grid, request, sources, axes, contradictions), number, alerts
        )
        checkpoint("review")  # observers (crash tests): a critic round evaluated
        verdict = arbitrate(evaluation, rendered, grid, sources, language)
        rounds.append(_round_record(number, verdict, rendered, dossier, evaluation))
        if verdict.valid or number == max_rounds:
            break
        progress.report("review", number - 1, max_rounds, f"tour {number} : révision")
        # The reviser gets the sections the instructions point at (all it would get when one
        # concerns the dossier as a whole); the others are merged back unchanged (review_scope).
        failing = failing_axes(dossier, axes, verdict, grid, language, kept)
        held = set(kept) if failing is None else set(kept) | (set(axes) - failing)
        revised = _revise(
            client, dossier, verdict.instructions, grid, sources, axes, number, alerts, bounds, held, language,
            context, coverage,
        )  # fmt: skip
        if revised is None:
            break
        dossier = revised
    progress.report("review", len(rounds), len(rounds), "validé" if rounds[-1].valid else "non validé")
    validated = rounds[-1].valid
    if not validated:
        alerts.append(
            alert(
                "review",
                "review.not_validated",
                f"grille non satisfaite après {len(rounds)} tour(s) : rapport conservé, non validé "
                f"({len(rounds[-1].instructions)} consigne(s) restantes)",
                severity="warning",
            )
        )
    final = rounds[-1].structure
    return ReviewOutcome(
        validated=validated, rounds=rounds, final_dossier=final, final_draft=rounds[-1].draft, alerts=alerts
    )
