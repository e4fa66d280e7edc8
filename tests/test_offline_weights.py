"""The offline engine's thresholds are data (weights.toml), not code (issue 28): no tuning number
in any engine module; the planner's weights are each read and follow the file."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from veille.offline import lexicon
from veille.offline.relevance import PlannerTuning
from veille.resources import data_file

OFFLINE = Path(lexicon.__file__).parent
PLANNER_MODULES = ("planner", "relevance", "axes", "clusters", "capacity", "aspect_cover", "authority")


ENGINE_MODULES = sorted(p.stem for p in OFFLINE.glob("*.py"))


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_no_tuning_literal_in_any_engine_module(module: str) -> None:
    tree = ast.parse((OFFLINE / f"{module}.py").read_text(encoding="utf-8"))
    found = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and node.value not in (0, 1, 2, -1)
    ]
    assert found == [], f"veille/offline/{module}.py: numbers belong in weights.toml: {found}"


def test_every_plan_weight_is_read_by_the_planner() -> None:
    weights = tomllib.loads((data_file("lang") / "weights.toml").read_text(encoding="utf-8"))
    source = "\n".join((OFFLINE / f"{m}.py").read_text(encoding="utf-8") for m in PLANNER_MODULES)
    tuning = {f.name for f in fields(PlannerTuning)}
    unused = [
        f"{section}.{key}"
        for section, items in weights.items()
        if section.startswith("plan_")
        for key in items
        if f'"{section}.{key}"' not in source and not (section == "plan_relevance" and key in tuning)
    ]
    assert unused == []


def test_planner_tuning_comes_from_the_data_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = (data_file("lang") / "weights.toml").read_text(encoding="utf-8")
    assert "outlier_share = { value = 0.25," in shipped
    (tmp_path / "weights.toml").write_text(
        shipped.replace("outlier_share = { value = 0.25,", "outlier_share = { value = 0.75,")
    )
    lexicon._load.cache_clear()
    lexicon.weight.cache_clear()
    monkeypatch.setattr(lexicon, "_path", lambda name: tmp_path / f"{name}.toml")
    try:
        assert PlannerTuning.from_data().outlier_share == 0.75
        (tmp_path / "weights.toml").write_text(shipped.replace("outlier_share = {", "outlier_shares = {"))
        lexicon._load.cache_clear()
        lexicon.weight.cache_clear()
        with pytest.raises(lexicon.LexiconError, match=r"\[plan_relevance\]\.outlier_share missing"):
            PlannerTuning.from_data()
    finally:
        lexicon._load.cache_clear()
        lexicon.weight.cache_clear()
