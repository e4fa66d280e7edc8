"""The price table (veille/data/prices.toml) and the cost of one call.

Cost per call, in USD, with prices per million tokens::

    (input − cached) × input_price + cached × cached_input_price + (output + reasoning) × output_price

Thinking tokens are billed as output. When a model has a long-context tier and the prompt is larger
than its threshold, the long-context prices apply to the whole call (that is how Google bills it).
A model that is not in the table has no cost (``None``), never a silent 0: the caller records it
and raises an alert.

Google Search grounding is billed on top of the tokens, per model family: Gemini 3 per search
query the model ran (``webSearchQueries``; none run, nothing billed), Gemini 2.5 per request sent
with the tool. Each model entry may
carry a ``[models."<id>".google_search]`` table (``unit`` = ``query`` | ``request``, ``per_1000``
USD, ``source``, ``as_of``); a grounded answer of a model without one has no cost (``None``).
Free allowances (so many grounded prompts a day or a month) are not modelled: the figure is what
the calls cost once the allowance is used up, an upper bound.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

from veille.models.base import Usage

__all__ = [
    "GroundingPrice",
    "ModelPrice",
    "PriceTable",
    "PriceTableError",
    "call_cost",
    "grounding_cost",
    "normalise_model_id",
]

_PER_MILLION = 1_000_000


class PriceTableError(ValueError):
    """The price file is malformed; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class GroundingPrice:
    """USD per 1 000 units of Google Search grounding: search queries, or grounded requests."""

    unit: Literal["query", "request"]
    per_1000: float
    source: str
    as_of: str


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model."""

    model: str
    input: float
    cached_input: float
    output: float
    source: str
    as_of: str
    long_context_threshold: int | None = None
    long_input: float | None = None
    long_cached_input: float | None = None
    long_output: float | None = None
    google_search: GroundingPrice | None = None

    def rates(self, prompt_tokens: int) -> tuple[float, float, float]:
        """(input, cached_input, output) prices for a prompt of this size."""
        if self.long_context_threshold is not None and prompt_tokens > self.long_context_threshold:
            return (
                self.long_input if self.long_input is not None else self.input,
                self.long_cached_input if self.long_cached_input is not None else self.cached_input,
                self.long_output if self.long_output is not None else self.output,
            )
        return self.input, self.cached_input, self.output


def call_cost(price: ModelPrice, usage: Usage) -> float:
    """The formula of the module docstring. Cached tokens are a part of the input tokens."""
    input_rate, cached_rate, output_rate = price.rates(usage.input_tokens)
    cached = min(usage.cache_read_tokens, usage.input_tokens)
    fresh = usage.input_tokens - cached
    billed_output = usage.output_tokens + usage.reasoning_tokens
    return (fresh * input_rate + cached * cached_rate + billed_output * output_rate) / _PER_MILLION


def grounding_cost(price: GroundingPrice, search_queries: int) -> float:
    """One answer of a grounded request: its queries (unit ``query``) or itself (``request``)."""
    units = max(0, search_queries) if price.unit == "query" else 1
    return units * price.per_1000 / 1000


def normalise_model_id(model: str) -> str:
    """``models/gemini-2.5-flash`` or ``publishers/google/models/gemini-2.5-flash`` → ``gemini-2.5-flash``."""
    return model.rsplit("/", 1)[-1].strip().lower()


class PriceTable:
    """Prices by model id, loaded from a TOML file (see veille/data/prices.toml for the format)."""

    def __init__(self, prices: dict[str, ModelPrice] | None = None, *, path: Path | None = None) -> None:
        self._prices = {normalise_model_id(k): v for k, v in (prices or {}).items()}
        self.path = path

    @classmethod
    def load(cls, path: Path) -> PriceTable:
        """Load ``path``; a missing file gives an empty table (every model then has an unknown cost)."""
        if not path.exists():
            return cls({}, path=path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise PriceTableError(f"{path}: not valid TOML: {exc}") from None
        models = data.get("models", {})
        if not isinstance(models, dict):
            raise PriceTableError(f"{path}: [models] must be a table of model ids")
        return cls({name: _parse_entry(path, name, entry) for name, entry in models.items()}, path=path)

    def get(self, model: str) -> ModelPrice | None:
        return self._prices.get(normalise_model_id(model))

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.get(model)
        return None if price is None else call_cost(price, usage)

    def grounding_cost(self, model: str, search_queries: int) -> float | None:
        """The grounding fee of one grounded answer; ``None`` without a grounding price."""
        price = self.get(model)
        if price is None or price.google_search is None:
            return None
        return grounding_cost(price.google_search, search_queries)

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.get(model) is not None

    @property
    def models(self) -> list[str]:
        return sorted(self._prices)


def _parse_entry(path: Path, name: str, entry: Any) -> ModelPrice:
    # Long on purpose: every field of an entry checked in one place, each with its own message.
    where = f'{path}: [models."{name}"]'
    if not isinstance(entry, dict):
        raise PriceTableError(f"{where} must be a table")
    known = {
        "input",
        "cached_input",
        "output",
        "source",
        "as_of",
        "via",
        "long_context_threshold",
        "long_input",
        "long_cached_input",
        "long_output",
        "google_search",
    }
    unknown = sorted(set(entry) - known)
    if unknown:
        raise PriceTableError(f"{where}: unknown field(s) {unknown}; expected some of {sorted(known)}")

    def number(field: str, *, required: bool) -> float | None:
        value = entry.get(field)
        if value is None:
            if required:
                raise PriceTableError(f"{where}: missing `{field}` (USD per million tokens)")
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise PriceTableError(
                f"{where}: `{field}` must be a number ≥ 0 (USD per million tokens), got {value!r}"
            )
        return float(value)

    def text(field: str) -> str:
        value = entry.get(field)
        if not isinstance(value, str) or not value.strip():
            raise PriceTableError(f"{where}: `{field}` is required (a non-empty string)")
        return value

    as_of = entry.get("as_of")
    if isinstance(as_of, date):  # a bare TOML date parses to datetime.date
        entry = {**entry, "as_of": as_of.isoformat()}
    threshold = entry.get("long_context_threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int) or threshold <= 0
    ):
        raise PriceTableError(f"{where}: `long_context_threshold` must be a positive integer (tokens)")
    long_fields = [entry.get(f) for f in ("long_input", "long_cached_input", "long_output")]
    if threshold is None and any(v is not None for v in long_fields):
        raise PriceTableError(f"{where}: long-context prices given without `long_context_threshold`")
    input_price = number("input", required=True)
    cached_price = number("cached_input", required=True)
    output_price = number("output", required=True)
    assert input_price is not None and cached_price is not None and output_price is not None
    return ModelPrice(
        model=normalise_model_id(name),
        input=input_price,
        cached_input=cached_price,
        output=output_price,
        source=text("source"),
        as_of=text("as_of"),
        long_context_threshold=threshold,
        long_input=number("long_input", required=False),
        long_cached_input=number("long_cached_input", required=False),
        long_output=number("long_output", required=False),
        google_search=_parse_grounding(where, entry.get("google_search")),
    )


def _parse_grounding(where: str, entry: Any) -> GroundingPrice | None:
    if entry is None:
        return None
    where = f"{where}.google_search"
    if not isinstance(entry, dict):
        raise PriceTableError(f"{where} must be a table (unit, per_1000, source, as_of)")
    unknown = sorted(set(entry) - {"unit", "per_1000", "source", "as_of", "via"})
    if unknown:
        raise PriceTableError(f"{where}: unknown field(s) {unknown}")
    unit = entry.get("unit")
    if unit not in ("query", "request"):
        raise PriceTableError(f"{where}: `unit` must be 'query' or 'request', got {unit!r}")
    per_1000 = entry.get("per_1000")
    if isinstance(per_1000, bool) or not isinstance(per_1000, int | float) or per_1000 < 0:
        raise PriceTableError(f"{where}: `per_1000` must be a number ≥ 0 (USD per 1000 {unit}s)")
    as_of = entry.get("as_of")
    as_of = as_of.isoformat() if isinstance(as_of, date) else as_of
    source = entry.get("source")
    for field, value in (("source", source), ("as_of", as_of)):
        if not isinstance(value, str) or not value.strip():
            raise PriceTableError(f"{where}: `{field}` is required (a non-empty string)")
    return GroundingPrice(unit=unit, per_1000=float(per_1000), source=str(source), as_of=str(as_of))
