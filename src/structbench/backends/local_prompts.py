"""Requests as token ids for in-process models (``hf``, ``vllm``): chat templates, end-of-turn tokens,
context checks, the same way for both backends.

Chat requests go through the tokenizer's own chat template; a model without one gets the template the
llama.cpp backend uses for it (Gemma's turn format for Gemma models, a plain transcript otherwise), so the
three local backends render the embedded model's prompts identically. A completion prompt is encoded
with the tokenizer's special tokens (BOS where the model wants one).
"""

from __future__ import annotations

from typing import Any, Literal

from structbench.backends.base import PROMPT_TOO_LONG, BackendError, Request

END_OF_TURN_TOKENS = ("<end_of_turn>", "<|eot_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<|end_of_text|>")
"""Special tokens that end a turn in common chat formats; generation stops on any the vocabulary has."""

Truncate = Literal["error", "left"]


def chat_template(tokenizer: Any, model_type: str) -> str:
    """The tokenizer's chat template, or the llama.cpp backend's fallback for ``model_type``."""
    from structbench.backends.llamacpp import fallback_template

    template = getattr(tokenizer, "chat_template", None)
    return template if isinstance(template, str) and template else fallback_template(model_type)


def stop_token_ids(tokenizer: Any, generation_config: Any) -> list[int]:
    """End-of-sequence ids: the tokenizer's, the generation config's, and known end-of-turn tokens."""
    ids: list[int] = []
    configured = getattr(generation_config, "eos_token_id", None)
    for value in [tokenizer.eos_token_id, *(configured if isinstance(configured, list) else [configured])]:
        if isinstance(value, int) and value not in ids:
            ids.append(value)
    vocab = tokenizer.get_vocab()
    for token in END_OF_TURN_TOKENS:
        if token in vocab and vocab[token] not in ids:
            ids.append(vocab[token])
    return ids


def encode(tokenizer: Any, request: Request, template: str) -> list[int]:
    """The request's prompt token ids (chat messages through ``template``, BOS as the model wants it)."""
    if request.messages is None:
        return list(tokenizer(request.prompt or "", add_special_tokens=True)["input_ids"])
    text = tokenizer.apply_chat_template(
        request.prompt_payload(), chat_template=template, tokenize=False, add_generation_prompt=True
    )
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def sample_label() -> str:
    """The sample being run (``bench/id``), for error messages; '' outside a run."""
    from structbench.benchmark import current_sample

    try:
        bench, sample = current_sample.get()
    except LookupError:
        return ""
    return f"{bench.name}/{sample.id}"


def fit_context(ids: list[int], max_tokens: int, context: int, truncate: Truncate, sample: str) -> list[int]:
    """``ids`` when prompt plus reply budget fit the context; else the last tokens (``truncate=left``) or an
    error naming the sample."""
    if len(ids) + max_tokens <= context:
        return ids
    where = f"sample {sample}: " if sample else ""
    if truncate == "left" and context - max_tokens > 0:
        return ids[len(ids) - (context - max_tokens):]
    raise BackendError(
        f"{where}prompt of {len(ids)} tokens plus max_tokens {max_tokens} exceeds the model's context of "
        f"{context} tokens"
        + ("" if truncate == "left" else " (--model-option truncate=left keeps the prompt's last tokens)"),
        cause=PROMPT_TOO_LONG,
    )
