"""A run's budget: ``--max-cost`` (US dollars at the run's prices) and ``--max-tokens-total`` (prompt plus completion
tokens of the calls the run makes); ``max_cost`` and ``max_tokens_total`` in Python, as its errors say
(``core.words``).

What counts is what the run spends: calls answered by a model, directly or through a batch, over every session of
the run (what earlier sessions paid for, as ``spent.jsonl`` has it whether or not their samples were recorded, then
each call of this one as it returns, which it appends there: ``runner.spending``); an answer read from the response
cache costs nothing more (its call is counted once, by the session of this run that paid for it, or by no one: another
run paid for it). Once the budget is reached no further call goes out: the calls in flight finish (their
answers are kept in the cache), the samples they belong to are recorded when they need no further call, and the
run stops with ``BudgetError`` (exit 6). Budgets are not part of the run's configuration, so the same command with
a larger budget resumes the run, its answered calls read back from the cache, never sent again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from structbench.backends.prices import Prices
from structbench.backends.usage import CallUsage, Usage, UsageKey
from structbench.core.errors import BudgetError, UsageError
from structbench.core.words import spelt, word
from structbench.runner.spending import Paid, SpendLog

Spent = dict[str, float | int]
"""What calls spent, as a session of the manifest records it: ``calls``, ``tokens`` and, with prices, ``cost_usd``."""


def spent_sum(*parts: Spent) -> Spent:
    """What several processes spent, together (a worker's spending with the run's own)."""
    total: Spent = {}
    for part in parts:
        for key, value in part.items():
            total[key] = total.get(key, 0) + value
    return total


@dataclass
class Budget:
    """The limits and what has been spent against them."""

    max_cost: float | None = None
    max_tokens: int | None = None
    prices: Prices | None = None
    spent_cost: float = 0.0
    spent_tokens: int = 0
    calls: int = 0
    log: SpendLog | None = None
    """Where each call counted is appended as it returns (None: nowhere, as for a count of another process's)."""

    def __post_init__(self) -> None:
        if self.max_cost is not None and self.prices is None:
            raise UsageError(f"{word('max_cost')} needs the models' prices: give {spelt('prices', 'FILE')} (US "
                             "dollars per million tokens)")

    @property
    def active(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    def start(self, groups: Iterable[tuple[UsageKey, Usage]]) -> None:
        """Count what earlier sessions of the run paid for (``runner.spending.read_spent``'s groups; a reused group, of
        a run's records before the log existed, is left out)."""
        for key, usage in groups:
            if key[2]:
                continue
            self.spent_tokens += usage.total_tokens or 0
            self.calls += usage.calls
            if self.prices is not None:
                self.spent_cost += self.prices.cost(key, usage) or 0.0

    def add(self, call: CallUsage, key: str | None = None) -> tuple[str | None, Paid | None]:
        """Count one call the run made, and append it to the log (``StorageError`` when it cannot be; ``key``: its
        answer's in the response cache): why the budget can no longer be kept (None while it can), and what the cache
        stores with the answer (``SpendLog.add``)."""
        self.calls += 1
        self.spent_tokens += (call.prompt_tokens or 0) + (call.completion_tokens or 0)
        cost = None
        if self.prices is not None:
            cost = self.prices.cost((call.model, call.batch, False), Usage() + call)
            self.spent_cost += cost or 0.0
        paid = self.log.add(call, key) if self.log is not None else None
        return self._problem(call, cost), paid

    def _problem(self, call: CallUsage, cost: float | None) -> str | None:
        if not self.active:
            return None
        if not call.known:
            return (f"{call.model} reported no token usage for a call, so the budget ({word('max_cost')}/"
                    f"{word('max_tokens_total')}) cannot be kept; run without it, or against a server that reports "
                    "usage")
        if self.max_cost is not None and cost is None:
            source = self.prices.source if self.prices is not None else word("prices")
            return f"{call.model} has no price in {source}, so {word('max_cost')} cannot be kept"
        return None

    def reached(self) -> str | None:
        """Which limit is reached, in words (None: neither)."""
        if self.max_cost is not None and self.spent_cost >= self.max_cost:
            return f"{spelt('max_cost', f'{self.max_cost:g}')} USD (spent {self.spent_cost:.4f} USD)"
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            return f"{spelt('max_tokens_total', f'{self.max_tokens:,}')} (spent {self.spent_tokens:,} tokens)"
        return None

    def error(self, reason: str) -> BudgetError:
        return BudgetError(
            f"stopped: the run reached {reason} over {self.calls:,} model calls; finished samples and every answer "
            "received are kept: the same command with a larger budget resumes the run without repeating a call")

    def spent(self) -> Spent:
        """What the manifest records of the spending counted so far."""
        out: dict[str, float | int] = {"calls": self.calls, "tokens": self.spent_tokens}
        if self.prices is not None:
            out["cost_usd"] = round(self.spent_cost, 6)
        return out
