"""The offline engine: deterministic, rule-based answers for every LLM role, as pure functions
(no prompt, network, clock or randomness: the same input gives the same bytes). See docs/offline-engine.md.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from veille.fingerprint import code_digest
from veille.resources import data_dir
from veille.roles.analyst import AnalystInput
from veille.roles.analyst_update import AnalystUpdateInput
from veille.roles.critic import CriticInput
from veille.roles.judge import JudgeInput
from veille.roles.planner import PlannerInput
from veille.roles.reviser import ReviserInput
from veille.roles.writer import WriterInput

if TYPE_CHECKING:
    from veille.offline.authority import AuthorityError

__all__ = [
    "ENGINE_NAME",
    "ROLE_INPUTS",
    "AuthorityError",
    "RoleFunctions",
    "engine_version",
    "role_functions",
]

ENGINE_NAME = "offline"

# role name -> (the role's input model, the pure function answering it)
RoleFunctions = dict[str, tuple[type[BaseModel], Callable[[Any], Any]]]

# role name -> the role's input model: what the engine answers, known without loading its rules.
ROLE_INPUTS: dict[str, type[BaseModel]] = {
    "planner": PlannerInput,
    "analyst": AnalystInput,
    "analyst_update": AnalystUpdateInput,
    "writer": WriterInput,
    "critic": CriticInput,
    "reviser": ReviserInput,
    "judge": JudgeInput,
}


def role_functions(authority_file: Path) -> RoleFunctions:
    """One pure function per role; ``authority_file`` ranks source types (read on first use, so
    building the engine reads no file)."""
    # The role functions are imported here, not with the package: a night that asks no role (an
    # unchanged night, veille.run.nightskip) builds its client without loading the engine's rules.
    # Imports in a function body still count in engine_version's digest (veille.source_imports).
    from veille.offline.analyst import analyse, analyse_update
    from veille.offline.authority import load_authority
    from veille.offline.critic import criticise
    from veille.offline.judge import judge
    from veille.offline.planner import plan
    from veille.offline.reviser import revise
    from veille.offline.writer import write

    authority = cache(partial(load_authority, authority_file))
    answers: dict[str, Callable[[Any], Any]] = {
        "planner": lambda d: plan(d, framing_types=authority().framing(), bodies=d.texts),
        "analyst": lambda d: analyse(d, authority()),
        "analyst_update": lambda d: analyse_update(d, authority()),
        "writer": write,
        "critic": criticise,  # one score per criterion of the input's grid
        "reviser": revise,
        "judge": judge,
    }
    return {role: (ROLE_INPUTS[role], answer) for role, answer in answers.items()}


def __getattr__(name: str) -> Any:
    """``AuthorityError`` on first use: the authority module reads the engine's text rules, which a
    night that asks no role never loads."""
    if name == "AuthorityError":
        from veille.offline.authority import AuthorityError

        return AuthorityError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def engine_version(authority_file: Path) -> str:
    """Digest of the engine's code (this package and every ``veille`` module it imports), the
    bundled data files and ``authority_file``: any edit gives another version (cached per process)."""
    bundled = tuple(sorted(p for p in data_dir().rglob("*") if p.is_file()))
    return code_digest((__name__,), (*bundled, authority_file))
