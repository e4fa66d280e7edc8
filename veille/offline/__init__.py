"""The offline engine: a deterministic, rule-based backend for every LLM role.

It is the default when no Gemini key is set, so its output is the demo and the CI baseline. It
works from ``request.payload`` (the role's ``*Input`` model, dumped), never from the prompt text,
and returns JSON valid for ``request.output_schema``. Pure CPU, no randomness, no clock: the same
request gives the same bytes. Token counts are estimates (:func:`veille.tokens.estimate_tokens`),
flagged ``estimated``; the engine costs nothing. See docs/offline-engine.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from veille.models.base import ModelRequest, RawResponse, Usage
from veille.offline.analyst import analyse, analyse_update
from veille.offline.authority import AuthorityError, AuthorityRanking, load_authority
from veille.offline.critic import criticise
from veille.offline.judge import judge
from veille.offline.planner import plan
from veille.offline.reviser import revise
from veille.offline.writer import write
from veille.roles.analyst import AnalystInput
from veille.roles.analyst_update import AnalystUpdateInput
from veille.roles.critic import CriticInput
from veille.roles.judge import JudgeInput
from veille.roles.planner import PlannerInput
from veille.roles.reviser import ReviserInput
from veille.roles.writer import WriterInput
from veille.settings import Settings
from veille.tokens import estimate_tokens

__all__ = ["AuthorityError", "OfflineModel", "OfflineRoleError"]

MODEL_ID = "offline"


class OfflineRoleError(ValueError):
    """The request cannot be served offline: unknown role or a payload that is not the role's input."""


class OfflineModel:
    """The offline backend (``Model`` protocol of :mod:`veille.models.base`)."""

    name = "offline"

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._authority: AuthorityRanking | None = None  # read on first use, not at construction
        self._roles: dict[str, Callable[[Mapping[str, Any], ModelRequest], dict[str, Any]]] = {
            "planner": self._planner,
            "analyst": self._analyst,
            "writer": self._writer,
            "critic": self._critic,
            "reviser": self._reviser,
            "judge": self._judge,
        }

    @property
    def authority(self) -> AuthorityRanking:
        if self._authority is None:
            self._authority = load_authority(self._settings.authority_file)
        return self._authority

    async def generate(self, request: ModelRequest) -> RawResponse:
        return self.respond(request)

    def respond(self, request: ModelRequest) -> RawResponse:
        """The synchronous core of :meth:`generate` (handy for benchmarks and scripts)."""
        handler = self._roles.get(request.role)
        if handler is None:
            known = ", ".join(sorted(self._roles))
            raise OfflineRoleError(f"offline engine: unknown role {request.role!r} (expected one of {known})")
        output = handler(request.payload, request)
        # Not validated here: the caller validates every backend's text the same way, so a rule
        # bug surfaces as the usual typed SchemaValidationError (tests validate each role).
        text = json.dumps(output, ensure_ascii=False)
        usage = Usage(
            input_tokens=estimate_tokens(request.system + request.prompt),
            output_tokens=estimate_tokens(text),
            estimated=True,
        )
        return RawResponse(text=text, usage=usage, model=MODEL_ID, finish_reason="STOP")

    # --- roles ----------------------------------------------------------------------------

    @staticmethod
    def _input(model: type[BaseModel], payload: Mapping[str, Any], role: str) -> Any:
        try:
            return model.model_validate(dict(payload))
        except (ValidationError, TypeError, ValueError) as exc:
            raise OfflineRoleError(
                f"offline engine: the {role} payload is not a valid {model.__name__}: {exc}"
            ) from exc

    def _planner(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        data = self._input(PlannerInput, payload, "planner")
        return plan(data, framing_types=self.authority.framing()).model_dump()

    def _analyst(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        # Both analysts share the role (its model and settings): the incremental one
        # (veille.roles.analyst_update) is the one given previous findings.
        if "previous" in payload and "known_documents" in payload:
            update = self._input(AnalystUpdateInput, payload, "analyst (incremental)")
            return analyse_update(update, self.authority).model_dump()
        data = self._input(AnalystInput, payload, "analyst")
        return analyse(data, self.authority).model_dump()

    def _writer(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        return write(self._input(WriterInput, payload, "writer")).model_dump()

    def _critic(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        data = self._input(CriticInput, payload, "critic")
        # The schema is built from the grid's criteria; score exactly the fields it declares.
        criteria = [name for name in request.output_schema.model_fields if name != "remarks"]
        return criticise(data, {name: data.criteria.get(name, "") for name in criteria})

    def _reviser(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        return revise(self._input(ReviserInput, payload, "reviser")).model_dump()

    def _judge(self, payload: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
        return judge(self._input(JudgeInput, payload, "judge")).model_dump()
