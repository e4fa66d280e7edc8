from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from veille.tomlconfig import load_toml_model


class Sample(BaseModel):
    rank: int = Field(ge=1)


class SampleError(ValueError):
    pass


def _load(path: Path) -> Sample:
    return load_toml_model(path, Sample, error=SampleError, what="sample", expected="rank = N")


def test_loads_a_valid_file(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text("rank = 3\n", encoding="utf-8")
    assert _load(tmp_path / "s.toml").rank == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"s\.toml: sample file not found \(expected rank = N\)"),
        ("rank = = 3", r"s\.toml: not valid TOML"),
        ("rank = 0", r"s\.toml: invalid sample: rank: Input should be greater than or equal to 1"),
    ],
)
def test_errors_name_the_file_and_the_field(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "s.toml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(SampleError, match=message):
        _load(path)
