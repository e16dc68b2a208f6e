"""Prices files: costs per million tokens, the batch rate, and every bad file refused naming its line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.backends.prices import Price, Prices, load_prices, totals
from structbench.backends.usage import Usage
from structbench.core.errors import UsageError


def write(tmp_path: Path, text: str, name: str = "prices.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def usage(prompt: int, completion: int, cached: int | None = None) -> Usage:
    return Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)


def test_cost_per_million_with_cached_and_batch_rates(tmp_path: Path) -> None:
    prices = load_prices(write(tmp_path, "openai:gpt-4o-mini: {input: 0.15, output: 0.60, cached: 0.075}\n"
                                         "claude-x: {input: 3, output: 15, batch_input: 1, batch_output: 5}\n"))
    # 1M prompt tokens of which 400k cached, 200k completion tokens
    direct = prices.cost(("openai:gpt-4o-mini", False, False), usage(1_000_000, 200_000, 400_000))
    assert direct == pytest.approx(0.6 * 0.15 + 0.4 * 0.075 + 0.2 * 0.60)
    batch = prices.cost(("openai:gpt-4o-mini", True, False), usage(1_000_000, 200_000, 400_000))
    assert batch == pytest.approx(direct / 2)  # half price, cached tokens included, where the file gives no rate
    # found by its bare name; its own batch rates win over the half
    assert prices.cost(("anthropic:claude-x", True, False), usage(1_000_000, 1_000_000)) == pytest.approx(6.0)
    assert prices.cost(("openai:other", False, False), usage(1, 1)) is None


def test_unknown_tokens_have_an_unknown_cost(tmp_path: Path) -> None:
    prices = load_prices(write(tmp_path, '{"m": {"input": 1, "output": 1}}', "prices.json"))  # JSON too
    assert prices.cost(("openai:m", False, False), Usage(calls=1, unknown=1)) is None
    made = totals([(("openai:m", False, False), usage(1_000_000, 0)), (("openai:m", False, True), usage(0, 10**6))],
                  prices)
    assert (made.cost_usd, made.reused_cost_usd) == (1.0, 1.0)  # reused calls are costed apart, never spent
    assert totals([(("openai:m", False, False), usage(1, 1))], None).cost_usd is None  # no prices: no cost


@pytest.mark.parametrize(("text", "message"), [
    ("m: {input: -1, output: 2}\n", "prices.yaml:1: m.input: a price cannot be negative (-1)"),
    ("a: {input: 1, output: 1}\nm:\n  input: 1\n  output: -0.5\n", "prices.yaml:4: m.output: a price cannot be "
                                                                    "negative (-0.5)"),
    ("m: {input: 1, ouptut: 2}\n", "prices.yaml:1: m.output: Field required"),
    ("m: {input: 1, output: 2, extra: 3}\n", "prices.yaml:1: m.extra: unknown key"),
    ("m: {input: one, output: 2}\n", "m.input: Input should be a valid number"),
    ("m: 3\n", "m: expected a mapping of input, output"),
    ("- m\n", "a prices file maps each model to its prices"),
    ("m: {input: 1, output: .inf}\n", "m.output: a price must be a finite number (inf)"),
    ("m:\n  input: 1.0e+308\n  output: 1\n", "prices.yaml:2: m.input: 1e+308 US dollars per million tokens is more "
                                              "than any model costs (at most 1,000,000, a dollar a token)"),
    ("m: {input: 1, output: 1e306}\n", "prices.yaml:1: m.output: 1e306 US dollars per million tokens is more than"),
    ("m: {input: 1\n", "prices.yaml:2: not YAML (nor JSON)"),
])
def test_a_bad_prices_file_names_its_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        load_prices(write(tmp_path, text))
    assert message in str(err.value)


def test_a_model_without_a_price_is_refused(tmp_path: Path) -> None:
    prices = load_prices(write(tmp_path, "openai:gpt-4o: {input: 2.5, output: 10}\n"))
    prices.require(["openai:gpt-4o"])
    with pytest.raises(UsageError, match=r"prices.yaml: no price for the model openai:gpt-4o-mini \(the file prices: "
                                         r"openai:gpt-4o\)"):
        prices.require(["openai:gpt-4o-mini"])
    with pytest.raises(UsageError, match="cannot be read"):
        load_prices(tmp_path / "missing.yaml")


def test_the_largest_price_and_usage_cost_a_finite_amount() -> None:
    import json

    from structbench.backends.base import MAX_CALL_TOKENS
    from structbench.backends.prices import MAX_PRICE

    prices = Prices({"m": Price(input=MAX_PRICE, output=MAX_PRICE)}, "p")
    usage = Usage(calls=10**9, prompt_tokens=10**9 * MAX_CALL_TOKENS, completion_tokens=10**9 * MAX_CALL_TOKENS)
    cost = totals([(("m", False, False), usage)], prices).cost_usd
    assert cost is not None and json.loads(json.dumps(cost, allow_nan=False)) == cost
