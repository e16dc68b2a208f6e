"""What a run changes in every request its strategies send: the token cap, a system prompt, chat-template
arguments, sampling settings, and the reasoning settings (a thinking budget added to the answer budget, the
reasoning effort, how thoughts are delimited), all part of the run's configuration, so of its results; and the turn
limit of tool loops, which decides how many requests a sample may send."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from structbench.backends.base import Backend, Message, Request
from structbench.backends.reasoning import ThinkTags
from structbench.contract.benchmark import TurnLimit
from structbench.core.errors import UsageError
from structbench.runfiles.runconfig import RunConfig


@dataclass(frozen=True)
class RequestSettings:
    """Applied by ``CallLog`` to each request before it reaches the cache and the model."""

    max_tokens: int | None = None
    """Cap on ``max_tokens``: a request asking for more gets this many."""
    system_prompt: str | None = None
    chat_template_args: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    reasoning_budget: int = 0
    """Tokens added to every request's (capped) ``max_tokens`` for a reasoning model's thought."""
    reasoning_effort: str | None = None
    think_tags: ThinkTags | None = None
    thought_opened: bool = False
    max_turns: int | None = None
    """``--max-turns``: model calls a tool loop makes at most per sample (None: each strategy's own limit)."""
    turn_limit: TurnLimit | None = None
    """``--turn-limit``: what a tool loop at its limit counts as (None: each strategy's own)."""
    epoch_seed: int | None = None
    """With several epochs, the request seed of epoch 0; epoch ``e`` sends ``epoch_seed + e`` (so repeats differ
    and each is reproducible, local backends included). None: one epoch, requests keep their seed."""

    @classmethod
    def of(cls, config: RunConfig) -> RequestSettings:
        g, r = config.generation, config.reasoning
        epoch_seed = (g.seed if g.seed is not None else config.seed) if config.epochs > 1 else None
        return cls(max_tokens=config.max_tokens, system_prompt=config.system_prompt,
                   chat_template_args=dict(config.chat_template_args) or None, temperature=g.temperature,
                   top_p=g.top_p, seed=g.seed, reasoning_budget=r.budget, reasoning_effort=r.effort,
                   think_tags=tuple(r.tags) if r.tags is not None else None, thought_opened=r.opened,
                   max_turns=config.max_turns, turn_limit=config.turn_limit, epoch_seed=epoch_seed)

    def check(self, backend: Backend) -> None:
        """Refuse settings the backend cannot honour (before any request is sent)."""
        if self.chat_template_args and not backend.supports_chat_template_args:
            raise UsageError(f"chat_template_args: the {backend.backend} backend cannot pass arguments to a chat "
                             "template (the openai backend sends them to vLLM, SGLang and llama.cpp servers; the hf, "
                             "vllm and llamacpp backends render their own)")
        if self.reasoning_budget and backend.supports_reasoning_budget:
            problem = backend.reasoning_budget_problem(self.reasoning_budget)
            if problem is not None:
                raise UsageError(f"--reasoning-budget {self.reasoning_budget}: {problem}")
        effort, efforts = self.reasoning_effort, backend.reasoning_efforts
        if effort is not None and not efforts:
            raise UsageError(f"--reasoning-effort: the {backend.backend} backend has no reasoning effort (the openai "
                             "backend sends it to servers that take it, the anthropic backend to Claude's adaptive "
                             "thinking; a local model's template may take a --chat-template-arg instead, e.g. "
                             "enable_thinking=false)")
        if effort is not None and effort not in efforts:
            raise UsageError(f"--reasoning-effort {effort}: the {backend.backend} backend sends only "
                             f"{', '.join(efforts)} (leave it out for the model's default)")

    def apply(self, request: Request, epoch: int = 0) -> Request:
        """``request`` with these settings (in ``epoch``): a chat request's system prompt goes first (one system
        turn: this prompt, a blank line, the request's own system message); completion prompts keep their text."""
        p = request.params
        changes: dict[str, Any] = {}
        budget = min(p.max_tokens, self.max_tokens) if self.max_tokens is not None else p.max_tokens
        if budget + self.reasoning_budget != p.max_tokens:
            changes["max_tokens"] = budget + self.reasoning_budget
        if self.reasoning_budget:
            changes["reasoning_budget"] = self.reasoning_budget
        if self.think_tags is not None:
            changes["think_tags"] = self.think_tags
        if self.thought_opened:
            changes["thought_opened"] = True
        if self.reasoning_effort is not None and request.messages is not None:
            changes["reasoning_effort"] = self.reasoning_effort
        for name in ("temperature", "top_p", "seed"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = value
        if self.epoch_seed is not None:
            changes["seed"] = self.epoch_seed + epoch
        if self.chat_template_args and request.messages is not None:
            changes["chat_template_args"] = self.chat_template_args
        messages = request.messages
        if self.system_prompt and messages is not None:
            if messages and messages[0].role == "system":
                messages = (Message("system", f"{self.system_prompt}\n\n{messages[0].content}"), *messages[1:])
            else:
                messages = (Message("system", self.system_prompt), *messages)
        if not changes and messages is request.messages:
            return request
        return replace(request, messages=messages, params=replace(p, **changes))
