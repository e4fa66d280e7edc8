"""The grid is data (seed 000): TOML, defaults, merged mentions, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from veille.grid import DEFAULT_CRITERIA, GridError, load_grid
from veille.resources import data_file
from veille.settings import Settings

CONFIG_GRID = data_file("grid.toml")


def test_default_grid_has_the_dossier_criteria_and_rules() -> None:
    grid = load_grid(CONFIG_GRID)
    assert tuple(grid.criteria) == DEFAULT_CRITERIA
    assert all(len(d) > 20 for d in grid.criteria.values())  # definitions, not bare names
    assert (grid.threshold, grid.mean_min, grid.max_sentence_words) == (4, 4.8, 25)
    assert grid.min_words < grid.max_words


def test_request_mentions_are_merged_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(
        'mandatory_mentions = ["Kestrel", "12 GPU"]\n[criteria]\nclarity = "Clair."\n', encoding="utf-8"
    )
    grid = load_grid(path, extra_mentions=["Tamaris", "Kestrel", " "])
    assert grid.mandatory_mentions == ("Kestrel", "12 GPU", "Tamaris")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("threshold = 4\n", "criteria"),
        ('min_words = 900\nmax_words = 100\n[criteria]\na = "A."\n', "min_words"),
        ('threshold = 7\n[criteria]\na = "A."\n', "threshold"),
        ('colour = "red"\n[criteria]\na = "A."\n', "colour"),
        ("[criteria\n", "not valid TOML"),
    ],
)
def test_bad_grid_errors_name_the_file_and_the_field(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(GridError) as info:
        load_grid(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_missing_grid_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GridError, match="grid file not found"):
        load_grid(tmp_path / "nope.toml")


def test_a_corpus_may_override_the_grid(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    assert Settings(corpus_dir=corpus).grid_file == Settings().config_dir / "grid.toml"
    (corpus / "grid.toml").write_text('[criteria]\nclarity = "Clair."\n', encoding="utf-8")
    assert load_grid(Settings(corpus_dir=corpus).grid_file).criteria == {"clarity": "Clair."}
