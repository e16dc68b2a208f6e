"""What an OpenAI-compatible server says about the model's context: the refusal of a prompt that does not fit,
in each server's own words, and the context its model list announces.

A prompt longer than the context is refused with a 400 (a 500 from llama.cpp servers before late 2025) whose
wording differs by server. Recognising it matters: the same request can never succeed, so it must not be
retried, and the sample is not a wrong answer but one the model cannot take (``base.PROMPT_TOO_LONG``).
"""

from __future__ import annotations

import re
from typing import Any

CONTEXT_REFUSALS: tuple[str, ...] = (
    # OpenAI, vLLM's OpenAI server and llama-cpp-python's server: "This model's maximum context length is 8192
    # tokens. However, you requested 14937 tokens ..." (vLLM >= 0.10: "... is 8192 tokens and your request has")
    r"maximum context length is (\d+)",
    # SGLang: "Requested token count exceeds the model's maximum context length of 8192 tokens. ..."
    r"maximum context length of (\d+)",
    # SGLang: "The input (9000 tokens) is longer than the model's context length (8192 tokens)."
    r"longer than the model's context length \((\d+)",
    # vLLM's engine: "The decoder prompt (length 9000) is longer than the maximum model length of 8192."
    r"longer than the maximum model length of (\d+)",
    # llama.cpp server: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing
    # it", earlier "the request exceeds the available context size. try increasing the context size ..."
    r"exceeds the available context size(?: \((\d+) tokens\))?",
    # Hugging Face TGI: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. ..."
    r"`inputs` tokens \+ `max_new_tokens` must be <= (\d+)",
    # the error codes of OpenAI and of the llama.cpp server
    r"context_length_exceeded",
    r"exceed_context_size_error",
)
"""The refusals' wordings, searched case-insensitively; ``re`` compiles them on the first error reply (its cache keeps
them), so a run that gets none does not compile them at start-up."""
N_CTX_FIELD = r'"n_ctx"\s*:\s*(\d+)'
"""The llama.cpp server's error body also gives the context as a field."""


def context_refusal(status: int, body: str) -> int | bool | None:
    """For an error reply: False when it is not a context refusal, else the context it names (None when it names
    none). A 2xx reply is never one."""
    if status < 400:
        return False
    for pattern in CONTEXT_REFUSALS:
        match = re.search(pattern, body, re.IGNORECASE)
        if match is not None:
            number = match.group(1) if match.groups() else None
            if number is None:
                field = re.search(N_CTX_FIELD, body)
                number = field.group(1) if field else None
            return int(number) if number else None
    return False


MODEL_CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")
"""Fields of a ``/v1/models`` entry that give the served context: vLLM and SGLang (``max_model_len``), and the
names other servers use."""


def listed_context(models: Any, model: str) -> tuple[int | None, bool]:
    """The served context a ``/v1/models`` reply gives for ``model`` (the entry with its id, or the only entry),
    and whether the entry is a llama.cpp server's (``meta``), whose ``/props`` gives the context it serves: its
    ``meta.n_ctx_train`` is only the training context, an upper bound."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None, False
    entries = [e for e in data if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if entry is None:
        return None, False
    for name in MODEL_CONTEXT_FIELDS:
        value = _positive(entry.get(name))
        if value is not None:
            return value, False
    meta = entry.get("meta")
    if isinstance(meta, dict):
        return _positive(meta.get("n_ctx")) or _positive(meta.get("n_ctx_train")), True
    return None, False


def props_context(props: Any) -> int | None:
    """The context a llama.cpp server serves, from its ``/props`` (``default_generation_settings.n_ctx``)."""
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
