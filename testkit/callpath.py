"""The model call path, measured: veille's own functions on the stack from a role's entry to the
provider's ``generate`` (issue 38 item 5: at most five).

A :class:`StackRecordingModel` is a provider whose ``generate`` looks at the stacks when it is
called: its own thread's (the client's event-loop thread: the coroutines awaiting it) and the
caller's thread's, which is blocked in the client's ``ask`` waiting for the answer. The frames of
``veille`` modules, outermost first, caller's then loop's, are the chain; nothing else counts
(Prefect's task engine, asyncio, the standard library, this module). The role is a real
:class:`~veille.roles.base.Role`; what it asks is tiny, because the path does not depend on it.

``measure(entry)`` makes one role call through the handle a step is given for its roles: ``"run"``
is the run's client (``open_client``: planner, analysts, researcher), ``"cached"`` the asker whose
answers the Prefect task cache keeps (``Reuse.asker``: writer, critic, reviser, judge; it needs a
Prefect API, as a flow does). ``bench/call_path.py`` prints the chains; ``tests/test_call_path.py``
bounds them.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Literal

from pydantic import BaseModel

import veille
from testkit.scripted import as_provider
from veille.models.base import ModelDefaults, ModelRequest, RawResponse, Usage
from veille.roles.base import Role

__all__ = ["CallPath", "StackRecordingModel", "measure"]

_VEILLE_DIR = str(Path(veille.__file__).resolve().parent)
_DATATASK = str(Path(_VEILLE_DIR) / "tasks" / "datatask.py")

Entry = Literal["run", "cached"]


class Question(BaseModel):
    text: str


class Verdict(BaseModel):
    verdict: str


# A real Role object with a tiny input: the seam treats every role alike below the entry.
QUESTION: Role[Question, Verdict] = Role(
    name="critic",
    input_type=Question,
    instructions="Réponds par un verdict.",
    build_prompt=lambda data: data.text,
    output_schema=lambda data: Verdict,
)


@dataclass(frozen=True)
class CallPath:
    """The veille functions from the role's entry (first) to the last one before ``generate``;
    ``hop`` is the index of the first one running on the client's loop thread."""

    functions: tuple[str, ...]
    hop: int

    @property
    def count(self) -> int:
        return len(self.functions)

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(name.split(":")[0] for name in self.functions)

    def render(self) -> str:
        lines = []
        for index, name in enumerate(self.functions):
            if index == self.hop and index:
                lines.append("   ~ thread hop to the client's event loop ~")
            lines.append(f"{index + 1:>2}. {name}")
        lines.append(
            f"  → provider.generate ({self.count} veille functions in {len(set(self.modules))} files)"
        )
        return "\n".join(lines)


def _veille_frames(frame: FrameType | None, *, coroutines_only: bool = False) -> list[str]:
    """``module:qualname`` of the veille frames of a stack, innermost first. ``coroutines_only``:
    stop at the event loop (the awaiting coroutines are the path; what runs the loop thread is not
    called by the role)."""
    names: list[str] = []
    while frame is not None:
        code = frame.f_code
        if coroutines_only and frame.f_globals.get("__name__", "").startswith("asyncio."):
            break
        # veille.tasks.datatask is Prefect's Task.__call__ with the arguments marked as data, part
        # of "the Prefect ask task" like Prefect's own frames (not counted): no step of the path.
        where = str(Path(code.co_filename).resolve())
        if where.startswith(_VEILLE_DIR) and where != _DATATASK:
            names.append(f"{frame.f_globals.get('__name__', '?')}:{code.co_qualname}")
        frame = frame.f_back
    return names


def _waiting_caller(here: int) -> list[str] | None:
    """The veille frames (innermost first) of the thread blocked in ``Future.result`` with veille
    functions on its stack, if one is."""
    for ident, frame in sys._current_frames().items():
        if ident == here:
            continue
        cursor: FrameType | None = frame
        while cursor is not None:
            module = cursor.f_globals.get("__name__", "")
            if module == "concurrent.futures._base" and cursor.f_code.co_name == "result":
                names = _veille_frames(frame)
                return names or None
            cursor = cursor.f_back
    return None


_WAITS = 1000  # polls of 10 ms at most for the caller to reach its wait (it takes microseconds)


class StackRecordingModel(ModelDefaults):
    """A provider that records the call path of every request and answers ``{"verdict": "ok"}``."""

    name = "stack-recorder"
    free = True

    def __init__(self) -> None:
        self.paths: list[CallPath] = []

    async def generate(self, request: ModelRequest) -> RawResponse:
        here = threading.get_ident()
        own = _veille_frames(sys._getframe(1), coroutines_only=True)
        # The thread that asked waits for this answer in a Future's ``result``; until it gets
        # there its stack is still moving, so it is read once it waits (a wait, not a timing).
        for _ in range(_WAITS):
            caller = _waiting_caller(here)
            if caller is not None:
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("no thread waits for this answer: the call path cannot be read")
        chain = (*reversed(caller), *reversed(own))
        self.paths.append(CallPath(chain, len(caller)))
        text = Verdict(verdict="ok").model_dump_json()
        return RawResponse(text=text, usage=Usage(), model=request.model, finish_reason="STOP")


def measure(entry: Entry = "run") -> CallPath:
    """One role call through ``entry``'s handle on a :class:`StackRecordingModel`; its path."""
    from veille.settings import Settings
    from veille.tasks.clients import open_client
    from veille.tasks.reuse import Reuse

    model = StackRecordingModel()
    with tempfile.TemporaryDirectory() as tmp, as_provider(model) as name:
        settings = Settings(backend=name, warehouse_dir=Path(tmp), use_cache=False)
        with open_client(settings, "call-path", Path(tmp) / "calls.jsonl") as client:
            if entry == "run":
                client.ask(QUESTION, Question(text="Une question."))
            else:
                asker = Reuse.of(settings, uuid.uuid4().hex, 1, None).asker(client)
                asker.ask(QUESTION, Question(text="Une question."))
    (path,) = model.paths
    return path
