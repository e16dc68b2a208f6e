"""What a sample's record keeps of its replies' thoughts, and whether the sample was left without an answer
because its replies ended inside their thoughts (``backends.reasoning``): out of tokens, or ended by the model
without closing the thought (``never_closed``)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from structbench.backends.base import Choice
from structbench.backends.reasoning import ThinkTags, unsplit_tag
from structbench.contract.benchmark import Attempt
from structbench.core.redact import redact

MAX_REASONING_CHARS = 50_000
"""Characters of a thought kept in a record (its head and its tail); the whole thought stays in the response
cache. Thoughts of tens of thousands of tokens would otherwise make ``samples.jsonl`` many times larger."""


def clip(text: str, limit: int = MAX_REASONING_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and its tail (where the conclusion is)."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return f"{text[:head]}\n… [{len(text) - limit} characters cut] …\n{text[len(text) - (limit - head):]}"


@dataclass(frozen=True)
class Thought:
    """The reasoning side of one sample's attempt."""

    reasoning: str | None
    """The thought behind the attempt's output: secrets redacted, then cut to ``MAX_REASONING_CHARS``."""
    tokens: int | None
    """That thought's length in tokens, where the backend knew it (a hidden thought's too: no text, a count)."""
    cut_off: bool
    """The sample has no answer because replies ran out of tokens inside their thoughts: no reply the attempt
    carries has an answer, and at least one of the sample's replies was cut off in its thought."""
    replies_cut_off: int
    """How many of the sample's replies ended inside their thought."""


def never_closed(choice: Choice, stop: Sequence[str]) -> bool:
    """Whether a reply ended inside its thought because the model ended it there (``finish_reason`` ``stop``, the
    request without stop strings, which could have ended it too): no token budget ran out, the thought's closing tag
    was never written (it is not the one split on, or the chat template opened a thought the model did not think in).
    A reply cut off by its budget ends with ``length``."""
    return choice.reasoning_cut_off and choice.finish_reason == "stop" and not stop

NO_THOUGHT = Thought(reasoning=None, tokens=None, cut_off=False, replies_cut_off=0)
"""The thought of an attempt whose replies had none (most of them): no need to look for its source."""


def thought_of(attempt: Attempt, replies: Sequence[Choice]) -> Thought:
    """The thought of the reply the attempt's output came from (the last reply with that text; else the last
    reply), and whether the sample was left unanswered by thoughts that never closed."""
    if all(c.reasoning is None and c.reasoning_tokens is None and not c.reasoning_cut_off for c in replies):
        return NO_THOUGHT
    cut = sum(c.reasoning_cut_off for c in replies)
    answered = any(text.strip() for text in (attempt.output, *attempt.outputs))
    source = next((c for c in reversed(replies) if attempt.output.strip() and c.text == attempt.output), None)
    if source is None and replies:
        source = replies[-1]
    reasoning = source.reasoning if source is not None else None
    return Thought(
        reasoning=clip(redact(reasoning)) if reasoning is not None else None,
        tokens=source.reasoning_tokens if source is not None else None,  # a hidden thought has only its count
        cut_off=cut > 0 and not answered,
        replies_cut_off=cut,
    )



class UnsplitThoughts:
    """Says once, on ``notify``, that a reply's answer begins with a known thinking tag the run does not split on
    (``backends.reasoning.unsplit_tag``): its thought is then parsed as the answer, and ``--think-tags`` would take
    it out. Never splits unasked: such a tag could begin an answer's own text. The note names no sample, so worker
    processes that each see such a reply give the run one note (the dispatcher drops a repeated one)."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self.notify = notify
        self.said = False

    def see(self, choices: Sequence[Choice], tags: ThinkTags | None) -> None:
        """Look at a reply's answers (``tags``: the request's think tags, None for the default ones)."""
        if self.said:
            return
        pair = next((p for c in choices if (p := unsplit_tag(c.text, tags)) is not None), None)
        if pair is not None:
            self.said = True
            self.notify(f"note: a reply's answer begins with {pair[0]!r}, a thinking tag this run does not split on, "
                        f"so a thought may be parsed as the answer; if the model thinks between {pair[0]} and "
                        f"{pair[1]}, run with --think-tags {shlex.quote(','.join(pair))} (docs/usage/reasoning.md)")
