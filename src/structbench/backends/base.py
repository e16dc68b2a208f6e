"""The model interface every backend implements, and the request/response types strategies use."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from structbench.backends.reasoning import ThinkTags, split_reasoning
from structbench.backends.stats import CallStats

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call (a tool of ``Request.tools``): what backends with tool calling send."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The JSON Schema of the call's arguments object."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for (``tool_calls`` of OpenAI's API, ``tool_use`` of Anthropic's)."""

    id: str
    name: str
    arguments: str
    """The arguments object as JSON text, as the model wrote it (it may not parse: the tool then says so)."""

    def to_json(self) -> dict[str, Any]:
        """OpenAI's form, which the cache key, exports and the ``openai`` backend use."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        function = data.get("function") or {}
        return cls(id=str(data.get("id", "")), name=str(function.get("name", "")),
                   arguments=str(function.get("arguments", "")))


@dataclass(frozen=True)
class Message:
    """One chat turn: a ``tool`` turn carries the result of the call ``tool_call_id``; an assistant turn may carry
    the calls it asked for."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    replay: tuple[dict[str, Any], ...] | None = None
    """An assistant turn's content as its backend returned it (``Choice.replay``), which that backend sends back as
    it is; never in ``to_json`` (so exports show the turn's text and calls), but in the cache key
    (``cache_fields``): two turns of the same text can carry other thoughts and signatures."""

    def to_json(self) -> dict[str, Any]:
        """OpenAI's chat message form (tool fields only where present, so a plain turn's form never changes)."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [c.to_json() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters; all of them are part of the cache key."""

    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    """Number of samples to draw for the same prompt (self-consistency)."""
    stop: tuple[str, ...] = ()
    seed: int | None = None
    logprobs: bool = False
    """Ask for the log-probabilities of the generated tokens (first-token confidence)."""
    top_logprobs: int = 0
    response_format: dict[str, Any] | None = None
    """An OpenAI ``response_format`` (JSON Schema structured output) where the backend supports it."""
    min_tokens: int = 0
    """Generate at least this many tokens before an end of sequence may end the reply (vLLM's
    ``min_tokens``); only backends with ``supports_min_tokens`` enforce it, the others ignore it."""
    choices: tuple[str, ...] = ()
    """Constrain the reply to exactly one of these strings (guided choice, as vLLM's ``guided_choice``) where
    the backend supports it (``supports_choices``); the others ignore it, like ``min_tokens``, and their
    free reply is parsed as usual. ``min_tokens`` does not apply to a constrained reply."""
    chat_template_args: dict[str, Any] | None = None
    """Keyword arguments for the server's chat template (``chat_template_kwargs`` of vLLM, SGLang and the
    llama.cpp server, e.g. ``enable_thinking``); only backends with ``supports_chat_template_args`` take them."""
    reasoning_effort: str | None = None
    """How hard a reasoning model should think (``reasoning_effort`` of OpenAI's API, vLLM and SGLang; Anthropic's
    adaptive thinking at ``output_config.effort``): ``low``, ``medium``, ``high`` ...; only backends whose
    ``reasoning_efforts`` hold it take it."""
    think_tags: ThinkTags | None = None
    """The (opening, closing) tag pairs that delimit a thought in the reply; None: ``<think>``/``</think>``."""
    thought_opened: bool = False
    """The reply begins inside a thought (the chat template wrote the opening tag): a reply without a closing tag
    is all thought. Local backends see it in the rendered prompt themselves."""
    reasoning_budget: int = 0
    """Of ``max_tokens``, the tokens set aside for the thought (``--reasoning-budget``, which the run adds to the
    answer's budget); 0: none. Backends with ``supports_reasoning_budget`` send it as the model's thinking budget
    (Anthropic's extended thinking); the others only see the larger ``max_tokens``."""


@dataclass(frozen=True)
class Request:
    """A chat (``messages``) or completion (``prompt``) request: exactly one of the two is set."""

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    tools: tuple[ToolSpec, ...] = ()
    """Functions the model may call (backends with ``supports_tools``); part of the cache key when set."""

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a Request has either messages or a prompt, not both and not neither")

    @classmethod
    def chat(cls, user: str, *, system: str | None = None, **params: Any) -> Request:
        """A one-turn chat request, optionally with a system message."""
        msgs = ((Message("system", system),) if system else ()) + (Message("user", user),)
        return cls(messages=msgs, params=GenerationParams(**params))

    @property
    def kind(self) -> Literal["chat", "completion"]:
        return "chat" if self.messages is not None else "completion"

    def prompt_payload(self) -> str | list[dict[str, Any]]:
        """The prompt as exported and stored: the text, or the list of chat messages (OpenAI's form)."""
        if self.messages is not None:
            return [m.to_json() for m in self.messages]
        assert self.prompt is not None
        return self.prompt

    def with_reply(self, reply: str, user: str) -> Request:
        """The follow-up chat request: this conversation, the model's ``reply``, then a new ``user`` turn."""
        if self.messages is None:
            raise ValueError("follow-up turns need a chat request")
        msgs = (*self.messages, Message("assistant", reply), Message("user", user))
        return Request(messages=msgs, params=self.params, tools=self.tools)


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token, its log-probability and the most likely alternatives at that position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Choice:
    """One generated continuation: the answer apart from the thought before it (``backends.reasoning``)."""

    text: str
    """The answer: what parsers read. Never holds the thought."""
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    """The thought a reasoning model wrote before the answer (inline between think tags, or in the reply's
    reasoning field); None when there was none."""
    reasoning_tokens: int | None = None
    """The thought's length in tokens, where the backend knows it (a local tokenizer, or the server's usage)."""
    reasoning_cut_off: bool = False
    """The reply ended inside its thought (the token budget ran out there): it has no answer, ``text`` is empty."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tools the model asked to call (a request with ``tools``, on a backend with ``supports_tools``)."""
    raw: str | None = None
    """The reply as the model wrote it, its inline thought included, where the answer was taken out of it (None:
    the same as ``text``): what a paper's released reader read (RelationalFactQA's ``reading=galois``), never
    structbench's parsers."""
    replay: tuple[dict[str, Any], ...] | None = None
    """The reply's content as the provider returned it, where a conversation's next request must send it back
    unchanged (Anthropic's thinking blocks with their signatures, in a tool loop with thinking on): the backend's to
    read, through ``Message.replay``, never a parser's. None for every other reply."""

    @property
    def as_written(self) -> str:
        """The reply as the model wrote it (``raw``, else ``text``)."""
        return self.text if self.raw is None else self.raw


def reply_choice(
    text: str,
    params: GenerationParams,
    *,
    finish_reason: str | None = None,
    logprobs: tuple[TokenLogprob, ...] | None = None,
    field: str | None = None,
    opened: bool = False,
    reasoning_tokens: int | None = None,
    count_tokens: Callable[[str], int] | None = None,
) -> Choice:
    """A generated reply as a ``Choice``: the answer apart from the thought (``split_reasoning`` with the request's
    think tags; ``opened``: the prompt ended inside a thought). A reply without a thought is kept as it came. The
    thought's tokens are ``reasoning_tokens`` when known, else counted with ``count_tokens`` when given; a
    hidden thought (a positive ``reasoning_tokens`` and no thought in the reply, OpenAI's o-series) keeps its count.
    Log-probabilities are kept only for a reply without a thought: their first token would be the thought's."""
    split = split_reasoning(text, tags=params.think_tags, opened=opened or params.thought_opened, field=field,
                            finish_reason=finish_reason)
    if split.reasoning is None:
        reasoning_tokens = reasoning_tokens or None  # a count of 0 is a model that did not think
    elif reasoning_tokens is None and count_tokens is not None:
        reasoning_tokens = count_tokens(split.reasoning)
    if split.reasoning is None and not split.cut_off:
        return Choice(text=split.answer, logprobs=logprobs, finish_reason=finish_reason,
                      reasoning_tokens=reasoning_tokens)
    return Choice(text=split.answer, finish_reason=finish_reason, reasoning=split.reasoning,
                  reasoning_tokens=reasoning_tokens, reasoning_cut_off=split.cut_off,
                  raw=text if text != split.answer else None)


@dataclass(frozen=True)
class Response:
    """What a backend returns: ``n`` choices and token usage."""

    choices: tuple[Choice, ...]
    prompt_tokens: int | None = None
    """Tokens of the prompt, cached ones included (None: the server did not say)."""
    completion_tokens: int | None = None
    """Tokens generated over all choices, reasoning ones included (None: the server did not say)."""
    cached: bool = False
    """True when the response came from the response cache rather than the model."""
    reasoning_tokens: int | None = None
    """Of ``completion_tokens``, those spent thinking over all choices (OpenAI's ``completion_tokens_details.
    reasoning_tokens``, Anthropic's ``thinking_tokens``, a local backend's own count); None: not reported."""
    cached_tokens: int | None = None
    """Of ``prompt_tokens``, those the provider served from its prompt cache (OpenAI's ``prompt_tokens_details.
    cached_tokens``, Anthropic's ``cache_read_input_tokens``); None: not reported."""
    batch: bool = False
    """Answered through a batch API (``--batch``), at its price: kept with the answer in the response cache, so a copy
    reused later is priced as it was paid."""

    def __post_init__(self) -> None:
        # whatever the backend (a plugin's too): a count no call can have is unknown, never added nor subtracted
        for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens"):
            value = getattr(self, name)
            if value is not None and token_count(value) is None:
                object.__setattr__(self, name, None)

    @property
    def text(self) -> str:
        return self.choices[0].text

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (without ``cached``, which describes where a copy came from)."""
        return {
            "choices": [
                {
                    "text": c.text,
                    "logprobs": None if c.logprobs is None else [asdict(lp) for lp in c.logprobs],
                    "finish_reason": c.finish_reason,
                    "reasoning": c.reasoning,
                    "reasoning_tokens": c.reasoning_tokens,
                    "reasoning_cut_off": c.reasoning_cut_off,
                    **({"tool_calls": [t.to_json() for t in c.tool_calls]} if c.tool_calls else {}),
                    **({"raw": c.raw} if c.raw is not None else {}),
                    **({"replay": list(c.replay)} if c.replay is not None else {}),
                }
                for c in self.choices
            ],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_tokens": self.cached_tokens,
            **({"batch": True} if self.batch else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Response:
        """A response from ``to_json``'s form. One stored before choices kept the thought apart (no ``reasoning``
        key) has its text split now, as a backend splits a reply, so no cached thought ever reaches a parser."""
        choices = []
        for c in data["choices"]:
            logprobs = None if c.get("logprobs") is None else tuple(TokenLogprob(**lp) for lp in c["logprobs"])
            finish = c.get("finish_reason")
            if "reasoning" in c:
                raw, replay = c.get("raw"), c.get("replay")
                calls = tuple(ToolCall.from_json(t) for t in c.get("tool_calls") or ())
                choices.append(Choice(text=c["text"], logprobs=logprobs, finish_reason=finish,
                                      reasoning=c["reasoning"], reasoning_tokens=c.get("reasoning_tokens"),
                                      reasoning_cut_off=bool(c.get("reasoning_cut_off")), tool_calls=calls,
                                      raw=raw if isinstance(raw, str) else None,
                                      replay=tuple(replay) if isinstance(replay, list) else None))
                continue
            split = split_reasoning(c["text"], finish_reason=finish)
            choices.append(Choice(text=split.answer, logprobs=logprobs, finish_reason=finish, reasoning=split.reasoning,
                                  reasoning_cut_off=split.cut_off,
                                  raw=c["text"] if c["text"] != split.answer else None))
        return cls(
            choices=tuple(choices),
            prompt_tokens=_count(data.get("prompt_tokens")),
            completion_tokens=_count(data.get("completion_tokens")),
            reasoning_tokens=_count(data.get("reasoning_tokens")),
            cached_tokens=_count(data.get("cached_tokens")),
            batch=data.get("batch") is True,
        )


MAX_CALL_TOKENS = 100_000_000
"""More tokens than one call can use (a hundred times the longest context of any model): a count above it is a
server's error."""


def token_count(value: Any) -> int | None:
    """A token count as a server reported it, or None: absent, not an integer, negative or above
    ``MAX_CALL_TOKENS`` (a server that says -1,000,000 must not make a budget grow): an impossible count is an
    unknown one."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_CALL_TOKENS:
        return value
    return None


_count = token_count
"""A stored token count (absent in cache entries written before it was kept)."""


def thought_tokens(choices: tuple[Choice, ...]) -> int:
    """The reasoning tokens of a local backend's choices (it counts every thought it splits off; none: 0)."""
    return sum(c.reasoning_tokens or 0 for c in choices)


PROMPT_TOO_LONG = "prompt too long"
"""The ``cause`` of a request whose prompt (with its reply budget) does not fit the model's context. The same
request can never succeed, so it is never retried and does not count towards the circuit breaker; the runner
records the sample as not fitting the model (``error_kind`` ``context``), apart from model errors, and a resumed
run does not send it again. Every backend that knows the context raises it (``openai`` from the server's 400,
``llamacpp``, ``hf`` and ``vllm`` from their own checks)."""

TIMEOUT = "timeout"
"""The ``cause`` of a request that got no complete reply within ``--timeout``."""

CANNOT_CONNECT = "cannot connect"
"""The ``cause`` of a request that reached no server (the connection was refused, the host is unknown). When no
call of the run has been answered yet, the server is not there (a wrong port, a server not started): the request
is not retried and the run stops at once (``runner.control``), instead of scoring every sample as wrong."""


class BackendError(Exception):
    """A model call failed for good (after retries); recorded as the sample's error.

    ``cause`` names the kind of failure in a few words (``HTTP 401``, ``timeout``, ``unusable reply``,
    ``PROMPT_TOO_LONG``): the circuit breaker stops a run when many calls in a row fail with the same cause."""

    def __init__(self, message: str, cause: str = "model error") -> None:
        super().__init__(message)
        self.cause = cause

    @property
    def prompt_too_long(self) -> bool:
        """Whether the prompt does not fit the model's context (``PROMPT_TOO_LONG``)."""
        return self.cause == PROMPT_TOO_LONG


def unusable_reason(response: Response) -> str | None:
    """Why ``response`` cannot be used (and so must never be cached), or None when it can."""
    if not isinstance(response.choices, tuple) or not response.choices:
        return "the reply has no choices"
    for choice in response.choices:
        if not isinstance(choice, Choice):
            return f"a choice is a {type(choice).__name__}"
        if not isinstance(choice.text, str):
            return f"a choice's text is a {type(choice.text).__name__}, not a string"
        if choice.reasoning is not None and not isinstance(choice.reasoning, str):
            return f"a choice's reasoning is a {type(choice.reasoning).__name__}, not a string"
    return None


class Backend(ABC):
    """A model client. Implementations must be safe to call concurrently from one event loop."""

    backend: str
    """The backend's registered name (``openai``, ``llamacpp`` ...)."""
    model: str
    """The model's name as the backend knows it; part of the cache key."""
    base_url: str | None = None
    """The server address where there is one; part of the cache key."""
    cacheable: bool = True
    """Whether responses go through the response cache (the oracle's do not)."""
    supports_logprobs: bool = False
    supports_min_tokens: bool = False
    """Whether ``GenerationParams.min_tokens`` is enforced (otherwise it is ignored and not in the cache key)."""
    supports_choices: bool = False
    """Whether ``GenerationParams.choices`` is enforced (constrained decoding)."""
    supports_chat_template_args: bool = False
    """Whether ``GenerationParams.chat_template_args`` reach the model (a run that sets them refuses others)."""
    reasoning_efforts: tuple[str, ...] = ()
    """The ``GenerationParams.reasoning_effort`` levels that reach the model (a run that sets another is refused
    before any call); empty: none do."""
    supports_reasoning_budget: bool = False
    """Whether ``GenerationParams.reasoning_budget`` reaches the model as a thinking budget (Anthropic's extended
    thinking): it then keys the cache, and ``reasoning_budget_problem`` says which budgets the model refuses."""
    supports_tools: bool = False
    """Whether the model is offered ``Request.tools`` as function tools and its calls come back as
    ``Choice.tool_calls``; without it a tool-using strategy speaks a text protocol (``strategies.tools``)."""
    model_options: tuple[str, ...] | None = ()
    """The ``--model-option`` keys this backend takes (load settings such as ``n_ctx``); ``None``: any key,
    checked by the backend itself (``hf`` passes unknown keys to ``from_pretrained``, ``vllm`` to its engine)."""
    remote: bool = False
    """Whether the model runs elsewhere (a server), so a run defaults to one worker process per core."""
    forkable: bool = False
    """Whether worker processes may be forked with a copy of this backend (it holds no model, device or
    thread of its own); ``--workers`` above 1 needs it."""

    _stats: CallStats | None = None

    @property
    def stats(self) -> CallStats:
        """This backend's live call counters (in flight, retries, timeouts, tokens), shown on the progress line."""
        if self._stats is None:
            self._stats = CallStats()
        return self._stats

    async def context_window(self) -> int | None:
        """The model's context in tokens (prompt and reply together) where it is known before any request: a
        load setting of a local model, or what the server says about the model; None when unknown. A run leaves
        out up front the samples a benchmark knows cannot fit (``Benchmark.model_context``)."""
        return None

    @abstractmethod
    async def generate(self, request: Request) -> Response:
        """Run one request and return its choices; raise ``BackendError`` when it cannot succeed."""

    async def aclose(self) -> None:  # noqa: B027  (optional hook; most backends hold nothing)
        """Release connections or model memory."""

    def reasoning_budget_problem(self, budget: int) -> str | None:
        """Why the model would refuse a ``--reasoning-budget`` of ``budget`` tokens (checked before any request is
        sent), or None when it takes it."""
        return None

    def before_fork(self) -> None:  # noqa: B027  (optional hook; most backends load nothing on first use)
        """Load, in the run's process just before its workers fork, what each worker would otherwise load on its first
        call (a client SDK's modules): the workers then share it, instead of each importing it with requests waiting."""

    @property
    def title(self) -> str:
        """The model as a reader knows it, and where it runs (``Qwen/Qwen2.5-7B served at URL``), for the summary
        after a run; ``describe`` is what the manifest keys on."""
        where = f" served at {self.base_url}" if self.base_url else ""
        return f"{self.model}{where} ({self.backend} backend)"

    def describe(self) -> dict[str, Any]:
        """What the manifest records about this backend (never secrets)."""
        return {"backend": self.backend, "model": self.model, "base_url": self.base_url}


CACHE_KEY_FIELDS = (
    "backend",
    "model",
    "base_url",
    "kind",
    "messages_or_prompt",
    "max_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "seed",
    "logprobs",
    "top_logprobs",
    "response_format",
)
"""Exactly the request fields that identify a cached response, plus ``min_tokens`` and ``choices`` when they
are set and the backend enforces them, ``reasoning_budget`` when it is set and reaches the model
(``supports_reasoning_budget``), ``tools``, ``chat_template_args``, ``reasoning_effort``, ``think_tags`` and
``thought_opened`` when they are set (the last two decide how the stored reply is split), ``replays`` when a turn
carries one (``Message.replay``: what is sent in that turn's place, one entry per message, null for the others),
and the ``epoch`` of a repeat (``--epochs``) above 0 (so keys of requests without them never change). Left out on
purpose: API keys, timeouts, retry settings, concurrency, and anything about the run (strategy name, sample id), so
that the same request from another run or strategy is a cache hit."""


def sampling_fields(p: GenerationParams) -> dict[str, Any]:
    """The sampling parameters every request carries, as JSON values (in cache keys and exports)."""
    return {
        "max_tokens": p.max_tokens,
        "temperature": p.temperature,
        "top_p": p.top_p,
        "n": p.n,
        "stop": list(p.stop),
        "seed": p.seed,
        "logprobs": p.logprobs,
        "top_logprobs": p.top_logprobs,
        "response_format": p.response_format,
    }


def cache_fields(backend: Backend, request: Request, *, epoch: int = 0) -> bytes:
    """``CACHE_KEY_FIELDS`` of a request as canonical JSON (sorted keys, compact): hashed, and stored; an
    ``epoch`` above 0 (a repeat, ``--epochs``) is added, so a repeat is a new call."""
    p = request.params
    fields: dict[str, Any] = {
        "backend": backend.backend,
        "model": backend.model,
        "base_url": backend.base_url,
        "kind": request.kind,
        "messages_or_prompt": request.prompt_payload(),
        **sampling_fields(p),
    }
    assert tuple(fields) == CACHE_KEY_FIELDS
    if p.min_tokens and backend.supports_min_tokens and not p.choices:
        fields["min_tokens"] = p.min_tokens
    if p.choices and backend.supports_choices:
        fields["choices"] = list(p.choices)
    if p.reasoning_budget and backend.supports_reasoning_budget:
        fields["reasoning_budget"] = p.reasoning_budget
    if request.tools:
        fields["tools"] = [t.to_json() for t in request.tools]
    if p.chat_template_args:
        fields["chat_template_args"] = p.chat_template_args
    if p.reasoning_effort is not None:
        fields["reasoning_effort"] = p.reasoning_effort
    if p.think_tags is not None:
        fields["think_tags"] = [list(pair) for pair in p.think_tags]
    if p.thought_opened:
        fields["thought_opened"] = True
    replays = [None if m.replay is None else list(m.replay) for m in request.messages or ()]
    if any(r is not None for r in replays):  # sent in those turns' place: their text alone does not say what was sent
        fields["replays"] = replays
    if epoch:
        fields["epoch"] = epoch
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def cache_key(backend: Backend, request: Request, fields: bytes | None = None) -> str:
    """A stable SHA-256 over ``CACHE_KEY_FIELDS`` (pass ``fields`` when already computed)."""
    return hashlib.sha256(fields if fields is not None else cache_fields(backend, request)).hexdigest()
