"""The reasoning splitter every backend runs replies through, and what the response cache keeps of a thought."""

from __future__ import annotations

import asyncio

import pytest

from structbench.backends.base import (
    Choice,
    GenerationParams,
    Request,
    Response,
    TokenLogprob,
    cache_fields,
    reply_choice,
)
from structbench.backends.mock import MockBackend
from structbench.backends.reasoning import Split, check_tags, opens_thought, split_reasoning, unsplit_tag


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("A", {}, Split("A", None)),
        ("  the answer is A \n", {}, Split("  the answer is A \n", None)),  # no thought: unchanged
        ("<think>B? no.</think>\n\nA", {}, Split("A", "B? no.")),
        ("<think>\nB?\n</think>A", {"finish_reason": "stop"}, Split("A", "B?")),
        ("B? no.</think>\n\nA", {}, Split("A", "B? no.")),  # the template opened the thought
        ("B? no.</think>\n\nA", {"opened": True}, Split("A", "B? no.")),
        ("<think>B? so B", {"finish_reason": "length"}, Split("", "B? so B", cut_off=True)),
        ("B? so B", {"opened": True, "finish_reason": "length"}, Split("", "B? so B", cut_off=True)),
        ("", {"opened": True, "finish_reason": "length"}, Split("", None, cut_off=True)),
        ("<think>B</think>", {}, Split("", "B")),  # only a thought: no answer, not cut off
        ("<think></think>\n\nA", {}, Split("A", None)),  # Qwen3 with thinking off: an empty thought
        ("<think>a<think>b</think>c</think> A", {}, Split("A", "abc")),  # nested
        ("<think>a<think>b</think> A", {}, Split("", "ab A", cut_off=True)),  # the outer thought never closed
        ("a</think>b</think> A", {}, Split("A", "ab")),  # two closing tags: all before the last is thought
        ("x <think>y</think> A <think>z</think> B", {}, Split("x  A  B", "yz")),  # interleaved
        ("A", {"field": "B? no."}, Split("A", "B? no.")),
        ("", {"field": "B? so B", "finish_reason": "length"}, Split("", "B? so B", cut_off=True)),
        ("", {"field": "B?", "finish_reason": "stop"}, Split("", "B?")),
        ("<think>C?</think>A", {"field": "B?"}, Split("A", "B?\n\nC?")),  # a thought in the field and inline
        ("A", {"field": "   "}, Split("A", None)),
        ("[THINK]B?[/THINK]A <think>x</think>", {"tags": (("[THINK]", "[/THINK]"),)},
         Split("A <think>x</think>", "B?")),
        ("<t>B?</t>A<think>x</think>", {"tags": (("<t>", "</t>"), ("<think>", "</think>"))}, Split("A", "B?x")),
        ("<THINK>B?</THINK>\nA", {}, Split("A", "B?")),  # the default tags in any case
        ("<Think>B?</think>A", {}, Split("A", "B?")),
        ("B?</Think>A", {}, Split("A", "B?")),
        ("<THINK>B? so B", {"finish_reason": "length"}, Split("", "B? so B", cut_off=True)),
        ("[think]B?[/think]A", {"tags": (("[THINK]", "[/THINK]"),)}, Split("[think]B?[/think]A", None)),  # as given
        ("<thinking>B?</thinking>A", {}, Split("<thinking>B?</thinking>A", None)),  # never split unasked
    ],
)
def test_split(text: str, kwargs: dict[str, object], expected: Split) -> None:
    assert split_reasoning(text, **kwargs) == expected  # type: ignore[arg-type]


def test_opens_thought() -> None:
    assert opens_thought("<|User|>q<|Assistant|><think>\n")
    assert not opens_thought("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # Qwen3, thinking off
    assert not opens_thought("<|im_start|>assistant\n")
    assert not opens_thought("<think> a prompt that quotes a tag </think> and goes on")
    assert opens_thought("x [THINK]", (("[THINK]", "[/THINK]"),))
    assert opens_thought("<|User|>q<|Assistant|><THINK>\n")


def test_an_answer_that_begins_with_a_known_thinking_tag_names_the_tags_that_read_it() -> None:
    assert unsplit_tag("\n <thinking>B?</thinking>A") == ("<thinking>", "</thinking>")
    assert unsplit_tag("[THINK]B?[/THINK]A") == ("[THINK]", "[/THINK]")
    assert unsplit_tag("<seed:think>B?") == ("<seed:think>", "</seed:think>")
    assert unsplit_tag("<|channel|>analysis<|message|>B?<|end|><|start|>assistant<|channel|>final<|message|>A") == (
        "<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>final<|message|>")
    assert unsplit_tag("<think>B?", (("[THINK]", "[/THINK]"),)) == ("<think>", "</think>")  # tags given instead
    assert unsplit_tag("[THINK]B?[/THINK]A", (("[THINK]", "[/THINK]"),)) is None  # named: split, said nothing
    for answer in ("A", "", "<think>", "The <thinking> tag", "<table>"):
        assert unsplit_tag(answer) is None


def test_tag_pairs_are_checked() -> None:
    assert check_tags([["<a>", "</a>"]]) == (("<a>", "</a>"),)
    for bad in ([["<a>"]], [["<a>", "<a>"]], [["", "</a>"]], []):
        with pytest.raises(ValueError):
            check_tags(bad)


def test_a_reply_with_a_thought_loses_its_logprobs_and_counts_its_tokens() -> None:
    params = GenerationParams()
    lps = (TokenLogprob("A", -0.1),)
    plain = reply_choice("A", params, logprobs=lps)
    assert plain == Choice(text="A", logprobs=lps)
    thinking = reply_choice("<think>one two three</think>A", params, logprobs=lps,
                            count_tokens=lambda t: len(t.split()))
    assert thinking == Choice(text="A", reasoning="one two three", reasoning_tokens=3,
                              raw="<think>one two three</think>A")  # as written: what a paper's reader read
    known = reply_choice("A", params, field="one two", reasoning_tokens=7, count_tokens=len)
    assert known.reasoning_tokens == 7
    custom = reply_choice("<r>x</r>A", GenerationParams(think_tags=(("<r>", "</r>"),)))
    assert (custom.text, custom.reasoning) == ("A", "x")
    opened = reply_choice("x", GenerationParams(thought_opened=True), finish_reason="length")
    assert opened.text == "" and opened.reasoning_cut_off


def test_the_cache_keeps_the_thought_and_splits_entries_stored_before() -> None:
    response = Response(choices=(Choice(text="A", finish_reason="stop", reasoning="B?", reasoning_tokens=2),
                                 Choice(text="", finish_reason="length", reasoning="C?", reasoning_cut_off=True)))
    assert Response.from_json(response.to_json()) == response
    old = {"choices": [{"text": "<think>B?</think>A", "logprobs": None, "finish_reason": "stop"},
                       {"text": "<think>C?", "logprobs": None, "finish_reason": "length"},
                       {"text": "A", "logprobs": None, "finish_reason": "stop"}],
           "prompt_tokens": 3, "completion_tokens": 4}
    read = Response.from_json(old)
    assert [(c.text, c.reasoning, c.reasoning_cut_off) for c in read.choices] == [
        ("A", "B?", False), ("", "C?", True), ("A", None, False)]
    assert read.prompt_tokens == 3


def test_reasoning_settings_key_the_cache_only_when_set() -> None:
    backend = MockBackend()
    request = Request.chat("q", max_tokens=8)
    before = cache_fields(backend, request)
    assert b"reasoning" not in before and b"think" not in before  # keys of requests without them never change
    for params in (GenerationParams(max_tokens=8, reasoning_effort="low"),
                   GenerationParams(max_tokens=8, think_tags=(("<t>", "</t>"),)),
                   GenerationParams(max_tokens=8, thought_opened=True)):
        assert cache_fields(backend, Request(messages=request.messages, params=params)) != before


def test_a_scripted_thought_is_kept_apart() -> None:
    backend = MockBackend(default="<think>B?</think>A")
    response = asyncio.run(backend.generate(Request.chat("q", n=2)))
    assert [(c.text, c.reasoning) for c in response.choices] == [("A", "B?"), ("A", "B?")]
