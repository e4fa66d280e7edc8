"""A role is one object: its input model, output schema, instructions and prompt builder.

Steps ask a role through the client (``client.ask(PLANNER, data)``); the client never needs to know
which role it serves beyond the name it journals. The output schema may depend on the input (the
critic's criteria, the judge's number of responses), so it is a function of the input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from pydantic import BaseModel

from veille.itempolicy import ItemPolicy

if TYPE_CHECKING:  # the roles describe calls; only the client's answer type comes from the seam
    from veille.models.base import ModelResult

__all__ = ["AskMethod", "Asker", "Role"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


@dataclass(frozen=True)
class Role(Generic[In, Out]):
    """One LLM role: what it is given, what it must answer, and how it is asked."""

    name: str  # the journal's role name, also the key of its model in Settings.roles
    input_type: type[In]
    instructions: str
    build_prompt: Callable[[In], str]
    output_schema: Callable[[In], type[Out]]
    tools: tuple[str, ...] = ()  # built-in provider tools, e.g. ("google_search",) for the researcher
    # The language the answer's prose must be written in, read from the input (``""``: not told,
    # not checked). An answer in another one is asked again once (veille.models.attempts).
    prose_language: Callable[[In], str] | None = None
    # The answer's lists whose invalid items are dropped one by one, the rest kept (None: the
    # answer validates whole). veille.models.salvage says what "usable" then means.
    items: ItemPolicy | None = None

    def schema_for(self, data: In) -> type[Out]:
        return self.output_schema(data)

    def language_for(self, data: In) -> str:
        return self.prose_language(data) if self.prose_language is not None else ""


class Asker(Protocol):
    """What steps and graders need from the model client: one way to ask a role."""

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]: ...


class AskMethod(Protocol):
    """An :meth:`Asker.ask` as a value (a bound method handed on: ``tasks.clients.RunClient.ask``)."""

    def __call__(
        self, role: Role[In, Out], data: In, *, subtask_id: str | None = None
    ) -> ModelResult[Out]: ...
