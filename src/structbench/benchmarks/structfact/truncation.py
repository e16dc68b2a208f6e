"""Evidence truncation to a token budget.

The paper cuts the joined evidence to 2,500 tokens of the evaluated model's tokenizer and appends
``\\n...`` (Table 4; ``truncate_data`` in the official code). Tokens are counted by a
``structbench.backends.tokens`` counter (the ``token_counter`` option): by default ``regex``, a cheap model-free
approximation of a subword tokenizer that counts 0.94 tokens per token of the Gemma 3 tokenizer on the
demo evidence (0.81 to 1.06 per record; 0.90 on the paper's prose; ``benchmarks/structfact_tokens.py``).
It is not any model's tokenizer, so where long evidence is cut differs a little from the paper's runs;
``hf:MODEL``, ``vllm:MODEL`` or ``llamacpp:PATH`` count with the evaluated model's own tokenizer.
"""

from __future__ import annotations

from structbench.backends.tokens import TokenCounter

ELLIPSIS = "\n..."
"""Appended to truncated evidence, as in the official code."""


def truncate(text: str, max_tokens: int, counter: TokenCounter) -> tuple[str, bool]:
    """``text`` cut to ``max_tokens`` tokens plus ``\\n...`` if longer (0 = no limit), and whether it was."""
    if max_tokens <= 0 or counter.fits(text, max_tokens):
        return text, False
    return counter.head(text, max_tokens) + ELLIPSIS, True
