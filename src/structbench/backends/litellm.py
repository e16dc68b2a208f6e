"""Every provider LiteLLM reaches (``--model litellm:PROVIDER/MODEL``): Bedrock, Vertex AI, Azure, Gemini, OpenRouter,
Mistral, Groq ... and any OpenAI-compatible server (``litellm:openai/NAME --base-url URL``). Needs the ``[litellm]``
extra.

It is the ``openai`` backend with LiteLLM as its transport: the same request body, the same retries (429, 5xx,
dropped connections, a timed-out request once), replicas, reply validation, thought splitting, redaction and usage
(unknown where the provider reports none, never LiteLLM's filled-in zeros); only the attempt goes through
``litellm.acompletion`` (``atext_completion`` for a completion prompt) instead of an HTTP POST, with LiteLLM's own
retries off, so ``--max-retries`` and ``--timeout`` mean what they mean for ``openai``.
LiteLLM's exceptions are read back as the HTTP status they stand for, except a connection refused or dropped,
which LiteLLM calls a 500: it is what the ``openai`` backend makes of it (nothing there stops a run at once); a
prompt LiteLLM reports as too long for the model's context (``ContextWindowExceededError``, whatever the provider's
wording) is ``PROMPT_TOO_LONG``.
Parameters a provider does not take (a seed, log-probabilities) are dropped by LiteLLM rather than refused, as the
``anthropic`` backend's do not reach the model: they still key the cache. ``n`` replies from a provider that draws
one per call are ``n`` calls, their usage summed.

The key: the provider's own environment variables, as LiteLLM reads them (``AWS_*``, ``GEMINI_API_KEY``,
``AZURE_API_KEY`` ...), or the variable ``--api-key-env`` names. The values of credential-like variables are
registered for redaction. Prices: LiteLLM's price list for the model where no ``--prices`` is given
(``default_prices``), as the installed litellm ships it: nothing is fetched (``LITELLM_LOCAL_MODEL_COST_MAP``).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import orjson

from structbench.backends.base import PROMPT_TOO_LONG, Backend, BackendError
from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT, BackendSpec
from structbench.backends.openai_compat import (
    OpenAIBackend,
    Replica,
    TransportError,
    _ReplyTooLarge,
    split_base_urls,
)
from structbench.core.errors import UsageError
from structbench.core.redact import redact, redact_url, register_env_secrets

if TYPE_CHECKING:
    from structbench.backends.litellm_http import CappedClients
    from structbench.backends.prices import Prices

OPENAI_COMPATIBLE = frozenset({"openai", "hosted_vllm", "openai_like", "text-completion-openai", "lm_studio",
                               "llamafile", "custom_openai"})
"""LiteLLM providers that speak the OpenAI API to a server of the user's: they take ``chat_template_kwargs``, and
their model list says the served model's context."""
KEYED_OPENAI = frozenset({"openai", "text-completion-openai"})
"""Providers whose client refuses to start without a key, even for a server of the user's that needs none."""
NO_KEY = "no-key"
"""The key sent to such a server when no key is set (the ``openai`` backend sends none)."""
NO_URL = "litellm:"
"""What the ``openai`` backend is built with where no ``--base-url`` is given (its replica is then replaced)."""
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""``BackendSpec.api_key_env``'s default: not passed to LiteLLM, which reads each provider's own variable."""
PER_MILLION = 1_000_000


def _litellm() -> Any:
    """The ``litellm`` module, imported on first use with its price list read from the installed package (never
    fetched) and its debug banners off; a missing extra is a usage error."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as err:
        raise UsageError(f"--model litellm:... needs LiteLLM: pip install 'structbench[litellm]' ({err})") from None
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class LiteLLMBackend(OpenAIBackend):
    """Chat and completion requests through ``litellm.acompletion`` / ``atext_completion``."""

    backend = "litellm"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, concurrency: int = 8,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = 6,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, n_ctx: int | None = None) -> None:
        litellm = _litellm()
        try:
            _, provider, _, _ = litellm.get_llm_provider(model)
        except Exception as err:  # LiteLLM's BadRequestError: a model it cannot place
            raise UsageError(f"--model litellm:{model}: LiteLLM does not know which provider serves it; give "
                             f"PROVIDER/MODEL, e.g. litellm:bedrock/anthropic.claude-3-5-haiku-20241022-v1:0 or "
                             f"litellm:openai/{model} --base-url URL ({_first_line(err)})") from None
        super().__init__(model, base_url=base_url or NO_URL, api_key=api_key, concurrency=concurrency,
                         timeout=timeout, max_retries=max_retries, max_reply_bytes=max_reply_bytes, n_ctx=n_ctx)
        if base_url is None:  # the provider's own endpoint, as LiteLLM knows it: one replica without a URL
            self.replicas = [Replica("", None)]
            self.base_url = None
        self.provider: str = provider
        supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or []
        self.draws_n = "n" in supported
        """Whether the provider draws ``n`` replies in one call (else ``n`` calls are made)."""
        self.supports_chat_template_args = provider in OPENAI_COMPATIBLE
        self._capped: CappedClients | None = None

    def _where(self, replica: Replica, path: str) -> str:
        at = f" at {replica.shown}" if replica.url else ""
        return f"litellm {self.model}{at}"

    def _arguments(self, replica: Replica, body: dict[str, Any]) -> dict[str, Any]:
        """LiteLLM's keyword arguments for the OpenAI request ``body`` sent to ``replica``."""
        kwargs = {key: value for key, value in body.items() if key != "chat_template_kwargs"}
        if "chat_template_kwargs" in body:
            kwargs["extra_body"] = {"chat_template_kwargs": body["chat_template_kwargs"]}
        kwargs.update(timeout=self.timeout, num_retries=0, max_retries=0, drop_params=True)
        if replica.url:
            kwargs["api_base"] = replica.url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif replica.url and self.provider in KEYED_OPENAI:
            kwargs["api_key"] = os.environ.get(DEFAULT_KEY_ENV) or NO_KEY  # a server of the user's may want none
        if replica.headers:
            kwargs["extra_headers"] = dict(replica.headers)
        return kwargs

    async def _send(self, replica: Replica, path: str, body: dict[str, Any], data: bytes
                    ) -> tuple[int, bytes, str | None]:
        kwargs = self._arguments(replica, body)
        client = self._capped_client(replica, "chat" if "messages" in kwargs else "prompt", kwargs.get("api_key"))
        if client is not None:
            kwargs["client"] = client
        call = _litellm().acompletion if "messages" in kwargs else _litellm().atext_completion
        n = int(kwargs.get("n", 1))
        try:
            if n == 1 or self.draws_n:
                replies = [await _call_reading_usage(call, kwargs)]
            else:
                one = {**kwargs, "n": 1}
                replies = list(await asyncio.gather(*(_call_reading_usage(call, one) for _ in range(n))))
        except Exception as err:  # LiteLLM's exceptions, read as what they stand for below
            return self._failed(err)
        reply = _merge(replies)
        payload = orjson.dumps(reply, default=str)
        if len(payload) > self.max_reply_bytes:  # a provider whose replies are not capped while read
            raise _ReplyTooLarge(f"{len(payload)} bytes")
        return 200, payload, None

    def _capped_client(self, replica: Replica, route: str, api_key: str | None) -> Any:
        """The client that reads no reply past ``max_reply_bytes`` (``backends.litellm_http``), for a server given by
        ``--base-url`` of a provider LiteLLM reaches through a client it takes; None for any other (its reply is
        checked once LiteLLM has read it)."""
        from structbench.backends.litellm_http import CAPPED_PROVIDERS, CappedClients

        if not replica.url or self.provider not in CAPPED_PROVIDERS:
            return None
        if self._capped is None:
            self._capped = CappedClients(self.max_reply_bytes, self.timeout)
        if api_key is None:  # the key LiteLLM would send the provider (its own variable, or a placeholder)
            _, _, dynamic, _ = _litellm().get_llm_provider(self.model, api_base=replica.url)
            api_key = dynamic or os.environ.get(DEFAULT_KEY_ENV) or NO_KEY
        return self._capped.client(self.provider, route, replica.url, api_key)

    def _failed(self, err: Exception) -> tuple[int, bytes, str | None]:
        """A LiteLLM exception as the reply it stands for (status, body, ``Retry-After``), or raised as a timeout, a
        dropped connection or a prompt too long for the model."""
        from structbench.backends.litellm_http import CompressedReply, ReplyOverCap

        refused = next((e for e in _chain(err) if isinstance(e, ReplyOverCap | CompressedReply)), None)
        if isinstance(refused, ReplyOverCap):  # the same body would come again: not retried
            raise _ReplyTooLarge(str(refused)) from None
        if refused is not None:
            raise BackendError(f"litellm {self.model}: {refused}", cause="unusable reply") from None
        litellm = _litellm()
        message = redact(_first_line(err))
        if isinstance(err, litellm.Timeout | TimeoutError):
            raise TimeoutError(message) from None
        if isinstance(err, litellm.ContextWindowExceededError):
            raise BackendError(f"litellm {self.model}: the prompt does not fit the model's context: {message}",
                               cause=PROMPT_TOO_LONG) from None
        if isinstance(err, litellm.APIConnectionError) or _refused(err):
            raise TransportError(f"{type(err).__name__}: {message}{_cause_of(err)}") from None
        lost = _lost_connection(err)
        if lost is not None:  # LiteLLM reports a dropped connection as a 500: retried as one, not as a status
            raise TransportError(f"{type(err).__name__}: {message}{_cause_of(err)}", cause=lost) from None
        status = getattr(err, "status_code", None)
        if not isinstance(status, int):
            raise BackendError(f"litellm {self.model}: {type(err).__name__}: {message}",
                               cause=type(err).__name__) from None
        response = getattr(err, "response", None)
        headers = getattr(response, "headers", None) or {}
        retry_after = headers.get("retry-after") if hasattr(headers, "get") else None
        return status, orjson.dumps({"error": {"message": message, "type": type(err).__name__}}), retry_after

    async def context_window(self) -> int | None:
        """``--model-option n_ctx``, else LiteLLM's model list (``max_input_tokens``), else what an OpenAI-compatible
        server says of the model it serves; None when none says."""
        if self.n_ctx is not None:
            return self.n_ctx
        try:
            info = _litellm().get_model_info(self.model)
        except Exception:  # a model LiteLLM's list does not have
            info = {}
        context = info.get("max_input_tokens") if isinstance(info, dict) else None
        if isinstance(context, int) and context > 0:
            return context
        if self.base_url is not None and self.provider in OPENAI_COMPATIBLE:
            bare = self.model.partition("/")[2] if self.model.startswith(f"{self.provider}/") else self.model
            served = OpenAIBackend(bare, base_url=self.replicas[0].url, api_key=self._api_key)
            try:
                return await served.context_window()
            finally:
                await served.aclose()
        return None

    async def aclose(self) -> None:
        await super().aclose()
        if self._capped is not None:
            await self._capped.aclose()
            self._capped = None
        from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

        await close_litellm_async_clients()  # LiteLLM keeps a client per event loop; this one's loop is ending

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "provider": self.provider}


async def _call_reading_usage(call: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """One LiteLLM call's reply as an OpenAI reply, without ``usage`` where the provider reported none: LiteLLM then
    fills in zero counts, which would cost the call nothing and never stop a budget; an unknown count is null. The
    provider's own reply, as LiteLLM hands it to ``logger_fn``, tells a filled-in usage from a reported one."""
    raw: list[Any] = []

    def keep(details: dict[str, Any]) -> None:
        if details.get("log_event_type") == "post_api_call":
            raw.append(details.get("original_response"))

    response = await call(**kwargs, logger_fn=keep)
    reply: dict[str, Any] = response.model_dump(mode="json")
    usage = reply.get("usage")
    zero = not isinstance(usage, dict) or not (usage.get("prompt_tokens") or usage.get("completion_tokens"))
    if zero and not any(_reports_usage(r) for r in raw):
        reply.pop("usage", None)
    return reply


def _reports_usage(original: Any) -> bool:
    """Whether the provider's reply, as LiteLLM logged it (JSON text, a dict or a pydantic model), carries a usage
    object (``usage``, Gemini's ``usageMetadata`` ...); a reply that cannot be read counts as carrying none."""
    if isinstance(original, str | bytes):
        try:
            original = orjson.loads(original)
        except orjson.JSONDecodeError:
            return False
    elif hasattr(original, "model_dump"):
        original = original.model_dump()
    if not isinstance(original, dict):
        return False
    return any("usage" in str(key).lower() and value for key, value in original.items())


def _merge(replies: list[dict[str, Any]]) -> dict[str, Any]:
    """One reply of the choices of several calls (``n`` drawn one per call), their usage summed."""
    if len(replies) == 1:
        return replies[0]
    merged = dict(replies[0])
    merged["choices"] = [{**choice, "index": i} for i, choice in
                         enumerate(c for reply in replies for c in reply.get("choices") or [])]
    usages = [reply.get("usage") for reply in replies]
    if all(isinstance(u, dict) for u in usages):
        merged["usage"] = _sum_usage([u for u in usages if isinstance(u, dict)])
    else:
        merged.pop("usage", None)  # one call's usage is unknown: so is the sum's
    return merged


def _sum_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenAI usage objects added up, details included; a count one of them lacks is left out."""
    out: dict[str, Any] = {}
    for key, first in usages[0].items():
        values = [u.get(key) for u in usages]
        if isinstance(first, dict) and all(isinstance(v, dict) for v in values):
            out[key] = _sum_usage([v for v in values if isinstance(v, dict)])
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out[key] = sum(v for v in values if isinstance(v, int))
    return out


def _chain(err: BaseException) -> list[BaseException]:
    """``err`` and what caused it, outermost first (each once)."""
    seen: list[BaseException] = []
    cause: BaseException | None = err
    while cause is not None and cause not in seen:
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    return seen


def _refused(err: BaseException) -> bool:
    """Whether ``err`` (LiteLLM reports it as an ``InternalServerError``, status 500) is a connection that could not be
    made: nothing listening, an unknown host. The ``openai`` backend's "cannot connect", which ends a run at once."""
    import httpx

    from structbench.backends.http import aiohttp

    refused = httpx.ConnectError | aiohttp.ClientConnectorError | ConnectionRefusedError
    return any(isinstance(e, refused) for e in _chain(err))


def _lost_connection(err: BaseException) -> str | None:
    """The name of the failure where ``err`` stands for a connection made but dropped before a reply (the OpenAI
    client's ``APIConnectionError``); None for a reply the server sent."""
    import openai

    chain = _chain(err)
    if not any(isinstance(e, openai.APIConnectionError) for e in chain):
        return None
    return type(chain[-1]).__name__


def _cause_of(err: BaseException) -> str:
    """The innermost cause of ``err``, as `` (Type: first line)``; empty where there is none."""
    inner = _chain(err)[-1]
    return f" ({type(inner).__name__}: {redact(_first_line(inner))})" if inner is not err else ""


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def default_prices(spec: BackendSpec) -> Prices | None:
    """LiteLLM's prices of the model (US dollars per million tokens, batch and cache-read prices where it lists
    them), as ``structbench.backends.prices.Prices`` for ``litellm:MODEL``; None when its list does not price the
    model."""
    from structbench.backends.prices import Price, Prices

    litellm = _litellm()
    try:
        info = litellm.get_model_info(spec.name or "")
    except Exception:  # a model LiteLLM's list does not have
        return None

    def per_million(key: str) -> float | None:
        value = info.get(key)
        return round(value * PER_MILLION, 9) if isinstance(value, int | float) and value >= 0 else None

    rates = {"input": per_million("input_cost_per_token"), "output": per_million("output_cost_per_token"),
             "cached": per_million("cache_read_input_token_cost"),
             "batch_input": per_million("input_cost_per_token_batches"),
             "batch_output": per_million("output_cost_per_token_batches"),
             "batch_cached": per_million("cache_read_input_token_cost_batches")}
    if rates["input"] is None or rates["output"] is None:
        return None
    price = Price.model_validate({key: value for key, value in rates.items() if value is not None})
    from importlib.metadata import version

    return Prices({spec.label: price}, f"LiteLLM's prices (litellm {version('litellm')})")


def from_spec(spec: BackendSpec) -> Backend:
    if not spec.name:
        raise UsageError("--model litellm:PROVIDER/MODEL needs a model, e.g. litellm:gemini/gemini-2.5-flash or "
                         "litellm:openai/NAME --base-url URL")
    register_env_secrets()  # LiteLLM reads the provider's key from the environment: keep every such value out
    key_env = None if spec.api_key_env == DEFAULT_KEY_ENV else spec.api_key_env
    api_key = os.environ.get(key_env) if key_env else None
    if key_env and not api_key:
        raise UsageError(f"--api-key-env {key_env}: the environment variable is not set")
    if spec.base_url:
        from urllib.parse import urlsplit

        for url in split_base_urls(spec.base_url) or [spec.base_url]:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise UsageError(f"--base-url {redact_url(url)!r}: expected http(s)://HOST[:PORT]/PATH[,URL...]")
    n_ctx = spec.options.get("n_ctx")
    if n_ctx is not None and (not n_ctx.isdigit() or int(n_ctx) < 1):
        raise UsageError(f"--model-option n_ctx={n_ctx}: expected a positive integer (the model's context)")
    return LiteLLMBackend(spec.name, base_url=spec.base_url, api_key=api_key, concurrency=spec.concurrency,
                          timeout=spec.timeout, max_retries=spec.max_retries, max_reply_bytes=spec.max_reply_bytes,
                          n_ctx=int(n_ctx) if n_ctx is not None else None)
