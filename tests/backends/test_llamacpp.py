"""The embedded default model through llama-cpp-python: chat, completion, n samples, first-token logprobs."""

from __future__ import annotations

import asyncio
import math

from structbench.backends.base import GenerationParams, Request
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.llamacpp import DEFAULT_MODEL, GEMMA_TEMPLATE, LlamaCppBackend, fallback_template


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
