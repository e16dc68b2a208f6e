"""Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, TGI ...) over HTTP.

Bounded concurrency; retries with exponential backoff and full jitter on 429, 5xx, timeouts and
connection errors, waiting at least as long as a ``Retry-After`` header asks. The API key is read from
the environment variable the spec names and is only ever put in the Authorization header.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from structbench.backends.base import (
    Backend,
    BackendError,
    Choice,
    Request,
    Response,
    TokenLogprob,
)
from structbench.backends.factory import BackendSpec
from structbench.errors import UsageError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 120.0
"""Longest ``Retry-After`` honoured, in seconds: a server cannot park a request slot for hours."""


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


class OpenAIBackend(Backend):
    """Chat and completion requests to ``{base_url}/chat/completions`` and ``{base_url}/completions``."""

    backend = "openai"
    supports_logprobs = True

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff_base: float = 0.5,
    ) -> None:
        self.model = model
        self.base_url: str = base_url.rstrip("/")
        self._api_key = api_key
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.concurrency = concurrency
        self.timeout = timeout
        self._semaphore = asyncio.Semaphore(concurrency)
        self._session: aiohttp.ClientSession | None = None

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
        if request.messages is not None:
            body["messages"] = request.prompt_payload()
            if p.logprobs:
                body["logprobs"] = True
                body["top_logprobs"] = p.top_logprobs
            return "/chat/completions", body
        body["prompt"] = request.prompt
        if p.logprobs:
            body["logprobs"] = max(1, p.top_logprobs)
        return "/completions", body

    @staticmethod
    def _parse(data: dict[str, Any], chat: bool) -> Response:
        choices = []
        for c in sorted(data.get("choices", []), key=lambda c: c.get("index", 0)):
            text = ((c.get("message") or {}).get("content") if chat else c.get("text")) or ""
            choices.append(Choice(text=text, logprobs=_logprobs(c.get("logprobs"), chat),
                                  finish_reason=c.get("finish_reason")))
        usage = data.get("usage") or {}
        return Response(
            choices=tuple(choices),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    async def _post(self, url: str, data: bytes) -> tuple[int, bytes, str | None]:
        async with self._client().post(url, data=data) as resp:
            return resp.status, await resp.read(), resp.headers.get("Retry-After")

    async def generate(self, request: Request) -> Response:
        path, body = self._body(request)
        url = self.base_url + path
        data = orjson.dumps(body)
        last_error = ""
        async with self._semaphore:
            for attempt in range(self.max_retries + 1):
                wait: float | None = None
                try:
                    status, payload, retry_after = await self._post(url, data)
                except (aiohttp.ClientError, TimeoutError) as err:
                    last_error = f"{type(err).__name__}: {err}"
                else:
                    if status < 400:
                        try:
                            return self._parse(orjson.loads(payload), request.messages is not None)
                        except ValueError as err:
                            raise BackendError(f"{url}: invalid JSON response: {err}") from err
                    last_error = f"HTTP {status}: {payload[:300].decode(errors='replace')}"
                    if status not in RETRY_STATUS:
                        raise BackendError(f"{url}: {last_error}")
                    wait = retry_after_seconds(retry_after)
                if attempt == self.max_retries:
                    break
                delay = backoff_delay(attempt, self.backoff_base)
                await asyncio.sleep(max(delay, min(wait or 0.0, MAX_RETRY_AFTER)))
        raise BackendError(f"{url}: gave up after {self.max_retries + 1} tries: {last_error}")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


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


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model openai:NAME needs a model name, e.g. openai:gpt-4o-mini")
    base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--base-url {base_url!r}: expected http(s)://HOST[:PORT]/PATH")
    api_key = os.environ.get(spec.api_key_env)
    if not api_key and parts.hostname == "api.openai.com":
        raise UsageError(f"api.openai.com needs an API key: set the environment variable {spec.api_key_env}")
    return OpenAIBackend(
        model=spec.name,
        base_url=base_url,
        api_key=api_key,
        concurrency=spec.concurrency,
        timeout=spec.timeout,
        max_retries=spec.max_retries,
    )
