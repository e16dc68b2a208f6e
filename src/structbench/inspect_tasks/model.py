"""structbench's ``Generate`` over Inspect's model API: a ``Request`` in, a ``Response`` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from structbench.backends.base import (
    BackendError,
    Choice,
    GenerationParams,
    Message,
    Request,
    Response,
    TokenLogprob,
    reply_choice,
    token_count,
)

UsageCounts = tuple[int | None, int | None, int | None, int | None]
"""(prompt, completion, reasoning, cached) tokens; None: unknown."""


def chat_messages(request: Request) -> list[ChatMessage]:
    """The request as Inspect chat messages; a completion prompt becomes one user turn (Inspect's models are chat
    models)."""
    turns = request.messages if request.messages is not None else (Message("user", request.prompt or ""),)
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m.role](content=m.content) for m in turns]


def _response_schema(response_format: dict[str, Any] | None) -> ResponseSchema | None:
    """An OpenAI ``response_format`` of type ``json_schema`` as Inspect's ``ResponseSchema``."""
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format["json_schema"]
    return ResponseSchema(
        name=spec.get("name", "response"),
        json_schema=JSONSchema.model_validate(spec["schema"]),
        strict=spec.get("strict"),
    )


def generate_config(request: Request, *, n: int, max_tokens: int | None) -> GenerateConfig:
    """The request's sampling parameters as a ``GenerateConfig`` (``min_tokens`` has no Inspect equivalent: it is
    left out, as backends without ``supports_min_tokens`` leave it out)."""
    p = request.params
    return GenerateConfig(
        max_tokens=min(p.max_tokens, max_tokens) if max_tokens is not None else p.max_tokens,
        temperature=p.temperature,
        top_p=p.top_p,
        num_choices=n if n > 1 else None,
        stop_seqs=list(p.stop) or None,
        seed=p.seed,
        logprobs=p.logprobs or None,
        top_logprobs=p.top_logprobs or None,
        response_schema=_response_schema(p.response_format),
    )


def usage_counts(usage: ModelUsage | None) -> UsageCounts:
    """Inspect's usage of one call as structbench's (prompt, completion, reasoning, cached) tokens; all None without
    usage. Inspect's ``input_tokens`` leave out the prompt cache's reads and writes; structbench's prompt tokens are
    the whole prompt (as ``backends.anthropic`` counts it): ``input_tokens`` plus both, the reads being the cached
    tokens. Output tokens include the reasoning ones in Inspect's providers, as in structbench."""
    if usage is None:
        return None, None, None, None
    read, written = token_count(usage.input_tokens_cache_read), token_count(usage.input_tokens_cache_write)
    impossible = any(v is not None and token_count(v) is None
                     for v in (usage.input_tokens_cache_read, usage.input_tokens_cache_write))
    uncached = token_count(usage.input_tokens)
    prompt = None if uncached is None or impossible else uncached + (read or 0) + (written or 0)
    return prompt, token_count(usage.output_tokens), token_count(usage.reasoning_tokens), read


def summed_counts(counts: list[UsageCounts]) -> UsageCounts:
    """The counts of several calls answering one request, summed; a count unknown for any call is unknown."""

    def total(i: int) -> int | None:
        values = [c[i] for c in counts]
        return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)

    return total(0), total(1), total(2), total(3)


def _choices(output: ModelOutput, params: GenerationParams | None = None) -> list[Choice]:
    """Inspect's choices as structbench's: the answer apart from the thought, whether Inspect's provider put the
    thought in reasoning content parts or left it inline between think tags (``reply_choice``)."""
    choices = []
    for c in output.choices:
        logprobs = None
        if c.logprobs is not None:
            logprobs = tuple(
                TokenLogprob(lp.token, lp.logprob, {t.token: t.logprob for t in lp.top_logprobs or []})
                for lp in c.logprobs.content
            )
        parts = c.message.content if isinstance(c.message.content, list) else []
        thought = "\n\n".join(p.reasoning for p in parts if isinstance(p, ContentReasoning) and not p.redacted)
        finish = "length" if c.stop_reason in ("max_tokens", "model_length") else c.stop_reason
        choices.append(reply_choice(c.message.text, params or GenerationParams(), finish_reason=finish,
                                    logprobs=logprobs, field=thought or None))
    return choices


@dataclass
class InspectGenerate:
    """A strategy's ``generate`` that calls an Inspect ``Model``; keeps the first request and the last exchange.

    A request for ``n`` samples asks for ``num_choices=n``; providers that return fewer (Inspect's mock model, or
    APIs without ``n``) are asked again until there are ``n``, so self-consistency always votes over ``n``. The
    response's usage is those calls' (``usage_counts``), summed."""

    model: Model
    max_tokens: int | None = None
    """Cap on every request's ``max_tokens`` (``structbench run --max-tokens``)."""
    first: Request | None = None
    last_messages: list[ChatMessage] = field(default_factory=list)
    last_output: ModelOutput | None = None
    calls: int = 0

    async def __call__(self, request: Request) -> Response:
        if self.first is None:
            self.first = request
        messages = chat_messages(request)
        wanted = max(1, request.params.n)
        choices: list[Choice] = []
        counts: list[UsageCounts] = []
        while len(choices) < wanted:
            config = generate_config(request, n=wanted - len(choices), max_tokens=self.max_tokens)
            output = await self.model.generate(messages, config=config)
            self.calls += 1
            got = _choices(output, request.params)
            if not got:
                raise BackendError(f"{self.model}: unusable reply: the reply has no choices", cause="unusable reply")
            choices.extend(got)
            counts.append(usage_counts(output.usage))
            self.last_output = output
        self.last_messages = messages
        prompt, completion, reasoning, cached = summed_counts(counts)
        return Response(tuple(choices[:wanted]), prompt_tokens=prompt, completion_tokens=completion,
                        reasoning_tokens=reasoning, cached_tokens=cached)
