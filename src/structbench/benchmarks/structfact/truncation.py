"""Evidence truncation to a token budget with a pluggable token counter.

The paper cuts the joined evidence to 2,500 tokens of the evaluated model's tokenizer and appends
``\\n...`` (Table 4; ``truncate_data`` in the official code). Tokenizers differ per model, so the
default counter is a cheap, model-free regex approximation of a subword tokenizer: a run of
letters, a digit, one or two punctuation marks, or a run of two or more spaces is one token. On the demo
evidence it counts 0.94 tokens per token of the Gemma 3 tokenizer (0.81 to 1.06 per record; 0.90 on the
paper's prose), measured by ``benchmarks/structfact_tokens.py``. It is not any model's tokenizer, so
where long evidence is cut differs a little from the paper's runs. ``token_counter=gemma`` uses the
tokenizer of the embedded Gemma 3 model (llama.cpp, offline) and ``token_counter=tiktoken`` OpenAI's
(when the ``tiktoken`` package and its encoding files are available locally).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from structbench.errors import UsageError
from structbench.registry import Registry

ELLIPSIS = "\n..."
"""Appended to truncated evidence, as in the official code."""


class TokenCounter(Protocol):
    """Counts tokens and cuts a text to its first ``n`` tokens."""

    def count(self, text: str) -> int: ...

    def head(self, text: str, n: int) -> str: ...


class RegexTokenCounter:
    """Tokens are the matches of ``pattern``; the head ends where the ``n``-th match ends."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)

    def count(self, text: str) -> int:
        return sum(1 for _ in self.pattern.finditer(text))

    def head(self, text: str, n: int) -> str:
        if n <= 0:
            return ""
        for i, match in enumerate(self.pattern.finditer(text), start=1):
            if i == n:
                return text[: match.end()]
        return text


class TiktokenCounter:
    """OpenAI's BPE tokenizer (optional dependency; its encoding must already be cached locally)."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding_name = encoding
        self._encoding: Any = None

    def _enc(self) -> Any:
        if self._encoding is None:
            try:
                import tiktoken
            except ImportError:
                raise UsageError("token_counter=tiktoken needs the tiktoken package (pip install tiktoken)") from None
            self._encoding = tiktoken.get_encoding(self.encoding_name)
        return self._encoding

    def count(self, text: str) -> int:
        return len(self._enc().encode(text))

    def head(self, text: str, n: int) -> str:
        enc = self._enc()
        return str(enc.decode(enc.encode(text)[:n]))


class LlamaCppTokenCounter:
    """The tokenizer of a GGUF model through llama.cpp (vocabulary only); default: the embedded Gemma 3."""

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path
        self._llm: Any = None

    def _model(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            from structbench.backends.llamacpp import embedded_model_path

            path = self.model_path or str(embedded_model_path())
            self._llm = Llama(model_path=path, vocab_only=True, verbose=False)
        return self._llm

    def _ids(self, text: str) -> list[int]:
        return list(self._model().tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def count(self, text: str) -> int:
        return len(self._ids(text))

    def head(self, text: str, n: int) -> str:
        ids = self._ids(text)[:n]
        return str(self._model().detokenize(ids).decode("utf-8", errors="ignore"))


SUBWORD_LIKE = r"[^\W\d_]+|\d|[^\w\s]{1,2}|_+| {2,}"
"""Letter runs, single digits, punctuation pairs, space runs: the default approximation."""

TOKEN_COUNTERS: Registry[TokenCounter] = Registry("token counter")
TOKEN_COUNTERS.register("regex", RegexTokenCounter(SUBWORD_LIKE))
TOKEN_COUNTERS.register("whitespace", RegexTokenCounter(r"\S+"))
TOKEN_COUNTERS.register("gemma", LlamaCppTokenCounter())
TOKEN_COUNTERS.register("tiktoken", TiktokenCounter())


def truncate(text: str, max_tokens: int, counter: TokenCounter) -> tuple[str, bool]:
    """``text`` cut to ``max_tokens`` tokens plus ``\\n...`` if longer (0 = no limit), and whether it was."""
    if max_tokens <= 0 or counter.count(text) <= max_tokens:
        return text, False
    return counter.head(text, max_tokens) + ELLIPSIS, True
