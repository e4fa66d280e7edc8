"""The offline engine: deterministic, rule-based answers for every LLM role, as pure functions.

Each role is one function from the role's input model (``veille.roles.*``) to its output: the
engine never reads prompts, never calls a network and has no clock or randomness, so the same input
gives the same bytes. :func:`role_functions` is the whole interface; the seam's function backend
(:class:`veille.models.function.FunctionModel`, built by :mod:`veille.backends`) serves it to the
model client like any model. :func:`engine_version` names the code and data behind the answers, for
cache keys. See docs/offline-engine.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from veille.fingerprint import code_digest
from veille.offline.analyst import analyse, analyse_update
from veille.offline.authority import AuthorityError, AuthorityRanking, load_authority
from veille.offline.critic import criticise
from veille.offline.judge import judge
from veille.offline.planner import plan
from veille.offline.reviser import revise
from veille.offline.writer import write
from veille.resources import data_dir
from veille.roles.analyst import AnalystInput, Findings
from veille.roles.analyst_update import AnalystUpdateInput, FindingsUpdate
from veille.roles.critic import CriticInput
from veille.roles.judge import JudgeInput
from veille.roles.planner import Plan, PlannerInput
from veille.roles.reviser import ReviserInput
from veille.roles.writer import WriterInput

__all__ = ["ENGINE_NAME", "AuthorityError", "RoleFunctions", "engine_version", "role_functions"]

ENGINE_NAME = "offline"

# role name -> (the role's input model, the pure function answering it)
RoleFunctions = dict[str, tuple[type[BaseModel], Callable[[Any], Any]]]


class _Authority:
    """The authority ranking, read on first use (building the engine reads no file)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._ranking: AuthorityRanking | None = None

    def get(self) -> AuthorityRanking:
        if self._ranking is None:
            self._ranking = load_authority(self._path)
        return self._ranking


def role_functions(authority_file: Path) -> RoleFunctions:
    """One pure function per role; ``authority_file`` ranks source types (read on first use)."""
    authority = _Authority(authority_file)

    def planner(data: PlannerInput) -> Plan:
        return plan(data, framing_types=authority.get().framing(), bodies=data.texts)

    def analyst(data: AnalystInput) -> Findings:
        return analyse(data, authority.get())

    def analyst_incremental(data: AnalystUpdateInput) -> FindingsUpdate:
        return analyse_update(data, authority.get())

    return {
        "planner": (PlannerInput, planner),
        "analyst": (AnalystInput, analyst),
        "analyst_update": (AnalystUpdateInput, analyst_incremental),
        "writer": (WriterInput, write),
        "critic": (CriticInput, criticise),  # one score per criterion of the input's grid
        "reviser": (ReviserInput, revise),
        "judge": (JudgeInput, judge),
    }


def engine_version(authority_file: Path) -> str:
    """Digest of the engine's code (this package and every ``veille`` module it imports), the
    bundled data files and ``authority_file``: any edit gives another version (cached per process)."""
    bundled = tuple(sorted(p for p in data_dir().rglob("*") if p.is_file()))
    return code_digest((__name__,), (*bundled, authority_file))
