"""The provider registry: a provider is one module and one registry line, and nothing else in
veille names one (no string comparison, no Literal of names, no attribute probe)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from veille.backends import build_client
from veille.models.pricing import ModelPrice, PriceTable
from veille.providers import (
    PROVIDERS,
    Provider,
    backend_choices,
    build_provider,
    check_backend,
    provider_names,
)
from veille.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


class Answer(BaseModel):
    verdict: str
    score: int


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    # The one registry line (tests/toy_provider.py is the one module).
    monkeypatch.setitem(PROVIDERS, "toy", Provider("toy", "tests.toy_provider:ToyModel", "a toy"))


@pytest.mark.usefixtures("toy")
def test_a_toy_provider_is_one_module_and_one_registry_line(tmp_path: Path) -> None:
    assert "toy" in provider_names() and check_backend("toy") == "toy"
    settings = Settings(backend="toy", warehouse_dir=tmp_path)
    with build_client(settings, run_id="t", journal_path=tmp_path / "calls.jsonl") as client:
        result = client.call("critic", "s", "prompt", Answer)
        assert result.output == Answer(verdict="jouet", score=4) and result.cost_usd == 0.0
        (record,) = client.journal.records()
    assert record.backend == "toy" and record.role == "critic"
    # Per role too: only the writer on the toy, the night offline.
    mixed = Settings(backend="offline", warehouse_dir=tmp_path, roles={"writer": {"provider": "toy"}})
    with build_client(mixed, run_id="t2") as client:
        assert client.role_backend("writer").name == "toy" and client.role_backend("critic").name == "offline"


@pytest.mark.usefixtures("toy")
def test_the_cli_reads_the_registry(tmp_path: Path) -> None:
    from veille.cli import _register_all, app

    _register_all()
    refused = CliRunner().invoke(app, ["run", "--backend", "nope", "--corpus", str(tmp_path)])
    assert refused.exit_code == 2 and "toy" in refused.output, refused.output


@pytest.mark.usefixtures("toy")
def test_a_free_role_still_answers_once_the_paid_roles_spent_the_budget(tmp_path: Path) -> None:
    """A mixed night: the critic on a paid backend is refused by the hard cap (which then refuses
    every request it is asked about), the writer on the free toy provider is still answered (code's
    answers cost nothing; the budget is never asked)."""
    from testkit.scripted import ScriptedModel
    from veille.models.budget import BudgetExceededError
    from veille.models.caller import ModelClient

    class Paid(ScriptedModel):
        name = "paid"
        free = False

    settings = Settings(backend="offline", warehouse_dir=tmp_path, max_cost_usd=0.01,
                        roles={"writer": {"provider": "toy"}, "critic": {"model": "m"}})  # fmt: skip
    toy = build_provider("toy", settings)
    paid = Paid({"critic": ['{"verdict": "cher", "score": 2}']})
    prices = PriceTable({"m": ModelPrice("m", 1000.0, 1000.0, 1000.0, "test", "2026-12-06")})
    client = ModelClient(settings, paid, run_id="t", prices=prices, role_models={"writer": toy})
    with client:
        with pytest.raises(BudgetExceededError):  # its most cost is past the cap: refused, cap closed
            client.call("critic", "s", "p", Answer)
        assert client.call("writer", "s", "p", Answer).output.verdict == "jouet"
    assert paid.requests == []


def test_the_docs_show_the_toy_provider_as_it_is() -> None:
    module = (ROOT / "tests" / "toy_provider.py").read_text(encoding="utf-8")
    body = module.split("from __future__ import annotations\n\n", 1)[1]
    assert f"```python\n{body}```" in (ROOT / "docs" / "models.md").read_text(encoding="utf-8")


def test_unknown_names_are_refused_listing_the_registry() -> None:
    with pytest.raises(ValidationError, match="gemini, openai, offline"):
        Settings(backend="ollama")
    with pytest.raises(ValidationError, match="unknown provider 'vllm'"):
        Settings(roles={"analyst": {"provider": "vllm"}})
    assert backend_choices() == ("auto", *PROVIDERS)


# Modules allowed to name a provider: the registry, and each provider's own module (its ``name``).
_ALLOWED = {"veille/providers.py", "veille/models/gemini.py", "veille/models/openai_compat.py"}
# Attributes of the Model protocol the client once probed with getattr.
_DECLARED = {"cacheable", "secrets", "version", "answers_by_code", "sends_http", "aclose", "free", "tools"}


def _names_in(node: ast.AST) -> set[str]:
    names = set(PROVIDERS) | {"scripted"}
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in names}


def test_nothing_outside_the_registry_names_a_provider() -> None:
    found = []
    for path in sorted((ROOT / "veille").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in _ALLOWED or rel.startswith("veille/offline/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and _names_in(node):
                found.append(f"{rel}:{node.lineno} compares with {sorted(_names_in(node))}")
            elif (
                isinstance(node, ast.Subscript)
                and ast.unparse(node.value).endswith("Literal")
                and _names_in(node)
            ):
                found.append(f"{rel}:{node.lineno} Literal of {sorted(_names_in(node))}")
            elif (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) == "getattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in _DECLARED
            ):
                found.append(f"{rel}:{node.lineno} probes {node.args[1].value!r}")
    assert found == []


def test_a_double_is_handed_in_as_a_registered_provider_selected_by_name(tmp_path: Path) -> None:
    """The explicit way a test hands a model to a night: registered for a block, chosen by the
    settings like any provider, gone after; a name already taken is refused (never shadowed)."""
    from testkit.scripted import ScriptedModel, as_provider
    from veille.providers import registered
    from veille.tasks.clients import backend_label, model_key

    model = ScriptedModel(function=lambda request: Answer(verdict="ok", score=1))
    with as_provider(model) as name:
        assert PROVIDERS[name].in_process and not PROVIDERS["offline"].in_process
        settings = Settings(backend=name, warehouse_dir=tmp_path)
        with build_client(settings, run_id="r") as client:
            assert client.role_backend("critic") is model
            assert client.call("critic", "S", "P", Answer).output.verdict == "ok"
        assert backend_label(settings) == name and model_key(settings, "critic").startswith(f"{name}|")
        with pytest.raises(ValueError, match="already registered"), registered(PROVIDERS[name]):
            pass
        assert name in PROVIDERS  # the refused registration removed nothing
    assert name not in PROVIDERS and len(model.requests) == 1
    with pytest.raises(ValueError, match="already registered"), registered(Provider("gemini", "x:y", "")):
        pass
    assert PROVIDERS["gemini"].factory == "veille.models.gemini:GeminiModel"
    with pytest.raises(ValidationError):
        Settings(backend=name)
