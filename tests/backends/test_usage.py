"""Token usage: a count the server did not send stays unknown through every sum, never 0."""

from __future__ import annotations

from structbench.backends.base import Choice, Response
from structbench.backends.mock import MockBackend
from structbench.backends.usage import CallUsage, Usage, split_usage, totals_cell, usage_groups, usage_text


def call(prompt: int | None, completion: int | None, *, reasoning: int | None = None, cached: int | None = None,
         reused: bool = False, batch: bool = False, model: str = "openai:m") -> CallUsage:
    return CallUsage(model=model, prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=reasoning,
                     cached_tokens=cached, reused=reused, batch=batch)


def test_sums_keep_unknown_apart_from_zero() -> None:
    total = Usage.total([call(100, 42, reasoning=40), call(100, 42, reasoning=40)])
    assert (total.calls, total.prompt_tokens, total.completion_tokens, total.reasoning_tokens) == (2, 200, 84, 80)
    assert total.cached_tokens is None and total.unknown == 0  # nobody reported cached tokens: unknown, not 0
    silent = Usage.total([call(None, None), call(None, None)])
    assert silent.prompt_tokens is None and silent.completion_tokens is None and silent.unknown == 2
    mixed = Usage.total([call(10, 2), call(None, None)])
    assert (mixed.prompt_tokens, mixed.unknown) == (10, 1)  # the sum says it misses a call
    assert usage_text(silent) == "2 calls: prompt tokens unknown, completion tokens unknown"


def test_a_call_takes_its_response_usage_and_its_origin() -> None:
    from structbench.backends.mock import MockBackend

    backend = MockBackend(default="x")
    fresh = Response((Choice("a"),), prompt_tokens=100, completion_tokens=42, reasoning_tokens=40, cached_tokens=60)
    made = CallUsage.of(backend, fresh, batch=True)
    assert (made.prompt_tokens, made.completion_tokens, made.reasoning_tokens, made.cached_tokens) == (100, 42, 40, 60)
    assert made.batch and not made.reused and made.model == f"mock:{backend.model}"
    hit = CallUsage.of(backend, Response((Choice("a"),), prompt_tokens=100, cached=True), batch=True)
    assert hit.reused and not hit.batch  # a reused answer is not paid again, at any rate


def test_made_and_reused_calls_are_summed_apart_per_model_and_rate() -> None:
    calls = [call(100, 42), call(100, 42, reused=True), call(10, 1, batch=True), call(5, 5, model="openai:judge")]
    made, reused = split_usage(calls)
    assert (made.calls, made.prompt_tokens, reused.calls, reused.prompt_tokens) == (3, 115, 1, 100)
    groups = usage_groups(calls)
    assert set(groups) == {("openai:m", False, False), ("openai:m", False, True), ("openai:m", True, False),
                           ("openai:judge", False, False)}


def test_response_usage_survives_the_cache_round_trip() -> None:
    response = Response((Choice("a"),), prompt_tokens=100, completion_tokens=42, reasoning_tokens=40, cached_tokens=7)
    back = Response.from_json(response.to_json())
    assert (back.prompt_tokens, back.completion_tokens, back.reasoning_tokens, back.cached_tokens) == (100, 42, 40, 7)
    old = response.to_json()
    del old["reasoning_tokens"], old["cached_tokens"]  # an entry cached before they were kept
    back = Response.from_json(old)
    assert back.reasoning_tokens is None and back.cached_tokens is None


def test_the_table_cell_is_compact_and_says_unknown() -> None:
    from structbench.backends.usage import UsageTotals

    assert totals_cell(None) == "–"
    priced = UsageTotals(usage=Usage.total([call(12_345, 4_500)]), cost_usd=0.0123,
                         reused=Usage.total([call(2_000, 0, reused=True)]))
    assert totals_cell(priced) == "12.3k in, 4.5k out, 0.0123 USD (+2.0k reused)"
    assert totals_cell(UsageTotals(usage=Usage.total([call(None, None)]))) == "unknown"
    # a backend that counts prompt tokens only (the mock, the oracle): said in words, never "– out?"
    assert totals_cell(UsageTotals(usage=Usage.total([call(1_200, None)] * 2))) == "2.4k in, out unreported"
    assert totals_cell(UsageTotals(usage=Usage.total([call(100, 5), call(None, None)]))) == \
        "100 in, 5 out (1 of 2 calls unreported)"


def test_the_openai_backend_reads_cached_and_reasoning_tokens() -> None:
    from structbench.backends.openai_compat import OpenAIBackend

    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 42, "prompt_tokens_details": {"cached_tokens": 64},
                      "completion_tokens_details": {"reasoning_tokens": 40}}}
    response = OpenAIBackend._parse(body, chat=True)
    assert (response.prompt_tokens, response.completion_tokens) == (100, 42)
    assert (response.reasoning_tokens, response.cached_tokens) == (40, 64)
    del body["usage"]
    bare = OpenAIBackend._parse(body, chat=True)
    assert (bare.prompt_tokens, bare.completion_tokens, bare.reasoning_tokens, bare.cached_tokens) == (None,) * 4


def test_an_impossible_count_is_unknown_never_subtracted() -> None:
    from structbench.backends.anthropic import message_usage
    from structbench.backends.base import MAX_CALL_TOKENS
    from structbench.backends.openai_compat import OpenAIBackend

    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": -1_000_000, "completion_tokens": MAX_CALL_TOKENS + 1,
                      "prompt_tokens_details": {"cached_tokens": -3},
                      "completion_tokens_details": {"reasoning_tokens": 7}}}
    response = OpenAIBackend._parse(body, chat=True)
    assert (response.prompt_tokens, response.completion_tokens, response.cached_tokens) == (None, None, None)
    made = CallUsage.of(MockBackend(default="x"), response)
    assert not made.known and Usage.total([call(100, 42), made]).prompt_tokens == 100  # one call's tokens unknown
    assert Usage.total([call(100, 42), made]).unknown == 1
    # whatever the backend: a plugin's response is checked too, and Anthropic's parts make an unknown sum
    assert Response((Choice("a"),), prompt_tokens=-5, completion_tokens=3).prompt_tokens is None
    assert message_usage({"usage": {"input_tokens": 10, "cache_read_input_tokens": -4, "output_tokens": 2}})[0] is None
    assert CallUsage.model_validate({"model": "m", "prompt_tokens": -1_000_000, "completion_tokens": 5}).prompt_tokens \
        is None  # a record an older structbench wrote
