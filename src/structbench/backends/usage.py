"""Token usage of model calls: per call, summed per record, per result and per run.

A count the server did not send is unknown (None), never 0: a sum is None when no call reported that count, and
``unknown`` counts the calls that reported no prompt or completion tokens (their tokens are missing from the sums).
Prompt tokens include the cached ones (``cached_tokens``: prompt tokens the provider served from its prompt
cache, billed at a lower rate), completion tokens include the reasoning ones (``reasoning_tokens``: a thought,
shown or hidden, billed as output), as OpenAI's and Anthropic's usage count them.

A call answered from structbench's response cache (a *reused* call) was paid for by whichever run first made it:
its tokens are kept apart from those of the calls made in this run, so a run's cost is what it spent, and the
tokens it reused are reported beside it (``docs/usage/costs.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from structbench.backends.base import token_count
from structbench.core.trusted import trusted

if TYPE_CHECKING:
    from structbench.backends.base import Backend, Response

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")


def model_label(backend: Backend) -> str:
    """How usage and prices name the model a backend calls: ``BACKEND:NAME`` (``openai:gpt-4o-mini``)."""
    return f"{backend.backend}:{backend.model}" if backend.model else backend.backend


class CallUsage(BaseModel):
    """One model call: its tokens as the server (or the local backend) counted them, and where the reply came from."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    model: str
    """``BACKEND:NAME`` of the model called (the run's own, or another such as a judge)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    """Of the completion tokens, those spent thinking (None: not reported)."""
    cached_tokens: int | None = None
    """Of the prompt tokens, those the provider served from its prompt cache (None: not reported)."""
    reused: bool = False
    """Answered from structbench's response cache: not paid for in this run."""
    batch: bool = False
    """Answered through a batch API (``--batch``): priced at the batch rate (a reused call: where its answer was paid
    for through one, whatever the run reusing it does)."""

    @field_validator(*TOKEN_FIELDS)
    @classmethod
    def _possible(cls, value: int | None) -> int | None:
        """A count no call can have (a record an older structbench wrote of a lying server) is unknown."""
        return token_count(value)

    @classmethod
    def of(cls, backend: Backend, response: Response, *, batch: bool = False) -> CallUsage:
        """The usage ``response`` reports (``response.cached``: a reused call, batched if its answer was paid for in a
        batch; else ``batch``: the call went through one). Its counts are checked already
        (``backends.base``: non-negative integers or None), so the model is built without validating them again:
        every call of a run makes one."""
        return trusted(cls, {
            "model": model_label(backend), "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens, "reasoning_tokens": response.reasoning_tokens,
            "cached_tokens": response.cached_tokens, "reused": bool(response.cached),
            "batch": bool(response.batch if response.cached else batch),
        })

    @property
    def known(self) -> bool:
        """Whether the server reported the call's prompt and completion tokens."""
        return self.prompt_tokens is not None and self.completion_tokens is not None


def plus_counts(a: int | None, b: int | None) -> int | None:
    """A sum of counts where None is one not reported."""
    if a is None:
        return b
    return a if b is None else a + b


class Usage(BaseModel):
    """Token counts summed over calls (None: no call reported that count)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    calls: int = Field(default=0, ge=0)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    unknown: int = Field(default=0, ge=0)
    """Calls that reported no prompt or completion tokens: the sums leave them out."""

    def __add__(self, other: Usage | CallUsage) -> Usage:
        if isinstance(other, CallUsage):
            return summed((self, other))
        return trusted(Usage, {"calls": self.calls + other.calls, "unknown": self.unknown + other.unknown,
                               **{k: plus_counts(getattr(self, k), getattr(other, k)) for k in TOKEN_FIELDS}})

    @property
    def total_tokens(self) -> int | None:
        """Prompt plus completion tokens (None when neither is known)."""
        return plus_counts(self.prompt_tokens, self.completion_tokens)

    @property
    def complete(self) -> bool:
        """Whether every call reported its prompt and completion tokens."""
        return self.unknown == 0

    @classmethod
    def total(cls, items: Iterable[Usage | CallUsage]) -> Usage:
        return summed(items)


def summed(items: Iterable[Usage | CallUsage]) -> Usage:
    """Sums and calls (a ``CallUsage`` counts as one call) in one ``Usage``: what adding them one by one gives,
    without a model per step (a record sums its calls twice over)."""
    calls = unknown = 0
    prompt = completion = reasoning = cached = None
    for item in items:
        if isinstance(item, CallUsage):
            calls += 1
            unknown += not item.known
        else:
            calls += item.calls
            unknown += item.unknown
        prompt = plus_counts(prompt, item.prompt_tokens)
        completion = plus_counts(completion, item.completion_tokens)
        reasoning = plus_counts(reasoning, item.reasoning_tokens)
        cached = plus_counts(cached, item.cached_tokens)
    return trusted(Usage, {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion,
                           "reasoning_tokens": reasoning, "cached_tokens": cached, "unknown": unknown})


UsageKey = tuple[str, bool, bool]
"""(model, batch, reused): calls of one price."""


def usage_groups(calls: Iterable[CallUsage]) -> dict[UsageKey, Usage]:
    """Calls summed per model, batch or direct, reused or made: what a cost is computed from."""
    groups: dict[UsageKey, list[CallUsage]] = {}
    for call in calls:
        groups.setdefault((call.model, call.batch, call.reused), []).append(call)
    return {key: summed(group) for key, group in groups.items()}


def split_usage(calls: Iterable[CallUsage]) -> tuple[Usage, Usage]:
    """(calls made in this run, calls answered from the response cache), each summed."""
    made: list[CallUsage] = []
    reused: list[CallUsage] = []
    for call in calls:
        (reused if call.reused else made).append(call)
    return summed(made), summed(reused)


class UsageTotals(BaseModel):
    """Tokens and cost of a result or a whole run (``metrics.json``, the manifest)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    usage: Usage = Field(default_factory=Usage)
    """Calls made in this run (answered by the model, directly or through a batch)."""
    reused: Usage = Field(default_factory=Usage)
    """Calls answered from the response cache: the tokens they stand for, paid for by the run that first made them."""
    cost_usd: float | None = None
    """What the calls made in this run cost at the run's prices (``--prices``); None without prices, or where a
    call's model has no price or its tokens are unknown."""
    reused_cost_usd: float | None = None
    """What the reused calls would have cost at the same prices (not spent by this run)."""
    by_model: dict[str, Usage] = Field(default_factory=dict)
    """Calls made in this run per model (``BACKEND:NAME``), where more than one model was called (a judge)."""


def short_count(value: int | None) -> str:
    """``12345`` -> ``12.3k``; ``–`` for unknown."""
    if value is None:
        return "–"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.1f}{suffix}"
    return str(value)


def usage_text(usage: Usage) -> str:
    """``2 calls: 200 prompt tokens (50 cached), 84 completion tokens (80 reasoning)``; unknown counts said so."""
    calls = f"{usage.calls:,} call{'s' if usage.calls != 1 else ''}"
    if usage.calls == 0:
        return calls
    prompt = "prompt tokens unknown" if usage.prompt_tokens is None else f"{usage.prompt_tokens:,} prompt tokens"
    if usage.cached_tokens:
        prompt += f" ({usage.cached_tokens:,} cached)"
    completion = ("completion tokens unknown" if usage.completion_tokens is None
                  else f"{usage.completion_tokens:,} completion tokens")
    if usage.reasoning_tokens:
        completion += f" ({usage.reasoning_tokens:,} reasoning)"
    unknown = f"; {usage.unknown:,} reported no usage" if usage.unknown and usage.prompt_tokens is not None else ""
    return f"{calls}: {prompt}, {completion}{unknown}"


def cost_text(cost: float | None) -> str:
    """``0.0123 USD``; ``unknown`` for no cost."""
    return "unknown" if cost is None else f"{cost:.4f} USD"


def _side(count: int | None, word: str) -> str:
    """``12.3k in``; ``out unreported`` where no call reported that count (a backend that counts no tokens)."""
    return f"{word} unreported" if count is None else f"{short_count(count)} {word}"


def totals_cell(totals: UsageTotals | None) -> str:
    """One compact table cell: ``12.3k in, 4.5k out, 0.0123 USD`` (``+ 2.0k reused`` when calls came from the
    response cache; ``out unreported`` where the backend counts no such tokens); ``–`` where no usage was kept."""
    if totals is None:
        return "–"
    made, reused = totals.usage, totals.reused
    if made.calls == 0 and reused.calls == 0:
        return "no call"
    if made.calls and made.prompt_tokens is None and made.completion_tokens is None:
        text = "unknown"
    else:
        text = f"{_side(made.prompt_tokens, 'in')}, {_side(made.completion_tokens, 'out')}"
        if made.unknown and made.unknown < made.calls:  # some calls reported no count: the sums lack them
            text += f" ({made.unknown} of {made.calls} calls unreported)"
    if totals.cost_usd is not None:
        text += f", {totals.cost_usd:.4f} USD" if totals.cost_usd < 100 else f", {totals.cost_usd:,.2f} USD"
    if reused.calls:
        text += f" (+{short_count(reused.total_tokens) if reused.total_tokens is not None else '?'} reused)"
    return text


def totals_text(totals: UsageTotals, prices: str | None = None) -> str:
    """The sentence a summary says about a result's or a run's usage and cost."""
    text = f"calls made: {usage_text(totals.usage)}"
    if prices is not None:
        text += f"; cost {cost_text(totals.cost_usd)} at {prices}"
    if totals.reused.calls:
        text += f"; answered from the response cache (not paid again): {usage_text(totals.reused)}"
        if prices is not None and totals.reused_cost_usd is not None:
            text += f", worth {cost_text(totals.reused_cost_usd)}"
    return text
