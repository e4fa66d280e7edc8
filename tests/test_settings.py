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
    assert {name: r for name, r in roles.items() if name != "analyst"} == {
        name: r for name, r in defaults.items() if name != "analyst"
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
    assert set(settings.roles) == {"planner", "analyst", "writer", "critic", "reviser", "judge"}


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
