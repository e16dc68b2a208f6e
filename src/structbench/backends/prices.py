"""Prices per model, from a file the user gives (``--prices FILE`` or a suite's ``prices``), and what usage costs.

Nothing is ever fetched: prices change, and a run's cost must be computed from the prices the user stands by.
The file (YAML or JSON) maps a model to its prices in US dollars per million tokens::

    openai:gpt-4o-mini: {input: 0.15, output: 0.60, cached: 0.075}
    claude-sonnet-4-5: {input: 3, output: 15, cached: 0.30}

A model is found by ``BACKEND:NAME`` first, then by its bare name. ``cached`` (prompt tokens served from the
provider's prompt cache) defaults to ``input``; ``batch_input``, ``batch_output`` and ``batch_cached`` (calls made
through a batch API, ``--batch``) default to half the direct price, as OpenAI and Anthropic charge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.backends.usage import Usage, UsageKey, UsageTotals
from structbench.core.errors import UsageError

BATCH_DISCOUNT = 0.5
"""The batch APIs' price as a share of the direct one (OpenAI Batch API, Anthropic Message Batches)."""
MAX_PRICES_BYTES = 1 << 20
PER = 1_000_000
"""Prices are per this many tokens."""
MAX_PRICE = 1_000_000.0
"""The highest price taken, in US dollars per million tokens (a dollar a token, thousands of times any model's): with
a call's tokens bounded (``backends.base.MAX_CALL_TOKENS``), every cost stays a finite number a file can hold."""


class Price(BaseModel):
    """One model's prices in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    input: float = Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)
    output: float = Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)
    cached: float | None = Field(default=None, ge=0, le=MAX_PRICE, allow_inf_nan=False)
    """Prompt tokens served from the provider's prompt cache (default: ``input``)."""
    batch_input: float | None = Field(default=None, ge=0, le=MAX_PRICE, allow_inf_nan=False)
    batch_output: float | None = Field(default=None, ge=0, le=MAX_PRICE, allow_inf_nan=False)
    batch_cached: float | None = Field(default=None, ge=0, le=MAX_PRICE, allow_inf_nan=False)

    def rates(self, batch: bool) -> tuple[float, float, float]:
        """(input, output, cached) per million tokens, direct or through a batch API."""
        cached = self.input if self.cached is None else self.cached
        if not batch:
            return self.input, self.output, cached
        return (
            self.input * BATCH_DISCOUNT if self.batch_input is None else self.batch_input,
            self.output * BATCH_DISCOUNT if self.batch_output is None else self.batch_output,
            cached * BATCH_DISCOUNT if self.batch_cached is None else self.batch_cached,
        )

    def cost(self, usage: Usage, *, batch: bool = False) -> float | None:
        """What ``usage`` costs, in US dollars; None when a call's tokens are unknown (a partial sum would
        understate it)."""
        if usage.calls == 0:
            return 0.0
        if not usage.complete or usage.prompt_tokens is None or usage.completion_tokens is None:
            return None
        rate_in, rate_out, rate_cached = self.rates(batch)
        cached = min(usage.cached_tokens or 0, usage.prompt_tokens)
        return ((usage.prompt_tokens - cached) * rate_in + cached * rate_cached
                + usage.completion_tokens * rate_out) / PER


class Prices:
    """The prices of a file (or a suite's mapping), by model."""

    def __init__(self, prices: Mapping[str, Price], source: str) -> None:
        self.prices = dict(prices)
        self.source = source
        """Where they came from (the file), for messages and the manifest."""

    def find(self, model: str) -> Price | None:
        """The price of ``BACKEND:NAME``, else of the bare ``NAME``."""
        if model in self.prices:
            return self.prices[model]
        return self.prices.get(model.partition(":")[2] or model)

    def require(self, models: Iterable[str]) -> None:
        """A ``UsageError`` naming the file when one of ``models`` has no price (its cost would be unknown)."""
        for model in models:
            if self.find(model) is None:
                listed = ", ".join(self.prices) or "none"
                raise UsageError(f"{self.source}: no price for the model {model} (the file prices: {listed}); add "
                                 f"'{model}: {{input: USD, output: USD}}' (per million tokens)")

    def cost(self, key: UsageKey, usage: Usage) -> float | None:
        """What one group of calls costs (None: no price for its model, or unknown tokens)."""
        model, batch, _ = key
        price = self.find(model)
        return None if price is None else price.cost(usage, batch=batch)

    def describe(self) -> dict[str, Any]:
        """What the manifest records: the source and the prices used."""
        return {"source": self.source, "models": {m: p.model_dump(exclude_none=True) for m, p in self.prices.items()}}

    @classmethod
    def from_data(cls, data: Any, source: str, lines: Mapping[tuple[Any, ...], int] | None = None,
                  prefix: str = "") -> Prices:
        """Prices from a parsed mapping; a problem is a ``UsageError`` naming ``source``, the line where known, the
        model and the field (after ``prefix``: ``prices.`` in a suite file)."""
        lines = lines or {}

        def where(*loc: Any) -> str:
            path = tuple(loc)
            while path and path not in lines:
                path = path[:-1]
            return f"{source}:{lines[path]}" if path in lines else source

        if not isinstance(data, dict) or not data:
            raise UsageError(f"{where()}: a prices file maps each model to its prices, e.g. "
                             "'openai:gpt-4o-mini: {input: 0.15, output: 0.60}' (US dollars per million tokens)")
        prices: dict[str, Price] = {}
        for model, entry in data.items():
            if not isinstance(model, str) or not model.strip():
                raise UsageError(f"{where()}: a model name must be a string, not {model!r}")
            if not isinstance(entry, dict):
                raise UsageError(f"{where(model)}: {prefix}{model}: expected a mapping of input, output (and cached, "
                                 f"batch_input, batch_output, batch_cached) prices, not {entry!r}")
            try:
                prices[model] = Price.model_validate(entry)
            except ValidationError as err:
                e = err.errors()[0]
                name = ".".join(str(p) for p in e["loc"])
                message = "unknown key" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
                if e["type"] == "greater_than_equal":
                    message = f"a price cannot be negative ({e['input']})"
                elif e["type"] == "less_than_equal":
                    message = (f"{e['input']} US dollars per million tokens is more than any model costs (at most "
                               f"{MAX_PRICE:,.0f}, a dollar a token); prices are per million tokens")
                elif e["type"] == "finite_number":
                    message = f"a price must be a finite number ({e['input']})"
                raise UsageError(f"{where(model, *e['loc'])}: {prefix}{model}.{name}: {message}") from None
        return cls(prices, source)


def load_prices(path: Path) -> Prices:
    """Read a prices file (YAML, of which JSON is a subset); every problem is a ``UsageError`` naming it."""
    from structbench.core.yaml_input import read_yaml  # yaml only for a run that reads a prices file

    data, lines = read_yaml(path, kind="the prices file", max_bytes=MAX_PRICES_BYTES)
    return Prices.from_data(data, str(path), lines)


def totals(groups: Iterable[tuple[UsageKey, Usage]], prices: Prices | None) -> UsageTotals:
    """Sum groups of calls (model, batch, reused) into usage and cost: made and reused apart, and each costed at
    ``prices`` (a cost is None without prices, or where a group cannot be priced)."""
    made, reused = Usage(), Usage()
    cost: float | None = 0.0 if prices is not None else None
    reused_cost: float | None = 0.0 if prices is not None else None
    by_model: dict[str, Usage] = {}
    for key, usage in groups:
        model, _, was_reused = key
        price = prices.cost(key, usage) if prices is not None else None
        if was_reused:
            reused = reused + usage
            reused_cost = None if price is None or reused_cost is None else reused_cost + price
        else:
            made = made + usage
            cost = None if price is None or cost is None else cost + price
            by_model[model] = by_model.get(model, Usage()) + usage
    return UsageTotals(usage=made, reused=reused, cost_usd=_cents(cost), reused_cost_usd=_cents(reused_cost),
                       by_model=by_model if len(by_model) > 1 else {})


def _cents(value: float | None) -> float | None:
    """A cost rounded to a millionth of a dollar (no float noise in files)."""
    return None if value is None else round(value, 6)
