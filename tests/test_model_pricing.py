"""Price table (veille/data/prices.toml) and the cost formula."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from veille.models.base import Usage
from veille.models.pricing import ModelPrice, PriceTable, PriceTableError, call_cost, normalise_model_id
from veille.resources import data_file
from veille.settings import Settings

FLAT = ModelPrice("flat", input=2.0, cached_input=0.5, output=8.0, source="test", as_of="2026-01-01")
TIERED = ModelPrice(
    "tiered",
    input=1.0,
    cached_input=0.1,
    output=10.0,
    source="test",
    as_of="2026-01-01",
    long_context_threshold=1000,
    long_input=2.0,
    long_cached_input=0.2,
    long_output=15.0,
)


def test_cost_formula_bills_fresh_cached_output_and_thinking() -> None:
    usage = Usage(
        input_tokens=1_000_000, output_tokens=100_000, reasoning_tokens=50_000, cache_read_tokens=200_000
    )
    # 800k fresh × $2 + 200k cached × $0.5 + (100k + 50k) output × $8 = 1.6 + 0.1 + 1.2
    assert call_cost(FLAT, usage) == pytest.approx(2.9)


def test_zero_usage_costs_zero() -> None:
    assert call_cost(FLAT, Usage()) == 0.0


def test_long_context_tier_applies_above_the_threshold_to_the_whole_call() -> None:
    at_threshold = Usage(input_tokens=1000, output_tokens=100)
    above = Usage(input_tokens=1001, output_tokens=100, cache_read_tokens=1)
    assert call_cost(TIERED, at_threshold) == pytest.approx((1000 * 1.0 + 100 * 10.0) / 1e6)
    assert call_cost(TIERED, above) == pytest.approx((1000 * 2.0 + 1 * 0.2 + 100 * 15.0) / 1e6)


def test_model_ids_are_normalised() -> None:
    table = PriceTable({"Gemini-2.5-Flash": FLAT})
    for name in ("gemini-2.5-flash", "models/gemini-2.5-flash", "publishers/google/models/gemini-2.5-flash"):
        assert table.get(name) is FLAT
    assert normalise_model_id("models/x") == "x"
    assert table.cost("gemini-unknown", Usage(input_tokens=5)) is None


def test_bundled_price_table_is_dated_sourced_and_covers_the_default_roles() -> None:
    table = PriceTable.load(data_file("prices.toml"))

    for role, role_model in Settings().roles.items():
        assert role_model.model in table, f"default model of {role} ({role_model.model}) has no price"
    for model in table.models:
        price = table.get(model)
        assert price is not None
        assert price.source.startswith("https://"), model
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", price.as_of), model
        assert 0 < price.cached_input < price.input < price.output, model
        if price.long_context_threshold is not None:
            assert price.long_input is not None and price.long_input > price.input, model


def test_missing_price_file_gives_an_empty_table(tmp_path: Path) -> None:
    table = PriceTable.load(tmp_path / "absent.toml")
    assert table.models == [] and table.cost("gemini-2.5-flash", Usage(input_tokens=1)) is None


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('input = 1\noutput = 2\nsource = "s"\nas_of = "2026-01-01"', "missing `cached_input`"),
        (
            'input = -1\ncached_input = 0\noutput = 2\nsource = "s"\nas_of = "2026-01-01"',
            "`input` must be a number",
        ),
        ('input = 1\ncached_input = 0\noutput = 2\nsource = "s"', "`as_of` is required"),
        (
            'input = 1\ncached_input = 0\noutput = 2\nsource = "s"\nas_of = "2026-01-01"\nlong_input = 3',
            "without `long_context_threshold`",
        ),
        (
            'input = 1\ncached_input = 0\noutput = 2\nsource = "s"\nas_of = "2026-01-01"\nouput = 3',
            "unknown field",
        ),
    ],
)
def test_malformed_entries_are_named(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(f'[models."m-1"]\n{entry}\n')

    with pytest.raises(PriceTableError) as caught:
        PriceTable.load(path)

    assert str(path) in str(caught.value) and '"m-1"' in str(caught.value)
    assert message in str(caught.value)


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text("[models\n")
    with pytest.raises(PriceTableError, match="not valid TOML"):
        PriceTable.load(path)


def test_toml_dates_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[models.m]\ninput = 1\ncached_input = 0.1\noutput = 2\nsource = "s"\nas_of = 2026-02-03\n'
    )
    price = PriceTable.load(path).get("m")
    assert price is not None and price.as_of == "2026-02-03"
