from pathlib import Path

import pytest
from pydantic import ValidationError

from veille.settings import Settings


def test_one_role_field_from_the_environment_keeps_every_other_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = Settings().roles
    monkeypatch.setenv("VEILLE_ROLES__ANALYST__MODEL", "gemini-test-model")
    roles = Settings().roles
    assert roles["analyst"].model == "gemini-test-model"
    assert roles["analyst"].thinking == defaults["analyst"].thinking
    # The incremental analyst follows the analyst (veille.settings.FOLLOWS); every other role keeps its own.
    assert roles["analyst_update"] == roles["analyst"]
    changed = {"analyst", "analyst_update"}
    assert {name: r for name, r in roles.items() if name not in changed} == {
        name: r for name, r in defaults.items() if name not in changed
    }


def test_role_override_from_toml_keeps_the_role_temperature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "veille.toml"
    config.write_text('[roles.critic]\nmodel = "gemini-x"\n', encoding="utf-8")
    monkeypatch.setenv("VEILLE_CONFIG", str(config))
    settings = Settings()
    assert settings.roles["critic"].model == "gemini-x"
    assert (
        settings.roles["critic"].temperature
        == Settings.model_fields["roles"].default_factory()["critic"].temperature
    )  # type: ignore[misc,call-arg]
    assert set(settings.roles) == {
        "planner",
        "analyst",
        "analyst_update",
        "writer",
        "critic",
        "reviser",
        "judge",
        "researcher",
    }


def test_unknown_role_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEILLE_ROLES__ANALYTS__MODEL", "x")
    with pytest.raises(ValidationError, match="unknown role 'analyts'"):
        Settings()


def test_concurrency_cap_defaults_to_at_least_max_subtasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEILLE_MAX_CONCURRENT_CALLS", raising=False)
    assert Settings().max_concurrent_calls >= Settings().max_subtasks  # every branch in flight at once
    assert Settings(max_subtasks=10).max_concurrent_calls == 10
    assert Settings(max_subtasks=10, max_concurrent_calls=2).max_concurrent_calls == 2  # explicit wins
    monkeypatch.setenv("VEILLE_MAX_CONCURRENT_CALLS", "3")
    assert Settings(max_subtasks=10).max_concurrent_calls == 3
    with pytest.raises(ValueError):
        Settings(max_concurrent_calls=0)


def test_docs_list_every_environment_variable() -> None:
    """Every settings field's variable, and every variable the code reads, is in docs/configuration.md."""
    import re

    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [
        f"VEILLE_{name.upper()}" for name in Settings.model_fields if f"VEILLE_{name.upper()}" not in docs
    ]
    read = set()
    for path in (root / "veille").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r"environ\.get\(\s*\"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"^_?[A-Z_]*ENV\s*=\s*\"([A-Z][A-Z0-9_]+)\"", text, re.MULTILINE))
    assert {"VEILLE_CONFIG", "GEMINI_API_KEY"} <= read  # the scan finds them
    missing += sorted(name for name in read if name not in docs)
    assert missing == [], f"not in docs/configuration.md: {missing}"


def test_an_installed_veille_keeps_its_corpus_and_warehouse_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veille.settings import PROJECT_ROOT, default_home

    site = tmp_path / "site-packages"  # a wheel's parent: no pyproject.toml there
    site.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert default_home(site) == work
    assert default_home(PROJECT_ROOT) == PROJECT_ROOT  # a checkout keeps its own corpus/ and warehouse/
    monkeypatch.setattr("veille.settings.default_home", lambda root=site: default_home(root))
    settings = Settings()
    assert settings.corpus_dir == work / "corpus"
    assert settings.warehouse_dir == work / "warehouse" / "data"
