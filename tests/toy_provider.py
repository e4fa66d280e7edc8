"""A toy provider: the whole of what adding one takes, with its registry line in
tests/test_providers.py (docs/models.md « Add a provider » shows the same)."""

from __future__ import annotations

from veille.models.base import ModelDefaults, ModelError, ModelRequest, RawResponse, Usage
from veille.settings import Settings


class ToyModel(ModelDefaults):
    """Answers every request with the same JSON; a role it does not know is the seam's error."""

    name = "toy"
    free = True  # nothing is billed: never budgeted, never priced

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def generate(self, request: ModelRequest) -> RawResponse:
        if request.role not in self.settings.roles:
            raise ModelError(f"toy: no answer for role {request.role!r}")
        text = '{"verdict": "jouet", "score": 4}'
        return RawResponse(text=text, usage=Usage(input_tokens=len(request.prompt), output_tokens=len(text)),
                           model=request.model or "toy-1", finish_reason="STOP")  # fmt: skip
