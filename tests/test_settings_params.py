"""Settings.from_params: the one constructor from the CLI's options or a deployment's parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from veille.settings import Settings


def test_given_parameters_win_and_none_means_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VEILLE_MAX_ROUNDS", "5")
    monkeypatch.setenv("VEILLE_STRICT", "true")
    settings = Settings.from_params(corpus=tmp_path / "c", warehouse=str(tmp_path / "w"), backend="offline")
    assert settings.corpus_dir == (tmp_path / "c").resolve()
    assert settings.warehouse_dir == (tmp_path / "w").resolve()
    assert settings.backend == "offline"
    assert settings.max_rounds == 5  # not given: the environment's value stays
    assert settings.strict is True  # strict=False means "not forced", not "off"
    assert Settings.from_params(max_rounds=2).max_rounds == 2


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max_rounds": 0}, "max_rounds"),
        ({"backend": "no-such-provider"}, "backend"),
        ({"max_subtasks": 0}, "max_subtasks"),
    ],
)
def test_a_bad_parameter_is_refused_naming_its_field(params: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings.from_params(**params)  # type: ignore[arg-type]
    assert caught.value.errors()[0]["loc"][0] == field
