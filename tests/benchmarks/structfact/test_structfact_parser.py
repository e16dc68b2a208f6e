"""The official A/B/C parser on a battery of realistic model outputs, votes, and option confidence."""

from __future__ import annotations

import math

import pytest

from structbench.backends.base import Choice, TokenLogprob
from structbench.benchmarks.structfact.parser import (
    find_option,
    majority,
    option_confidence,
    option_mentions,
    raw_majority,
)

# (model output, first option, last option); None = no option found (scored wrong).
BATTERY: list[tuple[str, str | None, str | None]] = [
    # direct answers, as instruction-tuned models give them
    ("A", "A", "A"),
    ("B", "B", "B"),
    ("C", "C", "C"),
    ("A)", "A", "A"),
    ("(B)", "B", "B"),
    ("B) No", "B", "B"),
    ("C. Not sure enough", "C", "C"),
    ("**A**", "A", "A"),
    ("'C'", "C", "C"),
    ('"B"', "B", "B"),
    ("[B]", "B", "B"),
    ("A.", "A", "A"),
    ("A: Yes", "A", "A"),
    ("Answer: A", "A", "A"),
    ("Answer: B) No", "B", "B"),
    ("The answer is B.", "B", "B"),
    ('The correct option is: "C"', "C", "C"),
    ("Option C", "C", "C"),
    ("**Answer: B**", "B", "B"),
    ("A\n\nExplanation: the table lists Colombia with 0 gold medals.", "A", "A"),
    (" \n  B\n", "B", "B"),
    ("→ C", "C", "C"),
    # words only: no option letter, so no answer
    ("Yes", None, None),
    ("No.", None, None),
    ("Not sure enough", None, None),
    ("", None, None),
    ("   \n ", None, None),
    ("The data does not say.", None, None),
    # letters that are not standalone options
    ("a", None, None),
    ("b) no", None, None),
    ("Answer:A", None, None),  # glued to a word: one word with many letters
    ("C)Not sure enough", None, None),
    ("A/B", None, None),
    ("U.S.A.", None, None),
    ("Ａ", None, None),  # full-width letter: not ASCII
    ("D) none of these", None, None),
    # quirks of the official semantics, kept on purpose
    ("I think the answer is C", "C", "C"),  # "I" is a single letter, but not A/B/C
    ("A good answer would be B", "A", "B"),  # the article "A" counts
    ("B-52 bombers were used: C", "B", "C"),  # punctuation is dropped inside a word
    ("2012 A", "A", "A"),
    # CoT replies: the final choice is the last letter
    (
        "Explanation: The table shows Colombia won 0 gold medals, 1 silver and 3 bronze. "
        "Therefore, Colombia did not win any gold medals.\nFinal answer: A",
        "A",
        "A",
    ),
    (
        "Option A would mean the claim holds, but the 2011 row shows +39.1%, which matches. "
        "Hmm, so A is right.\n\nA) Yes",
        "A",
        "A",
    ),
    ("Comparing options A and B: the record says 2,700, not 3,000. So the final answer is B) No.", "A", "B"),
    ("Let's think step by step.\n1. Row 4 lists ... \n2. So C is not possible.\nAnswer: (B)", "C", "B"),
    ("Explanation: insufficient data.\n\nSelected option: C.", "C", "C"),
    # self-refine replies
    (
        "Feedback: The previous answer (A) overlooked that the director was Bruce Burmester, not Johnny "
        "Gilbert. Refined answer: B",
        "A",
        "B",
    ),
    ("Feedback: The answer is accurate and relevant.\nFinal answer: A) Yes", "A", "A"),
    # a model that lists all options before answering
    ("A) Yes\nB) No\nC) Not sure enough\nMy answer: B", "A", "B"),
]


@pytest.mark.parametrize(("output", "first", "last"), BATTERY)
def test_parser_battery(output: str, first: str | None, last: str | None) -> None:
    got_first = find_option(output, "first")
    got_last = find_option(output, "last")
    assert (got_first.letter if got_first else None) == first
    assert (got_last.letter if got_last else None) == last


def test_mentions_point_at_the_letter() -> None:
    text = "So (B) then **C**."
    assert [(m.letter, text[m.offset]) for m in option_mentions(text)] == [("B", "B"), ("C", "C")]


def test_majority_vote_ignores_unparsed_and_breaks_ties_by_order() -> None:
    assert majority(["YES", None, "NO", "YES"]) == ("YES", 0.5)
    assert majority(["NO", "YES", "YES", "NO"]) == ("NO", 0.5)
    assert majority([None, None]) == (None, 0.0)
    assert majority([None, "NO", None]) == ("NO", pytest.approx(1 / 3))
    assert raw_majority(["A", "A.", "A.", "B"]) == "A."
    assert raw_majority([]) == ""


def _choice(tokens: list[tuple[str, float]]) -> Choice:
    return Choice(
        text="".join(t for t, _ in tokens),
        logprobs=tuple(TokenLogprob(token=t, logprob=math.log(p)) for t, p in tokens),
    )


def test_confidence_is_the_chosen_letters_token_probability() -> None:
    assert option_confidence(_choice([("B", 0.8)]), "first") == pytest.approx(0.8)
    assert option_confidence(_choice([("A", 0.7), (")", 0.99), (" Yes", 0.9)]), "first") == pytest.approx(0.7)
    cot = _choice(
        [("Option", 0.9), (" A", 0.3), (" fails", 0.5), (".", 0.9), (" Answer", 0.6), (":", 0.9), (" B", 0.4)]
    )
    assert option_confidence(cot, "last") == pytest.approx(0.4)
    assert option_confidence(cot, "first") == pytest.approx(0.3)
    assert option_confidence(_choice([("**", 0.5), ("C", 0.6), ("**", 0.9)]), "first") == pytest.approx(0.6)


def test_confidence_falls_back_to_token_search_and_is_none_without_logprobs() -> None:
    # tokens that do not spell the text (a backend that strips): the letter token is searched for
    odd = Choice(text="The answer: C", logprobs=(TokenLogprob("The", -0.1), TokenLogprob("C", math.log(0.25))))
    assert option_confidence(odd, "first") == pytest.approx(0.25)
    assert option_confidence(Choice(text="A"), "first") is None
    assert option_confidence(_choice([("Yes", 0.9)]), "first") is None
