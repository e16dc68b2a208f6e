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
