"""A backend made of plain functions, one per role (pydantic-ai's ``FunctionModel``, typed).

``FunctionModel("offline", {"planner": RoleFunction(PlannerInput, plan), ...}, version=digest)``
answers a request by calling the function registered for ``request.role`` on ``request.input``,
the role's typed input the prompt was built from: it never reads the prompt. The input must be an
instance of the registered type (a wrong or missing input is a clear :class:`FunctionRoleError`, not
a guess). The answer is dumped to JSON and validated above, by the caller, like any backend's text.

``version`` names the code behind the functions (the offline engine passes a digest of its sources
and data files): the task caches key on it, so a changed engine never serves a stale answer.
Token counts are estimates (:func:`veille.tokens.estimate_tokens`), flagged ``estimated``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from veille.models.base import ModelDefaults, ModelRequest, RawResponse, Usage
from veille.tokens import estimate_tokens

__all__ = ["FunctionModel", "FunctionRoleError", "RoleFunction"]

In = TypeVar("In", bound=BaseModel)


class FunctionRoleError(ValueError):
    """The request cannot be served: no function for its role, or its input is not the role's."""


@dataclass(frozen=True)
class RoleFunction(Generic[In]):
    """A pure function from one role's input model to its answer (a model or a JSON-able mapping)."""

    input_type: type[In]
    function: Callable[[In], BaseModel | Mapping[str, Any]]


class FunctionModel(ModelDefaults):
    """A backend (``Model`` protocol) answering each role with its :class:`RoleFunction`."""

    free = True  # code answers: no token is billed, the cost budget never refuses it

    # Its answers are code's (the offline engine): asking again gives the same bytes, and its
    # statements are document sentences, marked as quotes by its writer, so the seam does not check
    # their language (veille.models.attempts checks a model's).
    answers_by_code = True

    def __init__(self, name: str, functions: Mapping[str, RoleFunction[Any]], *, version: str = "") -> None:
        self.name = name
        self.version = version
        self.functions = dict(functions)

    async def generate(self, request: ModelRequest) -> RawResponse:
        return self.respond(request)

    def answer(self, role: str, data: BaseModel) -> BaseModel | Mapping[str, Any]:
        """The role's function applied to ``data`` (type-checked)."""
        entry = self.functions.get(role)
        if entry is None:
            known = ", ".join(sorted(self.functions))
            raise FunctionRoleError(f"{self.name}: no function for role {role!r} (expected one of {known})")
        if not isinstance(data, entry.input_type):
            got = "no input" if data is None else type(data).__name__
            raise FunctionRoleError(
                f"{self.name}: the {role} role takes a {entry.input_type.__name__}, got {got}"
            )
        return entry.function(data)

    def respond(self, request: ModelRequest) -> RawResponse:
        """The synchronous core of :meth:`generate` (benchmarks and scripts call it directly)."""
        output = self.answer(request.role, request.input)  # type: ignore[arg-type]  # None is refused there
        # Not validated here: the caller validates every backend's text the same way.
        if isinstance(output, BaseModel):
            text = output.model_dump_json()
        else:
            text = json.dumps(output, ensure_ascii=False)
        usage = Usage(
            input_tokens=estimate_tokens(request.system + request.prompt),
            output_tokens=estimate_tokens(text),
            estimated=True,
        )
        return RawResponse(text=text, usage=usage, model=self.name, finish_reason="STOP")
