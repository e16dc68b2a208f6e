"""The embedded default model through llama-cpp-python: load parameters, chat, completion, n samples,
first-token logprobs, and closing while a call is generating."""

from __future__ import annotations

import asyncio
import math
import threading

import pytest

from structbench.backends.base import BackendError, GenerationParams, Request
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.llamacpp import (
    DEFAULT_MODEL,
    GEMMA_TEMPLATE,
    LlamaCppBackend,
    LoadParams,
    embedded_model_path,
    fallback_template,
    load_llama,
)
from structbench.errors import UsageError


def test_embedded_model_generates() -> None:
    backend = make_backend(BackendSpec(backend="llamacpp"))
    assert isinstance(backend, LlamaCppBackend) and backend.model == DEFAULT_MODEL

    async def go() -> None:
        chat = await backend.generate(
            Request.chat("Answer with one letter: A or B?", max_tokens=8, logprobs=True, top_logprobs=3)
        )
        lp = chat.choices[0].logprobs
        assert lp is not None and len(lp) == 1
        assert lp[0].logprob <= 0 and len(lp[0].top) == 3
        assert all(math.isfinite(v) for v in lp[0].top.values())
        assert chat.prompt_tokens and chat.prompt_tokens > 5
        greedy = await backend.generate(Request(prompt="1, 2, 3, 4,", params=GenerationParams(max_tokens=6)))
        again = await backend.generate(Request(prompt="1, 2, 3, 4,", params=GenerationParams(max_tokens=6)))
        assert greedy.text == again.text and greedy.text.strip()
        many = await backend.generate(
            Request(prompt="Once upon a time", params=GenerationParams(max_tokens=5, n=2, temperature=1.0))
        )
        assert len(many.choices) == 2
        await backend.aclose()

    asyncio.run(go())


def test_the_model_loads_without_extra_buffer_types_unless_asked() -> None:
    """llama.cpp's extra buffer types (AMX repacking) crash with Gemma 3 on AMX CPUs: off by default, checked
    on the loaded model on every machine, whatever its CPU."""
    assert LoadParams().extra_bufts is False
    llm = load_llama(embedded_model_path(), LoadParams(n_ctx=512))
    try:
        assert llm.model_params.use_extra_bufts is False
        assert llm.n_ctx() == 512
    finally:
        llm.close()
    opted = load_llama(embedded_model_path(), LoadParams(n_ctx=512, extra_bufts=True))
    try:
        assert opted.model_params.use_extra_bufts is True
    finally:
        opted.close()


def test_model_options_are_parsed_and_checked() -> None:
    backend = make_backend(BackendSpec(backend="llamacpp", options={"n_ctx": "2048", "extra_bufts": "yes"}))
    assert isinstance(backend, LlamaCppBackend)
    assert backend.params == LoadParams(n_ctx=2048, extra_bufts=True)
    assert backend.describe()["load"]["extra_bufts"] is True
    with pytest.raises(UsageError, match="n_ctx=0: expected a positive integer"):
        make_backend(BackendSpec(backend="llamacpp", options={"n_ctx": "0"}))
    with pytest.raises(UsageError, match="extra_bufts=maybe: expected true or false"):
        make_backend(BackendSpec(backend="llamacpp", options={"extra_bufts": "maybe"}))
    with pytest.raises(UsageError, match="--model-option gpu: not an option of the llamacpp backend"):
        make_backend(BackendSpec(backend="llamacpp", options={"gpu": "1"}))
    with pytest.raises(UsageError, match="not an option of the mock backend \\(known: none\\)"):
        make_backend(BackendSpec(backend="mock", options={"n_ctx": "1"}))


def test_closing_stops_the_call_in_progress_and_waits_for_it() -> None:
    """Ctrl-C closes the backend while a worker thread generates: the call stops at its next token, the model
    is freed only after it, and the unfinished reply is an error, never a truncated answer."""
    backend = make_backend(BackendSpec(backend="llamacpp"))
    assert isinstance(backend, LlamaCppBackend)
    started = threading.Event()
    stopping = backend._stopping

    def watched(tokens: object, logits: object) -> bool:
        started.set()
        return stopping(tokens, logits)

    backend._stopping = watched  # type: ignore[method-assign]

    async def go() -> None:
        call = asyncio.create_task(
            backend.generate(Request(prompt="Count: 1, 2, 3,", params=GenerationParams(max_tokens=4000)))
        )
        while not started.is_set():
            await asyncio.sleep(0.01)
        await backend.aclose()
        assert backend._llm is None
        with pytest.raises(BackendError, match="closed before the reply finished"):
            await call
        with pytest.raises(BackendError):
            await backend.generate(Request(prompt="1,", params=GenerationParams(max_tokens=2)))

    asyncio.run(go())


def test_fallback_templates() -> None:
    assert fallback_template("gemma3") == GEMMA_TEMPLATE
    assert "Assistant:" in fallback_template("llama")


def test_min_tokens_masks_the_end_tokens_until_enough_are_out() -> None:
    import numpy as np

    from structbench.backends.base import cache_fields
    from structbench.backends.llamacpp import min_tokens_processor
    from structbench.backends.mock import MockBackend

    process = min_tokens_processor(np.array([1, 3]), prompt_length=4, count=2)
    scores = process(np.arange(5), np.zeros(6))  # one token out of two: still masked
    assert scores[1] == scores[3] == -np.inf and scores[0] == 0.0
    assert (process(np.arange(6), np.zeros(6)) == 0.0).all()  # two out: free to end

    backend = make_backend(BackendSpec(backend="llamacpp"))
    assert isinstance(backend, LlamaCppBackend)

    async def go() -> None:
        prompt = Request(prompt="1, 2, 3, 4,", params=GenerationParams(max_tokens=3))
        plain = await backend.generate(prompt)
        llm = backend._load()
        first = llm.tokenize(plain.text.encode(), add_bos=False, special=False)[0]
        backend._min_tokens(llm, 1, 1)  # computes the model's real end-of-generation tokens
        assert {llm.token_eos(), *llm.tokenize(b"<end_of_turn>", add_bos=False, special=True)} <= set(
            backend._end_tokens.tolist()
        )
        # pretend the greedy first token ends generation: under min_tokens=1 it may not come first
        backend._end_tokens = np.array([first])
        held = await backend.generate(
            Request(prompt="1, 2, 3, 4,", params=GenerationParams(max_tokens=3, min_tokens=1))
        )
        assert llm.tokenize(held.text.encode(), add_bos=False, special=False)[0] != first
        await backend.aclose()

    asyncio.run(go())
    request = Request.chat("q", min_tokens=2)
    assert b"min_tokens" in cache_fields(backend, request)
    assert b"min_tokens" not in cache_fields(MockBackend(), request)  # not enforced there: not in its key
    assert cache_fields(MockBackend(), request) == cache_fields(MockBackend(), Request.chat("q"))


def test_choices_constrain_the_reply_and_key_the_cache() -> None:
    """A request with ``choices`` is answered with exactly one of them (a grammar), even by a base model that
    otherwise rambles, and only a backend that enforces them puts them in the cache key."""
    from structbench.backends.base import cache_fields
    from structbench.backends.openai_compat import from_spec as openai_backend

    backend = make_backend(BackendSpec(backend="llamacpp"))
    prompt = "Write a long story about a dragon."
    free = Request(prompt=prompt, params=GenerationParams(max_tokens=8))
    picked = Request(prompt=prompt, params=GenerationParams(max_tokens=8, choices=("Yes", "No"), min_tokens=2))

    async def go() -> tuple[str, str]:
        try:
            return (await backend.generate(free)).text, (await backend.generate(picked)).text
        finally:
            await backend.aclose()

    free_text, picked_text = asyncio.run(go())
    assert free_text not in ("Yes", "No") and picked_text in ("Yes", "No")
    assert b'"choices":["Yes","No"]' in cache_fields(backend, picked)
    assert b"choices" not in cache_fields(backend, free)
    remote = openai_backend(BackendSpec(backend="openai", name="m", base_url="http://127.0.0.1:9/v1"))
    assert b"choices" not in cache_fields(remote, picked)  # ignored there, so not part of its key


@pytest.mark.parametrize("logprobs", [False, True])
def test_a_prompt_longer_than_the_context_is_a_model_error_naming_the_sizes(logprobs: bool) -> None:
    backend = make_backend(BackendSpec(backend="llamacpp", options={"n_ctx": "256"}))  # llama.cpp's least
    request = Request.chat("Count with me: " + " ".join(str(i) for i in range(200)), max_tokens=4, logprobs=logprobs)
    with pytest.raises(BackendError, match=r"prompt of \d+ tokens does not fit the model's context of 256") as err:
        asyncio.run(backend.generate(request))
    assert err.value.cause == "prompt too long"
    asyncio.run(backend.aclose())
