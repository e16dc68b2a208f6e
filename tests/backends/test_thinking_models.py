"""Local models whose chat template thinks (``tiny_models.build_thinking_model``): the ``hf``, ``llamacpp`` and
``vllm`` backends keep the thought apart from the answer, see that the template opened it, count its tokens with
the model's tokenizer, pass chat-template arguments (``enable_thinking``), and leave a reply cut off inside its
thought without an answer; a run through the command line (in this process) scores the answer, never the thought."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from backends.tiny_models import ANSWER, THOUGHT, build_thinking_model, require

require("torch")
require("transformers")

from structbench.backends.base import Request, Response  # noqa: E402
from structbench.backends.factory import BackendSpec, make_backend  # noqa: E402
from structbench.testing.cli import invoke  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def thinker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_thinking_model(tmp_path_factory.mktemp("models") / "thinker")


def _replies(model: str, options: dict[str, str] | None = None) -> list[Response]:
    """One backend, four requests: thinking, thinking off, a budget shorter than the thought, constrained."""
    backend = make_backend(BackendSpec.parse(model, options=options or {}))
    requests = [
        Request.chat("Is it A or B?", max_tokens=16),
        Request.chat("Is it A or B?", max_tokens=16, chat_template_args={"enable_thinking": False}),
        Request.chat("Is it A or B?", max_tokens=2),
        Request.chat("Is it A or B?", max_tokens=16, choices=("A", "B")),
    ]

    async def go() -> list[Response]:
        try:
            return [await backend.generate(r) for r in requests]
        finally:
            await backend.aclose()

    return asyncio.run(go())


def _check(responses: list[Response]) -> None:
    # the backend counts the thought's tokens itself: in the choice, and in the response's usage
    assert [r.reasoning_tokens for r in responses] == [3, 0, 1, 0]
    assert all(r.prompt_tokens and r.completion_tokens for r in responses)
    thinking, off, cut, constrained = (r.choices[0] for r in responses)
    assert (thinking.text, thinking.reasoning, thinking.reasoning_cut_off) == (ANSWER, THOUGHT, False)
    assert thinking.reasoning_tokens == 3  # "B", " ", "no" in the model's own tokens
    assert (off.text, off.reasoning, off.reasoning_cut_off) == (ANSWER, None, False)
    assert (cut.text, cut.reasoning, cut.reasoning_cut_off, cut.finish_reason) == ("", "B", True, "length")
    assert (constrained.text, constrained.reasoning_cut_off) in (("A", False), ("B", False))  # no room to think


def test_hf(thinker: Path) -> None:
    _check(_replies(f"hf:{thinker}", {"dtype": "float32"}))


def test_llamacpp(thinker: Path) -> None:
    require("llama_cpp")
    _check(_replies(f"llamacpp:{thinker / 'model.gguf'}", {"n_ctx": "512"}))


@pytest.mark.slow
def test_vllm(thinker: Path) -> None:
    require("vllm")
    _check(_replies(f"vllm:{thinker}", {"dtype": "float32", "kv_cache_memory_bytes": str(64 << 20),
                                        "max_model_len": "512", "max_num_seqs": "8", "enforce_eager": "true"}))


def _run(tmp_path: Path, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    env = {**os.environ, "STRUCTBENCH_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
    proc = invoke("run", "-b", "structfact:demo", "-s", "zero_shot,few_shot", "--data-dir", str(TESTS / "synthetic"),
                  "--allow-modified-data", "--no-progress", "--out", str(out), *args, env=env)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return records, json.loads((out / "metrics.json").read_text()), proc.stderr


@pytest.mark.parametrize("backend", ["hf", "llamacpp"])
def test_a_run_scores_the_answer_of_a_thinking_model(thinker: Path, tmp_path: Path, backend: str) -> None:
    """StructFact's zero-shot answer budget is 10 tokens: enough for this model's short thought; its thought names B
    and its answer A, so every parsed answer is option A's label (never B's) and the thought is in every record."""
    if backend == "llamacpp":
        require("llama_cpp")
    model = f"hf:{thinker}" if backend == "hf" else f"llamacpp:{thinker / 'model.gguf'}"
    records, _, _ = _run(tmp_path, "-m", model)
    assert records and all(r["error"] is None for r in records)
    assert all(r["output"] == ANSWER and r["reasoning"] == THOUGHT and r["reasoning_tokens"] == 3 for r in records)
    assert all(r["usage"]["calls"] == 1 and r["usage"]["reasoning_tokens"] == 3 for r in records)  # counted locally
    letter_a = {r["parsed"] for r in records}
    assert len(letter_a) == 1 and None not in letter_a  # the same option, A, for every question
    cut, metrics, stderr = _run(tmp_path, "-m", model, "--max-tokens", "2")
    assert all(r["reasoning_cut_off"] and r["parsed"] is None and r["output"] == "" for r in cut)
    assert all(r["reasoning_cut_off"] == r["n"] > 0 for r in metrics["results"])
    assert "got no answer: the model's replies ran out of tokens inside its thought" in stderr
    off, _, _ = _run(tmp_path, "-m", model, "--chat-template-arg", "enable_thinking=false")
    # (llama.cpp enforces StructFact's min_tokens=2, so one more token follows the answer there)
    assert all(r["output"].startswith(ANSWER) and r["reasoning"] is None for r in off)
    assert {r["parsed"] for r in off} == letter_a


def test_think_tags_that_are_special_tokens_survive_decoding(thinker: Path) -> None:
    """Decoding skips special tokens; think tags a tokenizer declares special are kept (else the thought would
    read as the answer)."""
    from transformers import AutoTokenizer

    from structbench.backends.base import GenerationParams
    from structbench.backends.local_prompts import decode_reply, tag_ids

    tokenizer = AutoTokenizer.from_pretrained(thinker)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<r>", "</r>"]})
    ids = tokenizer("<r>B no</r>A", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    params = GenerationParams(think_tags=(("<r>", "</r>"),))
    keep = tag_ids(tokenizer, params)
    assert keep == {tokenizer.convert_tokens_to_ids("<r>"), tokenizer.convert_tokens_to_ids("</r>")}
    assert decode_reply(tokenizer, ids, keep) == "<r>B no</r>A"
    assert decode_reply(tokenizer, ids, frozenset()) == "B noA"  # what skipping special tokens alone gives
    assert tag_ids(tokenizer, GenerationParams()) == frozenset()  # <think> is an ordinary added token here
