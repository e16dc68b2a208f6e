"""Reasoning apart from the answer: the one splitter every backend runs its replies through.

A reasoning model's reply carries a thought before its answer: inline between think tags (``<think>`` ...
``</think>`` by default; other pairs are configurable), in a field of the reply (``reasoning_content``,
``reasoning``), or both. ``split_reasoning`` returns the answer (what parsers read) and the thought apart:

- Text between an opening and its closing tag is thought; tags nest (``<think>a<think>b</think>c</think>``
  is one thought).
- A closing tag with no opening one means the reply began inside the thought (the chat template wrote the
  opening tag, as DeepSeek-R1's and Qwen3's do): everything before it is thought. ``opened`` says so up
  front, so a reply with no closing tag at all is known to be all thought.
- A reply that ends inside a thought (an opening tag never closed, usually the token budget ran out there;
  or, from a server with a reasoning parser, a thought in the field, no answer, ``finish_reason: length``)
  has no answer: its answer is empty and ``cut_off`` is set, so nothing is ever parsed from the thought.
- A reply without any tag and without a field is returned unchanged.

The default tags match in any case (``<THINK>``); other thinking tags (``KNOWN_THINK_TAGS``) are split on only when
named, and ``unsplit_tag`` tells a run that an answer begins with one it was not told of.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ThinkTags = tuple[tuple[str, str], ...]
"""(opening, closing) tag pairs."""

DEFAULT_THINK_TAGS: ThinkTags = (("<think>", "</think>"),)
"""DeepSeek-R1, Qwen3, QwQ, Phi-4-reasoning and most open reasoning models write these; matched in any case
(``<Think>``, ``<THINK>``), unlike tags given with ``--think-tags``, which are matched as given."""

KNOWN_THINK_TAGS: dict[str, tuple[str, str]] = {
    "<think>": ("<think>", "</think>"),
    "<thinking>": ("<thinking>", "</thinking>"),
    "<seed:think>": ("<seed:think>", "</seed:think>"),
    "[THINK]": ("[THINK]", "[/THINK]"),
    "<|channel|>analysis": ("<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>final<|message|>"),
}
"""Thinking tags models are known to write (open models, prompts in Claude's style, ByteDance's Seed-OSS, Mistral's
Magistral, gpt-oss's analysis channel), by how a reply that thinks begins, with the pair ``--think-tags`` takes for
them. Only ``<think>`` is a default: the others could begin an answer's own text, so a reply that begins with one
is never split unasked (``unsplit_tag`` says so)."""


@dataclass(frozen=True)
class Split:
    """A reply taken apart: the answer parsers read, the thought, and whether the reply ended inside it."""

    answer: str
    reasoning: str | None
    """The thought's text (inline thoughts and the reply's reasoning field, joined by a blank line); None when the
    reply had none."""
    cut_off: bool = False
    """The reply ended inside the thought: it has no answer (``answer`` is empty)."""


@lru_cache(maxsize=32)
def _pattern(tags: ThinkTags) -> tuple[re.Pattern[str], frozenset[str]]:
    """A pattern matching every tag of ``tags`` (longest first), and the set of opening tags; the default tags in
    any case (the set then lower-cased: ``_opening`` looks a match up)."""
    fold = tags == DEFAULT_THINK_TAGS
    opening = frozenset(o.lower() if fold else o for o, _ in tags)
    every = sorted({t for pair in tags for t in pair}, key=len, reverse=True)
    return re.compile("|".join(re.escape(t) for t in every), re.IGNORECASE if fold else 0), opening


def _opening(match: re.Match[str], opening: frozenset[str]) -> bool:
    """Whether a tag ``_pattern`` matched opens a thought."""
    tag = match.group()
    return (tag.lower() if match.re.flags & re.IGNORECASE else tag) in opening


def check_tags(tags: Sequence[Sequence[str]]) -> ThinkTags:
    """``tags`` as ``ThinkTags``; a pair that is not two different non-blank strings is a ``ValueError``."""
    pairs = []
    for pair in tags:
        if len(pair) != 2 or not all(isinstance(t, str) and t.strip() for t in pair) or pair[0] == pair[1]:
            raise ValueError(f"a think-tag pair is two different non-blank tags, OPEN,CLOSE (got {list(pair)!r})")
        pairs.append((pair[0], pair[1]))
    if not pairs:
        raise ValueError("at least one think-tag pair")
    return tuple(pairs)


def split_reasoning(
    text: str,
    *,
    tags: ThinkTags | None = None,
    opened: bool = False,
    field: str | None = None,
    finish_reason: str | None = None,
) -> Split:
    """``text`` (the reply's content) as answer and thought; ``field`` is a thought the server sent apart."""
    pattern, opening = _pattern(tags or DEFAULT_THINK_TAGS)
    pieces: list[tuple[bool, str]] = []  # (inside a thought, text), in reply order
    depth = 1 if opened else 0
    position = 0
    tagged = opened
    for match in pattern.finditer(text):
        tagged = True
        pieces.append((depth > 0, text[position:match.start()]))
        position = match.end()
        if _opening(match, opening):
            depth += 1
        elif depth > 0:
            depth -= 1
        else:  # a closing tag outside any thought: the reply began inside one, so all before it was thought
            pieces = [(True, piece) for _, piece in pieces]
    pieces.append((depth > 0, text[position:]))
    field = field if field and field.strip() else None
    if not tagged:
        if field is None:
            return Split(text, None)
        return Split(text, field.strip(), cut_off=not text.strip() and finish_reason == "length")
    thoughts = [field.strip()] if field is not None else []
    inline = "".join(piece for inside, piece in pieces if inside).strip()
    if inline:
        thoughts.append(inline)
    cut_off = depth > 0
    answer = "" if cut_off else "".join(piece for inside, piece in pieces if not inside).strip()
    if field is not None and not answer and finish_reason == "length":
        cut_off = True
    return Split(answer, "\n\n".join(thoughts) or None, cut_off)


def opens_thought(prompt: str, tags: ThinkTags | None = None) -> bool:
    """Whether a rendered prompt ends inside a thought (the chat template wrote an opening tag as the start of
    the reply, and no closing tag after it): the reply then begins inside the thought."""
    pattern, opening = _pattern(tags or DEFAULT_THINK_TAGS)
    last = None
    for match in pattern.finditer(prompt):
        last = match
    return last is not None and _opening(last, opening) and not prompt[last.end():].strip()


def unsplit_tag(answer: str, tags: ThinkTags | None = None) -> tuple[str, str] | None:
    """The ``--think-tags`` pair of a known thinking tag (``KNOWN_THINK_TAGS``) that ``answer`` begins with though
    ``tags`` do not name it, so the split left a thought in the answer; None when it begins with none."""
    head = answer[:1000].lstrip()[:40].lower()
    if not head:
        return None
    named = {o.lower() for o, _ in tags or DEFAULT_THINK_TAGS}
    return next((pair for start, pair in KNOWN_THINK_TAGS.items()
                 if head.startswith(start.lower()) and pair[0].lower() not in named), None)
