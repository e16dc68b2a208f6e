"""The transformers backend on a tiny local model: batching, sampling, stops, logprobs, context, identity."""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path
from typing import Any

import pytest

from backends.tiny_models import build_tiny_model, require, write_tiny_gguf

require("torch")
require("transformers")

from structbench.backends.base import BackendError, GenerationParams, Request  # noqa: E402
from structbench.backends.factory import BackendSpec, make_backend  # noqa: E402
from structbench.backends.hf import HFBackend  # noqa: E402
from structbench.backends.tokens import token_counter  # noqa: E402
from structbench.core.errors import UsageError  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


def hf(path: Path, **options: str) -> HFBackend:
    backend = make_backend(BackendSpec(backend="hf", name=str(path), options=dict(options)))
    assert isinstance(backend, HFBackend)
    return backend


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def together(backend: Any, requests: list[Request]) -> list[Any]:
    """Send ``requests`` concurrently, as strategies running side by side do."""

    async def go() -> list[Any]:
        return list(await asyncio.gather(*(backend.generate(r) for r in requests)))

    return run(go())


PROMPTS = ["What is 2 + 2?", "Name the capital of France, please.", "| a | b |", "yes or no?", "Paris"]


def test_concurrent_greedy_requests_share_one_generate_and_match_single_runs(tiny: Path) -> None:
    backend = hf(tiny, dtype="float32")
    requests = [Request.chat(p, max_tokens=10, logprobs=True, top_logprobs=3) for p in PROMPTS]

    async def go() -> tuple[list[Any], list[Any]]:
        batched = await asyncio.gather(*(backend.generate(r) for r in requests))
        calls = backend.generate_calls
        alone = [await backend.generate(r) for r in requests]
        assert calls == 1 and backend.generate_calls == 1 + len(requests)
        await backend.aclose()
        return batched, alone

    batched, alone = run(go())
    lengths = {r.prompt_tokens for r in batched}
    assert len(lengths) > 1  # prompts of different lengths were left-padded in one batch
    for a, b in zip(batched, alone, strict=True):
        assert a.text == b.text and a.completion_tokens == b.completion_tokens
        assert a.choices[0].logprobs[0].token == b.choices[0].logprobs[0].token
        assert a.choices[0].logprobs[0].logprob == pytest.approx(b.choices[0].logprobs[0].logprob, abs=1e-4)
        assert a.completion_tokens == 10 and a.choices[0].finish_reason == "length"


def test_greedy_requests_keep_their_own_n_and_top_logprobs_side_by_side(tiny: Path) -> None:
    backend = hf(tiny, dtype="float32")
    requests = [Request.chat("yes or no?", max_tokens=4, n=n, logprobs=True, top_logprobs=k)
                for n, k in ((1, 2), (3, 5), (2, 2))]
    replies = together(backend, requests)
    assert [len(r.choices) for r in replies] == [1, 3, 2]
    tops = [len(r.choices[0].logprobs[0].top) for r in replies]  # alternatives that decode alike share an entry
    assert tops[0] <= 2 and tops[2] <= 2 and tops[1] > 2
    run(backend.aclose())


def test_batch_size_caps_rows_per_generate(tiny: Path) -> None:
    backend = hf(tiny, batch_size="2")
    texts = [r.text for r in together(backend, [Request.chat(p, max_tokens=3) for p in PROMPTS])]
    assert backend.generate_calls == 3  # 5 prompts in batches of 2, 2, 1
    placed = hf(tiny, device_map="cpu")  # accelerate places the model; no .to(device)
    assert [r.text for r in together(placed, [Request.chat(p, max_tokens=3) for p in PROMPTS])] == texts


def test_first_token_logprobs_are_the_models_own(tiny: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    backend = hf(tiny, dtype="float32")
    request = Request.chat(PROMPTS[1], max_tokens=4, logprobs=True, top_logprobs=5)
    response = run(backend.generate(request))
    lp = response.choices[0].logprobs
    assert lp is not None and len(lp) == 1
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    ids = tokenizer.apply_chat_template(request.prompt_payload(), tokenize=True, add_generation_prompt=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert response.prompt_tokens == len(ids)
    with torch.no_grad():
        row = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), dim=-1)
    best = int(row.argmax())
    assert set(lp[0].top) == {tokenizer.decode([int(i)]) for i in row.topk(5).indices}
    assert lp[0].token == tokenizer.decode([best])  # greedy: the first token is the most likely one
    assert lp[0].logprob == pytest.approx(float(row[best]), abs=1e-4)
    assert max(lp[0].top.values()) == pytest.approx(lp[0].logprob, abs=1e-6)
    assert sum(math.exp(v) for v in lp[0].top.values()) <= 1.0 + 1e-6
    assert run(backend.generate(Request.chat(PROMPTS[1], max_tokens=4))).choices[0].logprobs is None


def test_sampling_is_seeded_and_n_gives_n_choices(tiny: Path) -> None:
    backend = hf(tiny)

    def sample(seed: int | None, n: int = 3, temperature: float = 1.0) -> list[str]:
        params = GenerationParams(max_tokens=8, temperature=temperature, n=n, seed=seed)
        return [c.text for c in run(backend.generate(Request(prompt="The quick brown", params=params))).choices]

    first = sample(7)
    assert len(first) == 3 and len(set(first)) > 1
    assert sample(7) == first and sample(8) != first
    assert sample(None) == sample(0)  # no seed: the backend's seed (0), so runs repeat
    greedy = sample(None, n=2, temperature=0.0)
    assert len(greedy) == 2 and greedy[0] == greedy[1]


def test_stop_strings_cut_the_text(tiny: Path) -> None:
    backend = hf(tiny)
    free = run(backend.generate(Request.chat(PROMPTS[0], max_tokens=16)))
    text = free.text
    stop = next(
        text[i: i + 2] for i in range(2, len(text) - 2) if text[i: i + 2].strip() and text.find(text[i: i + 2]) == i
    )
    cut = run(backend.generate(Request.chat(PROMPTS[0], max_tokens=16, stop=(stop,))))
    assert cut.text == text[: text.find(stop)] and cut.choices[0].finish_reason == "stop"
    assert cut.completion_tokens is not None and cut.completion_tokens < 16


def test_prompt_longer_than_the_context_is_an_error_or_cut_from_the_left(tmp_path: Path) -> None:
    short = build_tiny_model(tmp_path / "short", context=48)
    request = Request(prompt="The quick brown fox jumps over the lazy dog. " * 6, params=GenerationParams(max_tokens=8))
    with pytest.raises(BackendError, match=r"prompt of \d+ tokens plus max_tokens 8 exceeds the model's context of 48"):
        run(hf(short).generate(request))
    response = run(hf(short, truncate="left").generate(request))
    assert response.prompt_tokens == 48 - 8 and response.completion_tokens == 8
    with pytest.raises(UsageError, match="truncate=middle"):
        hf(short, truncate="middle")


def test_context_error_names_the_sample(tmp_path: Path) -> None:
    from structbench.benchmarks.structext import StrucTextEval
    from structbench.contract.benchmark import bind_sample
    from structbench.data.sample import Sample

    short = build_tiny_model(tmp_path / "short", context=32)
    sample = Sample.model_construct(id="csv.lookup/x/001", task="t", question="q")

    async def go() -> None:
        bind_sample(StrucTextEval(), sample)
        await hf(short).generate(Request(prompt="word " * 40, params=GenerationParams(max_tokens=4)))

    with pytest.raises(BackendError, match="sample structext/csv.lookup/x/001: prompt of"):
        run(go())


def test_out_of_memory_halves_the_batch(tiny: Path) -> None:
    import torch

    backend = hf(tiny, batch_size="8")
    expected = [run(backend.generate(Request.chat(p, max_tokens=5))).text for p in PROMPTS]
    model = backend._loaded.model  # type: ignore[union-attr]
    generate = model.generate
    sizes: list[int] = []

    def small_memory(*args: Any, **kwargs: Any) -> Any:
        sizes.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return generate(*args, **kwargs)

    model.generate = small_memory
    got = together(backend, [Request.chat(p, max_tokens=5) for p in PROMPTS])
    assert [r.text for r in got] == expected
    assert sizes[0] == 5 and max(s for s in sizes[1:]) <= 2 and backend.batch_size == 2


def test_cache_identity_follows_weights_dtype_and_config(tiny: Path, tmp_path: Path) -> None:
    import shutil

    copy = Path(shutil.copytree(tiny, tmp_path / "copy"))
    base = hf(copy).base_url
    assert base is not None and base.startswith(f"file://{copy.resolve()}#")
    assert hf(copy, batch_size="2", device="cpu").base_url == base  # execution settings: same outputs
    assert hf(copy, dtype="bfloat16").base_url != base
    assert hf(copy, attn_implementation="eager").base_url != base  # passed to from_pretrained, so part of it
    weights = copy / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    touched = hf(copy).base_url
    assert touched != base
    config = (copy / "config.json").read_text()
    (copy / "config.json").write_text(config.replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": 1e-05'))
    assert hf(copy).base_url != touched


def test_model_names_resolve_locally_or_fail_clearly(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import huggingface_hub.constants

    hub = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = hub / "models--acme--tiny"
    shutil.copytree(tiny, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    backend = hf(Path("acme/tiny"))
    assert backend.base_url is not None and backend.base_url.startswith(f"hf://acme/tiny@{commit}#")
    assert run(backend.generate(Request.chat("hi", max_tokens=3))).completion_tokens == 3
    with pytest.raises(UsageError, match="not in the local Hugging Face cache.*download=true"):
        hf(Path("acme/absent"))
    with pytest.raises(UsageError, match="no such model directory"):
        hf(tmp_path / "nothing")
    with pytest.raises(UsageError, match="no config.json"):
        hf(tmp_path)
    with pytest.raises(UsageError, match="dtype=float8"):
        hf(tiny, dtype="float8")
    with pytest.raises(UsageError, match="name a checkpoint"):
        make_backend(BackendSpec(backend="hf"))


def test_the_models_tokenizer_serves_as_token_counter(tiny: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    text = "The quick brown fox | France | Paris"
    for spec in (f"hf:{tiny}", f"vllm:{tiny}"):
        counter = token_counter(spec)
        assert counter.count(text) == len(tokenizer(text, add_special_tokens=False)["input_ids"]) > 5
        assert text.startswith(counter.head(text, 3)) and counter.count(counter.head(text, 3)) <= 3


def test_a_gguf_file_loads_through_transformers(tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hf:FILE.gguf`` (transformers' ``gguf_file``: config, tokenizer and weights from the file alone) runs the
    model the file was written from, with BOS added where the file says to (transformers' conversion drops
    ``tokenizer.ggml.add_bos_token``; ``checkpoints.gguf_tokenizer`` restores it), parsing the file once. The
    embedded Gemma GGUF goes the same way through transformers once per session (``embedded_cache``), for the tests
    beside this one."""
    import gguf as gguf_py

    gguf = write_tiny_gguf(tiny, tmp_path / "gguf", add_bos=True)
    parsed: list[str] = []
    parse = gguf_py.GGUFReader.__init__

    def counted(reader: Any, path: Any, *args: Any) -> None:
        parsed.append(str(path))
        parse(reader, path, *args)

    monkeypatch.setattr(gguf_py.GGUFReader, "__init__", counted)  # the reader gguf_read_once derives from it too
    direct = hf(gguf, dtype="float32")
    assert direct.base_url is not None and direct.base_url.startswith(f"file://{gguf.resolve()}#")
    source = hf(tiny, dtype="float32")
    chat = Request.chat("Complete the list: Monday, Tuesday,", max_tokens=4, logprobs=True, top_logprobs=3)
    a = together(direct, [Request(prompt="The capital of France is", params=GenerationParams(max_tokens=4,
                                                                                             logprobs=True)), chat])
    # the checkpoint's tokenizer adds no BOS to a plain prompt: it is written out
    b = together(source, [Request(prompt="<s>The capital of France is", params=GenerationParams(max_tokens=4,
                                                                                                logprobs=True)), chat])
    assert len(parsed) == 1  # transformers reads it three times (checkpoints.gguf_read_once)
    for x, y in zip(a, b, strict=True):
        assert x.text == y.text and x.prompt_tokens == y.prompt_tokens and x.completion_tokens == 4
        assert x.choices[0].logprobs[0].logprob == pytest.approx(y.choices[0].logprobs[0].logprob, abs=1e-4)
    assert a[1].choices[0].logprobs[0].top == pytest.approx(b[1].choices[0].logprobs[0].top, abs=1e-4)


@pytest.mark.slow
def test_embedded_gguf_agrees_with_llamacpp_on_first_tokens(with_embedded: Path) -> None:
    """``hf:embedded`` (transformers' dequantized weights) and llama.cpp (quantized kernels) pick the same
    greedy first token wherever llama.cpp's choice is not a near tie, with close log-probabilities."""
    from structbench.backends.llamacpp import LlamaCppBackend

    ours = make_backend(BackendSpec(backend="hf", name="embedded"))
    reference = make_backend(BackendSpec(backend="llamacpp"))
    assert isinstance(reference, LlamaCppBackend)
    questions = [
        "What is the capital of France?",
        "Answer with A, B or C: which letter comes first in the alphabet?",
        "Is the following claim supported? Claim: water boils at 100 C at sea level. Answer yes or no.",
        "Translate to French: good morning",
        "Complete the list: Monday, Tuesday,",
        "| name | age |\n|---|---|\n| Ann | 31 |\nHow old is Ann?",
    ]
    completions = ["The capital of France is", "1, 2, 3, 4,", "Monday, Tuesday,", "The opposite of hot is"]
    requests = [Request.chat(q, max_tokens=3, logprobs=True, top_logprobs=2) for q in questions] + [
        Request(prompt=p, params=GenerationParams(max_tokens=3, logprobs=True, top_logprobs=2)) for p in completions
    ]

    async def go() -> tuple[list[Any], list[Any]]:
        a = await asyncio.gather(*(ours.generate(r) for r in requests))
        b = [await reference.generate(r) for r in requests]
        await ours.aclose()
        await reference.aclose()
        return a, b

    mine, theirs = run(go())
    decided = 0
    for a, b in zip(mine, theirs, strict=True):
        assert a.prompt_tokens == b.prompt_tokens  # same chat template, same tokens, BOS as the GGUF says
        la, lb = a.choices[0].logprobs[0], b.choices[0].logprobs[0]
        margin = lb.logprob - sorted(lb.top.values())[-2]
        if margin > 0.2:
            decided += 1
            assert la.token == lb.token, (a.text, b.text)
            # llama.cpp's Q4_K kernels also quantize the activations (8 bits), and which kernels run depends on the
            # CPU llama.cpp was built on: with Gemma's full turn format ('<start_of_turn>model\n') a first token's
            # log-probability differs by up to 0.27 on one machine, 0.32 on an AVX-512/AMX one, while both pick it
            assert la.logprob == pytest.approx(lb.logprob, abs=0.4)
    assert decided >= 7


def test_closing_stops_a_running_batch_and_caches_nothing(tmp_path: Path) -> None:
    long = build_tiny_model(tmp_path / "long", context=4096)
    backend = hf(long)
    run(backend.generate(Request.chat("hi", max_tokens=2)))  # loaded
    steps: list[int] = []
    backend._loaded.model.register_forward_hook(lambda *_: steps.append(1))  # type: ignore[union-attr]

    async def go() -> Any:
        task = asyncio.ensure_future(backend.generate(Request.chat("hi", max_tokens=4000)))
        while len(steps) < 3:
            await asyncio.sleep(0.01)
        await backend.aclose()  # as a stopped run does
        return await asyncio.gather(task, return_exceptions=True)

    (outcome,) = run(go())
    assert isinstance(outcome, BackendError) and "stopped before the batch finished" in str(outcome)
    assert len(steps) < 1000  # it did not run to 4,000 tokens
    again = run(backend.generate(Request.chat("hi", max_tokens=5)))
    assert again.completion_tokens == 5


CHOICE_SETS = [("Yes", "No"), ("A", "AB"), ("Yes", "Yes, but"), ("Paris", "London", "France", "B")]
"""Choice sets, two of them with a choice that is a prefix of another."""


def test_choices_constrain_greedy_and_sampled_replies(tiny: Path) -> None:
    backend = hf(tiny)
    for choices in CHOICE_SETS:
        for prompt in PROMPTS:
            greedy = run(backend.generate(Request.chat(prompt, max_tokens=12, choices=choices)))
            assert greedy.text in choices and greedy.choices[0].finish_reason == "stop"
        for seed in range(4):
            params = GenerationParams(max_tokens=12, temperature=1.5, top_p=0.9, n=6, seed=seed, choices=choices)
            sampled = run(backend.generate(Request(prompt="The quick brown", params=params)))
            assert all(c.text in choices and c.finish_reason == "stop" for c in sampled.choices), sampled.choices
    free = run(backend.generate(Request.chat(PROMPTS[3], max_tokens=12)))
    assert free.text not in ("Yes", "No")  # the tiny model rambles when left free


def test_choices_that_prefix_others_are_all_reachable(tiny: Path) -> None:
    """After "A" the model may end (reply "A") or go on to "AB"; a flat temperature gives both."""
    backend = hf(tiny)
    for choices in (("A", "AB"), ("Yes", "Yes, but")):
        params = GenerationParams(max_tokens=12, temperature=20.0, n=24, seed=3, choices=choices)
        texts = [c.text for c in run(backend.generate(Request(prompt="The quick brown", params=params))).choices]
        assert set(texts) == set(choices), texts
        again = run(backend.generate(Request(prompt="The quick brown", params=params)))
        assert [c.text for c in again.choices] == texts  # seeded


def test_greedy_choice_is_the_models_best_allowed_token_and_logprobs_stay_raw(tiny: Path) -> None:
    """Greedy under single-token choices picks the allowed token the model likes best; the first position's
    log-probabilities are the model's unconstrained ones (as llama.cpp gives them under a grammar)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    backend = hf(tiny, dtype="float32")
    letters = ("A", "B", "C", "D")
    assert all(len(tokenizer(x, add_special_tokens=False)["input_ids"]) == 1 for x in letters)
    for prompt in PROMPTS:
        free = run(backend.generate(Request.chat(prompt, max_tokens=1, logprobs=True, top_logprobs=300)))
        raw = free.choices[0].logprobs[0].top
        picked = run(backend.generate(Request.chat(prompt, max_tokens=4, choices=letters, logprobs=True,
                                                   top_logprobs=300)))
        lp = picked.choices[0].logprobs[0]
        assert picked.text == max(letters, key=lambda x: raw[x])
        assert lp.token == picked.text and lp.logprob == pytest.approx(raw[picked.text], abs=1e-5)
        assert lp.top == pytest.approx(raw, abs=1e-5)


def test_requests_with_different_choices_share_a_batch(tiny: Path) -> None:
    backend = hf(tiny)
    requests = [Request.chat(p, max_tokens=10, choices=CHOICE_SETS[i % len(CHOICE_SETS)])
                for i, p in enumerate(PROMPTS)] + [Request.chat(PROMPTS[0], max_tokens=10)]
    batched = together(backend, requests)
    assert backend.generate_calls == 1
    alone = [run(backend.generate(r)) for r in requests]
    assert [r.text for r in batched] == [r.text for r in alone]
    assert all(r.text in q.params.choices for r, q in zip(batched[:-1], requests, strict=False))
    assert batched[-1].text not in CHOICE_SETS[0] and batched[-1].completion_tokens == 10  # unconstrained row


def test_choices_are_part_of_the_cache_key(tiny: Path) -> None:
    from structbench.backends.base import cache_fields

    backend = hf(tiny)
    picked, free = Request.chat("q", choices=("A", "AB")), Request.chat("q")
    assert b'"choices":["A","AB"]' in cache_fields(backend, picked)
    assert b"choices" not in cache_fields(backend, free)


def test_choice_mask_keeps_exactly_the_allowed_tokens_and_builds_each_nodes_ids_once() -> None:
    """Rows on a trie keep their node's children (and the ends once a choice is complete), a row off its trie
    only the ends; rows without a trie or already ended are untouched. A node's ids tensor is built once."""
    import torch

    from structbench.backends.hf import _ChoiceMask, _Trie

    stops, vocab = [2, 7], 50
    trie = _Trie()
    for path, choice in (((10, 11), "ab"), ((10,), "a"), ((12, 13, 14), "cde")):
        node = trie
        for token in path:
            node = node.children.setdefault(token, _Trie())
        node.choice = choice
    steps = [  # per step, each row: its trie, its generated tokens, and what it may take next (None: anything)
        [(trie, [], {10, 12}), (None, [], None)],
        [(trie, [10], {11, *stops}), (trie, [12], {13}), (trie, [2], None)],  # "a" is complete: end, or go on
        [(trie, [10, 11], set(stops)), (trie, [12, 13], {14}), (trie, [12, 99], set(stops)),  # 99: off the trie
         (trie, [10, 7], None), (None, [5, 6], None)],
    ]
    for rows in steps:
        input_ids = torch.tensor([[1, 1, 1, *tokens] for _, tokens, _ in rows], dtype=torch.long)
        scores = torch.randn((len(rows), vocab))
        expected = scores.clone()
        for k, (_, _, allowed) in enumerate(rows):
            if allowed is not None:
                expected[k, [t for t in range(vocab) if t not in allowed]] = -math.inf
        masked = _ChoiceMask([t for t, _, _ in rows], stops, 3)(input_ids, scores)
        assert torch.equal(masked, expected), rows
    cpu = torch.device("cpu")
    assert trie.children[10].allowed_ids(stops, cpu) is trie.children[10].allowed_ids(stops, cpu)
