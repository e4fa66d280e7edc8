"""The provider registry: a provider is one module and one registry line, and nothing else in
veille names one (no string comparison, no Literal of names, no attribute probe)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from veille.backends import build_client
from veille.providers import PROVIDERS, Provider, backend_choices, check_backend, provider_names
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
