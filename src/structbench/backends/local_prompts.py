"""Requests as token ids for in-process models (``hf``, ``vllm``): chat templates, end-of-turn tokens,
context checks, the same way for both backends.

Chat requests go through the tokenizer's own chat template; a model without one gets the template the
llama.cpp backend uses for it (Gemma's turn format for Gemma models, a plain transcript otherwise), so the
three local backends render the embedded model's prompts identically. A completion prompt is encoded
with the tokenizer's special tokens (BOS where the model wants one). A reply goes through the reasoning splitter
(``local_choice``): a template that writes the opening think tag into the prompt (DeepSeek-R1's, Qwen3's with
thinking on) makes the reply begin inside the thought, which the rendered prompt shows (``Prompt.opened``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Literal

from structbench.backends.base import PROMPT_TOO_LONG, BackendError, Choice, GenerationParams, Request, reply_choice
from structbench.backends.current import current_sample
from structbench.backends.reasoning import DEFAULT_THINK_TAGS, ThinkTags, opens_thought

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


@dataclass(frozen=True)
class Prompt:
    """A request's prompt as token ids, and whether it ends inside a thought (the chat template opened one)."""

    ids: list[int]
    opened: bool = False


def encode_prompt(tokenizer: Any, request: Request, template: str) -> Prompt:
    """The request's prompt token ids (chat messages through ``template`` with the request's chat-template
    arguments, BOS as the model wants it), and whether the rendered prompt opened a thought."""
    tags = request.params.think_tags
    if request.messages is None:
        text = request.prompt or ""
        return Prompt(list(tokenizer(text, add_special_tokens=True)["input_ids"]), opens_thought(text, tags))
    text = tokenizer.apply_chat_template(
        request.prompt_payload(), chat_template=template, tokenize=False, add_generation_prompt=True,
        **(request.params.chat_template_args or {}),
    )
    return Prompt(list(tokenizer(text, add_special_tokens=False)["input_ids"]), opens_thought(text, tags))


def encode(tokenizer: Any, request: Request, template: str) -> list[int]:
    """``encode_prompt``'s token ids."""
    return encode_prompt(tokenizer, request, template).ids


_TAG_IDS: weakref.WeakKeyDictionary[Any, dict[ThinkTags | None, frozenset[int]]] = weakref.WeakKeyDictionary()


def tag_ids(tokenizer: Any, params: GenerationParams) -> frozenset[int]:
    """The ids of think tags that are one special token each: decoding without special tokens would drop them.
    Found once per tokenizer and tag pairs (a vocabulary is read whole)."""
    try:
        known = _TAG_IDS.setdefault(tokenizer, {})
    except TypeError:  # a tokenizer that cannot be weakly referenced: no memo
        known = {}
    if params.think_tags not in known:
        known[params.think_tags] = _special_tag_ids(tokenizer, params.think_tags)
    return known[params.think_tags]


def _special_tag_ids(tokenizer: Any, think_tags: ThinkTags | None) -> frozenset[int]:
    special = set(getattr(tokenizer, "all_special_tokens", ()))
    special |= {t.content for t in getattr(tokenizer, "added_tokens_decoder", {}).values() if getattr(t, "special", 0)}
    vocab = tokenizer.get_vocab()
    tags = {tag for pair in (think_tags or DEFAULT_THINK_TAGS) for tag in pair}
    return frozenset(vocab[tag] for tag in tags if tag in special and tag in vocab)


def decode_reply(tokenizer: Any, tokens: list[int], keep: frozenset[int]) -> str:
    """Generated ``tokens`` as text without special tokens, except the think tags among ``keep``."""
    if not keep.intersection(tokens):
        return str(tokenizer.decode(tokens, skip_special_tokens=True))
    parts: list[str] = []
    run: list[int] = []
    for token in tokens:
        if token in keep:
            parts += [tokenizer.decode(run, skip_special_tokens=True), tokenizer.decode([token])]
            run = []
        else:
            run.append(token)
    return "".join([*parts, tokenizer.decode(run, skip_special_tokens=True)])


def local_choice(tokenizer: Any, text: str, params: GenerationParams, *, opened: bool, finish_reason: str | None,
                 logprobs: Any = None) -> Choice:
    """A local model's decoded reply as a choice: the answer apart from the thought, whose tokens the model's own
    tokenizer counts."""
    return reply_choice(text, params, finish_reason=finish_reason, logprobs=logprobs, opened=opened,
                        count_tokens=lambda t: len(tokenizer(t, add_special_tokens=False)["input_ids"]))


def sample_label() -> str:
    """The sample being run (``bench/id``), for error messages; '' outside a run."""
    sample = current_sample.get(None)
    return "" if sample is None else sample.label


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
