"""The official answer parser: find a standalone option letter A, B or C in the model's reply.

Semantics of ``extract_abc_letters`` / ``find_option_forward`` / ``find_option_backward`` in the official
``cal_option.py``: split the reply on whitespace; drop every character of a word that is not an ASCII
letter; a word that leaves exactly one letter, an upper-case A, B or C, is a candidate ("A)", "(B)",
"**C**", "A:" all count; "Answer", "a", "AB" do not). Direct answers take the first candidate; CoT and
self-refine answers, which end with the choice, take the last. No candidate means no answer, which the
metrics count as wrong (its own class, ``NONE``, as in the official scoring).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from structbench.backends.base import Choice
from structbench.strategies import vote

Direction = Literal["first", "last"]

_WORD = re.compile(r"\S+")
LETTERS = ("A", "B", "C")


@dataclass(frozen=True)
class OptionMention:
    """A candidate option letter and its character offset in the reply."""

    letter: str
    offset: int


def _ascii_letter(ch: str) -> bool:
    return ("A" <= ch <= "Z") or ("a" <= ch <= "z")


def option_mentions(text: str) -> list[OptionMention]:
    """Every standalone A/B/C in ``text``, in order."""
    found = []
    for word in _WORD.finditer(text):
        letters = [(i, ch) for i, ch in enumerate(word.group()) if _ascii_letter(ch)]
        if len(letters) == 1 and letters[0][1] in LETTERS:
            found.append(OptionMention(letters[0][1], word.start() + letters[0][0]))
    return found


def find_option(text: str, direction: Direction) -> OptionMention | None:
    """The first (direct answers) or last (CoT, self-refine) candidate, or None."""
    mentions = option_mentions(text)
    if not mentions:
        return None
    return mentions[0] if direction == "first" else mentions[-1]


def majority(votes: Sequence[str | None]) -> tuple[str | None, float]:
    """The most frequent non-None vote (ties go to the earliest) and its share of all votes."""
    winner = vote.majority(votes)
    return winner, (votes.count(winner) / len(votes) if winner is not None else 0.0)


def raw_majority(texts: Sequence[str]) -> str:
    """Bug-compatible vote: the most frequent raw string (official ``max(out, key=out.count)``)."""
    return max(texts, key=list(texts).count) if texts else ""


def option_confidence(choice: Choice, direction: Direction) -> float | None:
    """Probability of the token that carries the chosen option letter, when logprobs came back.

    The paper uses the first generated token's probability "corresponding to the predicted label"; for a
    direct answer that is the letter's token. The token is found by its character span when the tokens
    spell out the reply, else as the first (last) token that is the letter itself.
    """
    mention = find_option(choice.text, direction)
    if mention is None or not choice.logprobs:
        return None
    tokens = choice.logprobs
    if "".join(t.token for t in tokens) == choice.text:
        position = 0
        for token in tokens:
            end = position + len(token.token)
            if position <= mention.offset < end:
                return math.exp(token.logprob)
            position = end
    ordered = tokens if direction == "first" else tuple(reversed(tokens))
    for token in ordered:
        if "".join(ch for ch in token.token if _ascii_letter(ch)) == mention.letter:
            return math.exp(token.logprob)
    return None
