"""Anthropic's Messages API through the official ``anthropic`` SDK (``--model anthropic:claude-...``).

OpenAI-compatible shims to Claude have neither log-probabilities nor batches, and their usage leaves out the prompt
cache; this backend speaks the Messages API itself: system turns go to ``system``, a completion prompt is sent as one
user turn, ``n`` replies are ``n`` calls (the API draws one per call). The Messages API of the SDK this is built on
(2.x) takes no sampling parameters, so ``temperature``, ``top_p`` and ``seed`` do not reach the model (they still key
the cache, so an epoch's request is its own call; nor can they clash with thinking, which wants the temperature
unset). ``--reasoning-budget N`` turns extended thinking on (``thinking: {type: enabled, budget_tokens: N}``; N of at
least 1024, refused before any call otherwise), within ``max_tokens`` (the run adds N to the answer's budget).
``--reasoning-effort LEVEL`` turns adaptive thinking on instead, which the newest models want (the SDK warns that
``enabled`` is deprecated for them): ``thinking: {type: adaptive}`` and ``output_config: {effort: LEVEL}``, Claude
deciding how much to think within ``max_tokens`` (a ``--reasoning-budget`` beside it, still of at least 1024, is then
only that room, not a ``budget_tokens``); Anthropic's levels are ``low`` to ``max``, others are refused before any call.
The effort goes with chat requests only, as on every backend: a completion prompt (sent as a user turn) gets extended
thinking from a budget, or none. The reply's ``text`` blocks are the answer; its ``thinking`` blocks are the thought,
kept apart (``reply_choice``); its ``tool_use`` blocks are the tools it calls (``Request.tools`` go out as the API's
tools, results come back as ``tool_result`` blocks). A reply that calls tools after thinking keeps its blocks as they
came (``Choice.replay``), and a tool loop's next request sends them back unchanged, signatures and all, as the API
requires while thinking is on (the blocks sent key the response cache); parsers still read only the text. Usage:
prompt tokens are ``input_tokens`` plus the cache's reads and writes (so they count the whole prompt, as OpenAI's do),
``cached_tokens`` the cache reads, ``reasoning_tokens`` the thinking tokens where the API reports them. Retries (429,
5xx, dropped connections) are the SDK's, ``--max-retries`` of them; no reply is read past ``--max-reply-mb``
(``backends.anthropic_http``). The key is read from ``ANTHROPIC_API_KEY`` (or ``--api-key-env``); it is registered
for redaction and only ever sent in the SDK's ``x-api-key`` header. Message Batches: ``batch.anthropic``.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from typing import Any

from structbench.backends.base import (
    PROMPT_TOO_LONG,
    TIMEOUT,
    Backend,
    BackendError,
    Choice,
    GenerationParams,
    Message,
    Request,
    Response,
    ToolCall,
    reply_choice,
    token_count,
)
from structbench.backends.factory import (
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT,
    REPLY_TOO_LARGE,
    BackendSpec,
    reply_too_large,
)
from structbench.core import untrusted
from structbench.core.errors import UsageError
from structbench.core.redact import redact, register_secret

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The ``output_config.effort`` levels of the Messages API (``OutputConfigParam`` of the SDK)."""
MIN_THINKING_BUDGET = 1024
"""The smallest ``thinking.budget_tokens`` the Messages API takes (it must also be below ``max_tokens``, which holds:
the run adds the budget to the answer's)."""
STOP_REASONS = {"max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop", "refusal": "refusal",
                "tool_use": "tool_calls"}
"""Anthropic's ``stop_reason`` as the ``finish_reason`` parsers and thought splitting know."""
THINKING_BLOCKS = ("thinking", "redacted_thinking")
"""Content blocks of a thought: a reply that calls tools and holds one is kept whole (``Choice.replay``), to be sent
back unchanged with the tools' results."""
RETRY_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
"""Error types of a batch line worth sending again."""


def too_long(message: str) -> bool:
    """Whether an error says the prompt does not fit the model's context (``prompt is too long``)."""
    low = message.lower()
    return "prompt is too long" in low or "context window" in low or "too many tokens" in low


class AnthropicBackend(Backend):
    """Chat requests to ``{base_url}/v1/messages``."""

    backend = "anthropic"
    remote = True
    forkable = True
    model_options = ()
    supports_tools = True
    supports_reasoning_budget = True
    reasoning_efforts = EFFORTS

    def __init__(self, model: str, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None,
                 concurrency: int = 8, timeout: float = DEFAULT_TIMEOUT, max_retries: int = 6,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self.model = model
        self.max_reply_bytes = max_reply_bytes
        """``--max-reply-mb``: the largest reply body read (``backends.anthropic_http``), and the largest line of a
        batch's results (``batch.anthropic``)."""
        self.base_url = base_url.rstrip("/")
        register_secret(api_key)
        self._api_key = api_key
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self._semaphore = asyncio.Semaphore(concurrency)
        self._client: Any = None

    def client(self) -> Any:
        """The SDK's async client, created inside the running event loop on first use (so a forked worker
        creates its own)."""
        if self._client is None:
            import anthropic

            from structbench.backends.anthropic_http import capped_client

            self._client = anthropic.AsyncAnthropic(api_key=self._api_key or "no-key", base_url=self.base_url,
                                                    timeout=self.timeout, max_retries=self.max_retries,
                                                    http_client=capped_client(self.max_reply_bytes))
        return self._client

    def before_fork(self) -> None:
        """The SDK (1.7 s of imports in anthropic 2.x, which loads every type of the API at once) and its client."""
        import structbench.backends.anthropic_http  # noqa: F401  (imports anthropic)

    def reasoning_budget_problem(self, budget: int) -> str | None:
        if budget < MIN_THINKING_BUDGET:
            return (f"Anthropic's extended thinking takes a budget of at least {MIN_THINKING_BUDGET} tokens "
                    f"(thinking.budget_tokens); give --reasoning-budget {MIN_THINKING_BUDGET} or more, or none to run "
                    "without thinking")
        return None

    def params(self, request: Request) -> dict[str, Any]:
        """The Messages API body of ``request`` (one reply: ``n`` is drawn by as many calls): a reasoning effort turns
        adaptive thinking on at that effort (``output_config.effort``), else a reasoning budget turns extended
        thinking on with that budget (``thinking.budget_tokens``); either thinks within ``max_tokens``."""
        p = request.params
        system = [m.content for m in request.messages or () if m.role == "system"]
        if request.messages is not None:
            messages = api_messages(request.messages)
        else:
            messages = [{"role": "user", "content": request.prompt or ""}]
        body: dict[str, Any] = {"model": self.model, "max_tokens": p.max_tokens, "messages": messages}
        if system:
            body["system"] = "\n\n".join(system)
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in request.tools]
        if p.stop:
            body["stop_sequences"] = list(p.stop)
        if p.reasoning_effort is not None:
            body["thinking"] = {"type": "adaptive"}
            body["output_config"] = {"effort": p.reasoning_effort}
        elif p.reasoning_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": p.reasoning_budget}
        return body

    async def generate(self, request: Request) -> Response:
        body = self.params(request)
        async with self._semaphore:
            messages = await asyncio.gather(*(self._call(body) for _ in range(request.params.n)))
        return combine(messages, request.params)

    async def _call(self, body: dict[str, Any]) -> dict[str, Any]:
        import anthropic

        from structbench.backends.anthropic_http import RefusedReply

        where = f"{self.base_url}/v1/messages"
        try:
            message = await self.client().messages.create(**body)
        except RefusedReply as err:
            said = reply_too_large(self.max_reply_bytes, str(err)) if err.cause == REPLY_TOO_LARGE else str(err)
            raise BackendError(f"{where}: {said}", cause=err.cause) from None
        except anthropic.APITimeoutError:
            raise BackendError(f"{where}: timed out: no complete reply within {self.timeout:g} s (--timeout)",
                               cause=TIMEOUT) from None
        except anthropic.APIConnectionError as err:
            raise BackendError(redact(f"{where}: cannot connect: {err}"), cause="cannot connect") from None
        except anthropic.APIStatusError as err:
            text = redact(str(err))
            if err.status_code in (400, 413) and too_long(text):
                raise BackendError(f"{where}: the prompt does not fit the model's context (with max_tokens "
                                   f"{body['max_tokens']}): {text}", cause=PROMPT_TOO_LONG) from None
            raise BackendError(f"{where}: HTTP {err.status_code}: {text}", cause=f"HTTP {err.status_code}") from None
        data: dict[str, Any] = message.model_dump(mode="json", exclude_unset=True)  # the blocks as they came
        return data

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def api_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Chat turns as the Messages API takes them: an assistant turn that came with thinking blocks as it came
    (``Message.replay``: the API wants them back unchanged in a tool loop), another's tool calls as ``tool_use``
    blocks after its text, and tool results as ``tool_result`` blocks of one user turn (consecutive results together,
    as the API wants turns to alternate)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.role == "assistant" and m.replay is not None:  # its thinking blocks as they came, signed
            out.append({"role": "assistant", "content": list(m.replay)})
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c.arguments)}
                       for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the ``input`` object of a ``tool_use`` block ({} where they are not a JSON object)."""
    try:
        value = untrusted.loads(arguments)
    except ValueError:  # (not JSON, or nested deeper than ``untrusted.MAX_NESTING``)
        return {}
    return value if isinstance(value, dict) else {}


def message_choice(message: dict[str, Any], params: GenerationParams) -> Choice:
    """One Messages API reply as a choice: its text blocks the answer, its thinking blocks the thought."""
    blocks = message.get("content")
    if not isinstance(blocks, list):
        raise BackendError(f"anthropic: the reply has no content blocks ({str(blocks)[:200]})", cause="unusable reply")
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"),
                                                                                                          str)]
    thoughts = [b["thinking"] for b in blocks
                if isinstance(b, dict) and b.get("type") == "thinking" and isinstance(b.get("thinking"), str)]
    stop = message.get("stop_reason")
    finish = STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None
    if finish == "refusal" and not texts:
        raise BackendError("anthropic: the model refused to answer (stop_reason refusal)", cause="unusable reply")
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    details = usage.get("output_tokens_details") if isinstance(usage, dict) else None
    thinking = _count(details.get("thinking_tokens")) if isinstance(details, dict) else None
    calls = tuple(ToolCall(id=str(b.get("id", "")), name=str(b.get("name", "")), arguments=json.dumps(b.get("input")))
                  for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
    choice = reply_choice("".join(texts), params, finish_reason=finish, field="\n\n".join(thoughts) or None,
                          reasoning_tokens=thinking)
    if not calls:
        return choice
    signed = any(isinstance(b, dict) and b.get("type") in THINKING_BLOCKS for b in blocks)
    return replace(choice, tool_calls=calls, replay=tuple(blocks) if signed else None)


def message_usage(message: dict[str, Any]) -> tuple[int | None, int | None, int | None, int | None]:
    """(prompt, completion, reasoning, cached) tokens of one reply; None where the API did not say."""
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None, None, None, None
    raw = {k: usage.get(k) for k in ("cache_read_input_tokens", "cache_creation_input_tokens")}
    read, written = (_count(v) for v in raw.values())
    impossible = any(v is not None and _count(v) is None for v in raw.values())  # a part unknown: the sum is too
    uncached = _count(usage.get("input_tokens"))
    prompt = None if uncached is None or impossible else uncached + (read or 0) + (written or 0)
    details = usage.get("output_tokens_details")
    thinking = _count(details.get("thinking_tokens")) if isinstance(details, dict) else None
    return prompt, _count(usage.get("output_tokens")), thinking, read


def combine(messages: list[dict[str, Any]], params: GenerationParams) -> Response:
    """The response of ``n`` replies (one per call): their choices, and their usage summed (None: unknown)."""
    choices = tuple(message_choice(m, params) for m in messages)
    counts = [message_usage(m) for m in messages]

    def total(i: int) -> int | None:
        values = [c[i] for c in counts]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    return Response(choices=choices, prompt_tokens=total(0), completion_tokens=total(1), reasoning_tokens=total(2),
                    cached_tokens=total(3))


_count = token_count


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model anthropic:NAME needs a model name, e.g. anthropic:claude-sonnet-4-5")
    key_env = DEFAULT_KEY_ENV if spec.api_key_env == "OPENAI_API_KEY" else spec.api_key_env
    api_key = os.environ.get(key_env)
    base_url = spec.base_url or os.environ.get("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL)
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "," in base_url:
        raise UsageError(f"--base-url {base_url!r}: expected one http(s)://HOST[:PORT] for the anthropic backend")
    if not api_key and parts.hostname == "api.anthropic.com":
        raise UsageError(f"api.anthropic.com needs an API key: set the environment variable {key_env}")
    return AnthropicBackend(model=spec.name, base_url=base_url, api_key=api_key, concurrency=spec.concurrency,
                            timeout=spec.timeout, max_retries=spec.max_retries, max_reply_bytes=spec.max_reply_bytes)
