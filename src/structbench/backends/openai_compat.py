"""Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, TGI ...) over HTTP.

Bounded concurrency; retries with exponential backoff and full jitter on 429, 5xx, connection errors and the
server's own faults with status 200 (a body that is not JSON or is cut off, no choices, an error object),
waiting at least as long as a ``Retry-After`` header asks. A request that times out is tried once more, never
more (``TIMEOUT_RETRIES``): on a healthy server a timeout means the reply takes longer than ``--timeout``, and
the same request with the same token budget takes as long again (a small server even goes on generating the
abandoned reply). A prompt that does not fit the model's context (each server words its 400 differently,
``server_context``) is never retried: its ``BackendError`` has the cause ``PROMPT_TOO_LONG``. A reply whose choice is
unusable (null or non-text content) is a model error at once: the same request would get the same
reply. Only validated replies are returned, so only they can reach the response cache. Bodies are read
up to ``max_reply_bytes``. A reasoning model's thought is kept apart from its answer (``reply_choice``): in
``message.reasoning_content`` or ``message.reasoning``, in thinking content parts, or inline between think tags;
a reply with a thought and no content that ran out of tokens, or whose hidden reasoning (``usage`` reports
``reasoning_tokens``) took the whole budget, is an answerless choice cut off in its thought. The API key is read
from the environment variable the spec names and only ever put in the Authorization header; it and a password
in the URL are registered for redaction.

Several base URLs (``--base-url A,B``: replicas serving the same model) share the requests: each goes to
the replica with the fewest requests outstanding; a request that fails in a way worth retrying is retried
at once on another replica, and the failing replica is out of rotation for a while that doubles with each
failure in a row (from ``REPLICA_REST`` up to ``REPLICA_REST_MAX`` seconds), then tried again. The cache
key and the manifest name the set of replicas, never the one that answered.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import os
import random
import time
from dataclasses import replace
from typing import Any
from urllib.parse import SplitResult, urlsplit

import orjson

from structbench.backends.base import (
    CANNOT_CONNECT,
    PROMPT_TOO_LONG,
    TIMEOUT,
    Backend,
    BackendError,
    Choice,
    GenerationParams,
    Request,
    Response,
    TokenLogprob,
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
from structbench.backends.http import aiohttp
from structbench.backends.server_context import context_refusal, listed_context, props_context
from structbench.core.errors import UsageError
from structbench.core.redact import redact, redact_url, register_secret, split_userinfo

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
REPLICA_REST = 1.0
"""Seconds a replica is left out after a failure (doubling with each failure in a row)."""
REPLICA_REST_MAX = 30.0
REST_DOUBLINGS = 16
"""The rest doubles at most this many times (far past ``REPLICA_REST_MAX``)."""
MAX_RETRY_AFTER = 120.0
"""Longest ``Retry-After`` honoured, in seconds: a server cannot park a request slot for hours."""
TIMEOUT_RETRIES = 1
"""Times a request that timed out is sent again (within ``--max-retries``): once, for a connection that stalled;
a reply longer than ``--timeout`` would only time out again."""
MODELS_TIMEOUT = 10.0
"""Seconds to wait for the server's model list (``/models``), asked once before a run for the model's context."""
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The ``reasoning_effort`` values OpenAI's API takes (vLLM and SGLang pass them to the chat template)."""


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, base: float = 0.5, cap: float = 60.0) -> float:
    """Full-jitter exponential backoff: uniform in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap, base * (2**attempt)))


class _ServerFault(Exception):
    """A reply with status 200 that carries no answer because of the server (retried like a 5xx)."""


class _UnusableReply(Exception):
    """A well-formed reply whose content cannot be used (a model error, not retried within the run)."""


class _ReplyTooLarge(Exception):
    """The body exceeded ``max_reply_bytes``; it was not read further."""


class TransportError(Exception):
    """A request that got no reply, for a reason worth trying again (a dropped connection), as a transport other than
    this module's HTTP client says it (``OpenAIBackend._send``); ``cause`` names the failure for the breaker."""

    def __init__(self, message: str, cause: str = "cannot connect") -> None:
        super().__init__(message)
        self.cause = cause


def split_base_urls(text: str) -> list[str]:
    """``--base-url A,B``: the replicas' URLs, in order, each once."""
    return list(dict.fromkeys(part.strip().rstrip("/") for part in text.split(",") if part.strip()))


def shown_base_urls(text: str) -> str:
    """``--base-url`` as shown, stored and keyed: each URL with a password ``[REDACTED]``, comma-joined."""
    return ",".join(redact_url(url) for url in split_base_urls(text))


class Replica:
    """One server of the model: where it is, how it authenticates, how busy it is, whether it is resting."""

    def __init__(self, url: str, api_key: str | None) -> None:
        bare, user, password = split_userinfo(url)
        if api_key and (user or password):
            raise UsageError(
                f"--base-url {redact_url(url)} carries a user and password and an API key is set: both go in "
                "the Authorization header; drop one"
            )
        basic = base64.b64encode(f"{user or ''}:{password or ''}".encode()).decode() if user or password else None
        self.url = bare.rstrip("/")
        self.shown = redact_url(url).rstrip("/")
        """The address as shown: a password in it is ``[REDACTED]``."""
        self.headers = {"Authorization": f"Basic {basic}"} if basic else None
        self.outstanding = 0
        self.failures = 0
        """Failures in a row."""
        self.resting_until = 0.0

    def failed(self, now: float) -> None:
        self.failures += 1
        # Every request in flight counts its failure, so a dead server at high concurrency makes hundreds in a
        # row: the doubling stops long before 2 ** failures outgrows a float.
        doublings = min(self.failures - 1, REST_DOUBLINGS)
        self.resting_until = now + min(REPLICA_REST_MAX, REPLICA_REST * 2**doublings)

    def succeeded(self) -> None:
        self.failures = 0
        self.resting_until = 0.0


class OpenAIBackend(Backend):
    """Chat and completion requests to ``{base_url}/chat/completions`` and ``{base_url}/completions``."""

    backend = "openai"
    supports_logprobs = True
    remote = True
    forkable = True
    supports_chat_template_args = True
    model_options = ("n_ctx",)
    reasoning_efforts = REASONING_EFFORTS
    supports_tools = True

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 6,
        backoff_base: float = 0.5,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        n_ctx: int | None = None,
    ) -> None:
        self.model = model
        self.n_ctx = n_ctx
        """The served model's context as the user gave it (``--model-option n_ctx=N``), for servers whose model
        list does not say."""
        register_secret(api_key)
        self.replicas = [Replica(url, api_key) for url in split_base_urls(base_url)]
        if not self.replicas:
            raise UsageError("--base-url: no URL given")
        self.base_url: str | None = ",".join(sorted(r.shown for r in self.replicas))
        """The server address as shown, stored and keyed (several replicas: their sorted, comma-joined URLs,
        whichever answered); a password in it is ``[REDACTED]``."""
        self._api_key = api_key
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._semaphore = asyncio.Semaphore(concurrency)
        self._session: aiohttp.ClientSession | None = None
        self.reached = False
        """Whether any request has had an HTTP reply (of any status): until then, a refused connection on every
        replica means no server is there, and is not retried."""

    def _client(self) -> aiohttp.ClientSession:
        """The HTTP session, created inside the running event loop on first use."""
        if self._session is None:
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=self.concurrency),
            )
        return self._session

    def _body(self, request: Request) -> tuple[str, dict[str, Any]]:
        p = request.params
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": p.max_tokens,
            "temperature": p.temperature,
            "top_p": p.top_p,
        }
        if p.n != 1:
            body["n"] = p.n
        if p.stop:
            body["stop"] = list(p.stop)
        if p.seed is not None:
            body["seed"] = p.seed
        if p.response_format is not None:
            body["response_format"] = p.response_format
        if p.reasoning_effort is not None:
            body["reasoning_effort"] = p.reasoning_effort
        if request.messages is not None:
            body["messages"] = request.prompt_payload()
            if request.tools:
                body["tools"] = [{"type": "function", "function": t.to_json()} for t in request.tools]
            if p.chat_template_args:
                body["chat_template_kwargs"] = p.chat_template_args
            if p.logprobs:
                body["logprobs"] = True
                body["top_logprobs"] = p.top_logprobs
            return "/chat/completions", body
        body["prompt"] = request.prompt
        if p.logprobs:
            body["logprobs"] = max(1, p.top_logprobs)
        return "/completions", body

    @staticmethod
    def _parse(data: Any, chat: bool, params: GenerationParams | None = None) -> Response:
        """A validated ``Response``; raises ``_ServerFault`` or ``_UnusableReply`` for a reply without an answer."""
        if not isinstance(data, dict):
            raise _ServerFault(f"the body is a JSON {_kind(data)}, not an object")
        raw = data.get("choices")
        if not isinstance(raw, list) or not raw:
            if data.get("error"):
                raise _ServerFault(f"the body is an error: {_excerpt(data['error'])}")
            raise _ServerFault(f"the reply has no choices ({_excerpt(raw)})")
        if not all(isinstance(c, dict) for c in raw):
            raise _ServerFault(f"a choice is not a JSON object ({_excerpt(raw)})")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        details = usage.get("completion_tokens_details")
        thought = _count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
        params = params or GenerationParams()
        # the count is a choice's own only when there is one choice; that the model thought holds for every choice
        choices = tuple(_choice(c, chat, params, thought if len(raw) == 1 else None, thought=bool(thought))
                        for c in sorted(raw, key=_index))
        prompt_details = usage.get("prompt_tokens_details")
        return Response(
            choices=choices,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            reasoning_tokens=thought,
            cached_tokens=_count(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else None,
        )

    async def _post(self, url: str, data: bytes, headers: dict[str, str] | None = None
                    ) -> tuple[int, bytes, str | None]:
        async with self._client().post(url, data=data, headers=headers) as resp:
            declared = resp.content_length
            if declared is not None and declared > self.max_reply_bytes:
                raise _ReplyTooLarge(f"{declared} bytes")
            body: bytes | None
            if declared is not None and not resp.headers.get("Content-Encoding"):
                body = await resp.read()
            else:  # chunked or compressed: count what arrives, decompressed
                body = await self._read_capped(resp)
            if body is None:  # raised here, where no frame of the traceback holds the partial body
                raise _ReplyTooLarge(f"more than {self.max_reply_bytes} bytes")
            return resp.status, body, resp.headers.get("Retry-After")

    async def _read_capped(self, resp: aiohttp.ClientResponse) -> bytes | None:
        """The body, or None as soon as it exceeds ``max_reply_bytes`` (the connection is then dropped)."""
        buffer = bytearray()
        async for chunk in resp.content.iter_any():
            buffer += chunk
            if len(buffer) > self.max_reply_bytes:
                return None
        return bytes(buffer)

    async def _send(self, replica: Replica, path: str, body: dict[str, Any], data: bytes
                    ) -> tuple[int, bytes, str | None]:
        """One attempt at ``body`` (``data``: its JSON) on ``replica``: the status, the reply's body and its
        ``Retry-After``. A subclass that reaches the model another way (``backends.litellm``) answers the same, and
        raises ``TimeoutError`` or ``TransportError`` for a reply that never came, so every attempt is retried, rested
        and parsed alike."""
        return await self._post(replica.url + path, data, replica.headers)

    def _where(self, replica: Replica, path: str) -> str:
        """Where an attempt went, as messages name it: the replica's URL and the route."""
        return replica.shown + path

    def _failure(self, err: BaseException) -> tuple[str, str]:
        """(message, cause) for a request that raised ``err``."""
        if isinstance(err, TransportError):
            return str(err), err.cause
        if isinstance(err, TimeoutError):
            return f"timed out: no complete reply within {self.timeout:g} s (--timeout)", TIMEOUT
        if isinstance(err, aiohttp.ClientConnectorError):
            return f"{type(err).__name__}: {err}", CANNOT_CONNECT
        return f"{type(err).__name__}: {err}", type(err).__name__

    def _nobody_there(self, cause: str) -> bool:
        """Whether no server is there to retry: connections refused on every replica, none ever reached."""
        return cause == CANNOT_CONNECT and not self.reached and all(r.failures for r in self.replicas)

    def _pick(self, avoid: Replica | None = None) -> Replica:
        """The replica with the fewest requests outstanding among those not resting (``avoid``, the one that
        just failed, only if no other is up); if all rest, the one back soonest."""
        now = time.monotonic()
        up = [r for r in self.replicas if r.resting_until <= now and r is not avoid]
        if not up:
            up = [r for r in self.replicas if r.resting_until <= now]
        if not up:
            return min(self.replicas, key=lambda r: r.resting_until)
        return min(up, key=lambda r: r.outstanding)

    async def generate(self, request: Request) -> Response:
        path, body = self._body(request)
        data = orjson.dumps(body)
        chat = request.messages is not None
        last_error, cause = "", "model error"
        timeouts = 0
        replica: Replica | None = None
        other: Replica | None = None  # another replica up after a failure: the retry goes there at once
        async with self._semaphore:
            for attempt in range(self.max_retries + 1):
                wait: float | None = None
                replica = other or self._pick(avoid=replica)
                url = self._where(replica, path)
                replica.outstanding += 1
                try:
                    status, payload, retry_after = await self._send(replica, path, body, data)
                except _ReplyTooLarge as err:
                    raise BackendError(f"{url}: {reply_too_large(self.max_reply_bytes, str(err))}",
                                       cause=REPLY_TOO_LARGE) from None
                except (aiohttp.ClientError, TimeoutError, TransportError) as err:
                    last_error, cause = self._failure(err)
                    if cause == TIMEOUT:
                        timeouts += 1
                        self.stats.timeouts += 1
                else:
                    self.reached = True
                    if status < 400:
                        try:
                            response = self._parse(reply_json(payload), chat, request.params)
                            replica.succeeded()
                            return response
                        except orjson.JSONDecodeError as err:
                            last_error, cause = f"HTTP {status} but the body is not JSON ({err}): {_head(payload)}", \
                                "reply not JSON"
                        except _ServerFault as err:
                            last_error, cause = f"HTTP {status} but {err}", "reply without choices"
                        except _UnusableReply as err:
                            raise BackendError(redact(f"{url}: unusable reply: {err}"), cause="unusable reply") \
                                from None
                    else:
                        last_error, cause = f"HTTP {status}: {_head(payload)}", f"HTTP {status}"
                        refused = context_refusal(status, payload.decode(errors="replace"))
                        if refused is not False:
                            size = f" of {refused} tokens" if refused else ""
                            raise BackendError(redact(f"{url}: the prompt does not fit the model's context{size} "
                                                      f"(with max_tokens {request.params.max_tokens}): {last_error}"),
                                               cause=PROMPT_TOO_LONG)
                        if status not in RETRY_STATUS:
                            raise BackendError(redact(f"{url}: {last_error}"), cause=cause)
                        wait = retry_after_seconds(retry_after)
                finally:
                    replica.outstanding -= 1
                replica.failed(time.monotonic())
                if len(self.replicas) > 1:
                    last_error = f"{url}: {last_error}"
                if attempt == self.max_retries or timeouts > TIMEOUT_RETRIES or self._nobody_there(cause):
                    break
                self.stats.retries += 1
                other = self._pick(avoid=replica)
                if other is not replica and other.resting_until <= time.monotonic():
                    continue
                other = None
                delay = backoff_delay(attempt, self.backoff_base)
                await asyncio.sleep(max(delay, min(wait or 0.0, MAX_RETRY_AFTER)))
        tries = f"{attempt + 1} tries" if attempt else "1 try"
        where = self.base_url if len(self.replicas) > 1 or replica is None else self._where(replica, path)
        if cause == TIMEOUT:
            last_error += (f"; the request asks for up to {request.params.max_tokens} new tokens: lower --max-tokens, "
                           "raise --timeout, or lower --concurrency (a small server queues what it cannot run at once, "
                           "and the wait counts)")
        raise BackendError(redact(f"{where}: gave up after {tries}: {last_error}"), cause=cause)

    async def context_window(self) -> int | None:
        """``--model-option n_ctx``, else what the server's model list says about the model (``max_model_len``
        of vLLM and SGLang; a llama.cpp server's ``/props``); None when it says nothing or does not answer. A
        ``BackendError`` (``CANNOT_CONNECT``) when nothing is there to ask."""
        if self.n_ctx is not None:
            return self.n_ctx
        replica = self.replicas[0]
        headers = dict(replica.headers or {})
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        try:
            async with aiohttp.ClientSession(headers=headers,
                                             timeout=aiohttp.ClientTimeout(total=MODELS_TIMEOUT)) as session:
                context, llama = listed_context(await _get_json(session, replica.url + "/models"), self.model)
                if llama:
                    root = replica.url.removesuffix("/v1")
                    served = props_context(await _get_json(session, root + "/props"))
                    context = min(c for c in (context, served) if c) if context or served else None
                return context
        except aiohttp.ClientConnectorError as err:  # nothing there: said now, before any data is loaded
            raise BackendError(redact(f"{replica.shown}/models: {type(err).__name__}: {err}"),
                               cause=CANNOT_CONNECT) from None
        except (aiohttp.ClientError, TimeoutError, ValueError):
            return None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    """The JSON body of a GET, None when the status is not 200 (a server without that route)."""
    async with session.get(url) as resp:
        if resp.status != 200 or (resp.content_length or 0) > 2**20:
            return None
        return orjson.loads(await resp.read())


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Message fields that carry a thought apart from the content: ``reasoning_content`` (vLLM and SGLang with a
reasoning parser, DeepSeek's API, llama.cpp's server), ``reasoning`` (newer vLLM, OpenRouter)."""


def _choice(c: dict[str, Any], chat: bool, params: GenerationParams, thought_tokens: int | None, *,
            thought: bool = False) -> Choice:
    """One choice, its answer apart from its thought (``reply_choice``). ``thought_tokens``: the usage's
    ``reasoning_tokens`` when the reply has this one choice; ``thought``: the usage counts reasoning tokens (of
    any number of choices), so a choice that ran out of tokens with no answer spent them on a hidden thought."""
    finish = c.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    thoughts: list[str] = []
    if chat:
        message = c.get("message")
        if not isinstance(message, dict):
            raise _ServerFault(f"a choice has no message ({_excerpt(c)})")
        for name in REASONING_FIELDS:
            value = message.get(name)
            if isinstance(value, str) and value.strip() and value not in thoughts:
                thoughts.append(value)
        content = message.get("content")
        calls = _tool_calls(message.get("tool_calls"))
        if content is None and message.get("refusal") is None and (
                calls or thoughts or (finish == "length" and thought)):
            content = ""  # it called tools, or thought (in the field, or hidden), and wrote no answer
        text = _content_text(content, message.get("refusal"), finish, params.max_tokens, thoughts)
        if calls:
            choice = reply_choice(text, params, finish_reason=finish, field="\n\n".join(thoughts) or None,
                                  reasoning_tokens=thought_tokens)
            return replace(choice, tool_calls=calls)
    else:
        text = _content_text(c.get("text"), None, finish, params.max_tokens, thoughts)
    try:
        logprobs = _logprobs(c.get("logprobs"), chat)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise _UnusableReply(f"malformed logprobs ({type(err).__name__}: {err})") from None
    if not thoughts and not text.strip() and finish == "length" and thought:
        # hidden reasoning (OpenAI's o-series): the whole budget went to a thought the server does not show
        return Choice(text="", finish_reason=finish, reasoning_tokens=thought_tokens, reasoning_cut_off=True)
    return reply_choice(text, params, finish_reason=finish, logprobs=logprobs, field="\n\n".join(thoughts) or None,
                        reasoning_tokens=thought_tokens)


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """A message's ``tool_calls`` (function calls only); a malformed list is an unusable reply."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in raw):
        raise _UnusableReply(f"malformed tool_calls ({_excerpt(raw)})")
    calls = []
    for i, call in enumerate(raw):
        function = call["function"]
        arguments = function.get("arguments")
        if not isinstance(function.get("name"), str):
            raise _UnusableReply(f"a tool call has no name ({_excerpt(call)})")
        text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
        calls.append(ToolCall(id=str(call.get("id") or f"call_{i}"), name=function["name"], arguments=text))
    return tuple(calls)


TEXT_PARTS = frozenset({"text", "output_text"})
"""Content-part types that carry the reply's text (``[{"type": "text", "text": ...}, ...]``)."""
THINKING_PARTS = frozenset({"thinking", "reasoning"})
"""Content-part types that carry a thought (Mistral's ``{"type": "thinking", "thinking": [text parts]}``)."""


def _part_thought(part: dict[str, Any]) -> str | None:
    """The text of a thinking content part (a string, or a list of text parts), or None when it has none."""
    value = part.get(part.get("type", ""), part.get("text"))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str)) if all(isinstance(t, str) for t in texts) else None
    return None


def _content_text(content: Any, refusal: Any, finish: str | None, max_tokens: int | None,
                  thoughts: list[str] | None = None) -> str:
    """The reply text: a string, or the text parts of a content-part list joined (thinking parts go to
    ``thoughts``); anything else is unusable."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in TEXT_PARTS and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind in THINKING_PARTS and thoughts is not None and _part_thought(part) is not None:
                thoughts.append(_part_thought(part) or "")
            elif kind == "refusal":
                raise _UnusableReply(f"the model refused: {_excerpt(part.get('refusal'))}")
            else:
                raise _UnusableReply(f"a content part is not text: {_excerpt(part)}")
        return "".join(texts)
    if content is None:
        if refusal:
            raise _UnusableReply(f"the model refused: {_excerpt(refusal)}")
        if finish == "length":
            budget = f"all {max_tokens} tokens" if max_tokens is not None else "its whole token budget"
            raise _UnusableReply(
                f"no content, finish_reason 'length': the model used {budget} before writing an answer (reasoning "
                "models spend them on hidden reasoning); raise --max-tokens or use a non-reasoning model")
        raise _UnusableReply(f"no content (finish_reason {finish!r})")
    raise _UnusableReply(f"the content is a JSON {_kind(content)} ({_excerpt(content)}), not text")


def _index(choice: dict[str, Any]) -> int:
    index = choice.get("index", 0)
    return index if isinstance(index, int) else 0


_count = token_count


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _excerpt(value: Any, limit: int = 200) -> str:
    """The start of ``value`` as JSON text for a message: redacted whole, then cut (a cut can split a key)."""
    text = redact(orjson.dumps(value, default=repr).decode() if not isinstance(value, str) else value)
    return text if len(text) <= limit else text[:limit] + "..."


def reply_json(payload: bytes) -> Any:
    """A reply body's JSON. A lone surrogate escape (``"\\udcff"``: JSON's grammar allows it, orjson refuses it) is
    read as U+FFFD, as a record would keep it (``core.untrusted.writable``), instead of failing every try of the call
    the same way."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError as err:
        if "surrogate" not in str(err):
            raise
        refused = err
    from structbench.core.untrusted import loads, writable

    try:
        return writable(loads(payload, max_depth=None))[0]  # (writable cuts what nests deeper than a record holds)
    except ValueError:
        raise refused from None


def _head(payload: bytes, limit: int = 300) -> str:
    """The start of a reply body for a message: redacted whole, then cut."""
    return _excerpt(payload.decode(errors="replace"), limit)


def _logprobs(raw: Any, chat: bool) -> tuple[TokenLogprob, ...] | None:
    if not raw:
        return None
    if chat:
        return tuple(
            TokenLogprob(
                token=t["token"],
                logprob=t["logprob"],
                top={a["token"]: a["logprob"] for a in t.get("top_logprobs") or []},
            )
            for t in raw.get("content") or []
        )
    tokens = raw.get("tokens") or []
    lps = raw.get("token_logprobs") or []
    tops = raw.get("top_logprobs") or [{}] * len(tokens)
    return tuple(
        TokenLogprob(token=t, logprob=lp if lp is not None else 0.0, top=dict(top or {}))
        for t, lp, top in zip(tokens, lps, tops, strict=False)
    )


def _port_ok(parts: SplitResult) -> bool:
    """Whether the URL's port, if it names one, is one (``host:99999``, ``host:0`` and ``host:`` are not)."""
    try:
        port = parts.port
    except ValueError:  # out of range, or not a number
        return False
    return port != 0 and not parts.netloc.endswith(":")


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model openai:NAME needs a model name, e.g. openai:gpt-4o-mini")
    base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    api_key = os.environ.get(spec.api_key_env)
    for url in split_base_urls(base_url) or [base_url]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or not _port_ok(parts):
            raise UsageError(f"--base-url {redact_url(url)!r}: expected http(s)://HOST[:PORT]/PATH[,URL...] (a port "
                             "from 1 to 65535)")
        if not api_key and parts.hostname == "api.openai.com":
            missing = ("" if spec.base_url or os.environ.get("OPENAI_BASE_URL") else
                       f"; no --base-url was given, so openai:{spec.name} goes to api.openai.com: for a server of your "
                       "own (vLLM, SGLang, llama.cpp), add --base-url http://HOST:PORT/v1")
            raise UsageError(f"api.openai.com needs an API key: set the environment variable {spec.api_key_env}"
                             f"{missing}")
    n_ctx = spec.options.get("n_ctx")
    if n_ctx is not None and (not n_ctx.isdigit() or int(n_ctx) < 1):
        raise UsageError(f"--model-option n_ctx={n_ctx}: expected a positive integer (the served model's context)")
    return OpenAIBackend(
        model=spec.name,
        base_url=base_url,
        api_key=api_key,
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        max_retries=spec.max_retries,
        max_reply_bytes=spec.max_reply_bytes,
        n_ctx=int(n_ctx) if n_ctx is not None else None,
    )
