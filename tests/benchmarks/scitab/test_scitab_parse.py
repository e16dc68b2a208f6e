"""The label parser on a battery of realistic replies."""

from __future__ import annotations

import pytest

from structbench.benchmarks.scitab.parse import parse_label

S, R, N = "supports", "refutes", "not enough info"

ZERO_SHOT = [
    ("A", S),
    ("B", R),
    ("C", N),
    ("A)", S),
    ("B.", R),
    ("(C)", N),
    ("C) it is impossible to tell.", N),
    ("A) the claim is true.", S),
    ("B) the claim is false.\n\nThe table shows 0.92 for BoC, which is lower than 0.93.", R),
    ("The answer is B.", R),
    ("Answer: C", N),
    ("The correct option is (B) the claim is false.", R),
    ("Option A: the claim is true.", S),
    ("A) the claim is true. B) the claim is false. C) it is impossible to tell.\nAnswer: B", R),
    ("A) the claim is true.\nB) the claim is false.\nC) it is impossible to tell.\n\nC", N),
    ("Based on the information in the table, the claim is true.", S),
    ("The claim is false because the BLEU score drops from 24.1 to 23.8.", R),
    ("It is impossible to tell from the table whether the improvement is significant.", N),
    ("The table does not provide enough information to verify the claim.", N),
    ("There is not enough information in the table.", N),
    ("The claim cannot be verified with the given table.", N),
    ("We can't determine this from the table.", N),
    ("The claim is not supported by the table: model X scores lower.", R),
    ("The table doesn't support the claim.", R),
    ("The claim isn't true; the gap is 2.1 points, not 3.", R),
    ("The claim is partially correct, but the second half is wrong.", R),
    ("The table supports the claim.", S),
    ("Supported.", S),
    ("Refuted", R),
    ("NOT ENOUGH INFO", N),
    ("supports", S),
    ("Yes, the claim is consistent with the table.", S),
    ("No. The numbers show the opposite.", R),
    ("No idea.", None),
    ("Is the above claim true or false? The claim is false.", R),
    ("A claim like this needs the table; here it is clearly true.", S),
    ("", None),
    ("I am not sure what the table shows.", None),
    ("The table lists BLEU scores for five systems.", None),
]


@pytest.mark.parametrize(("reply", "label"), ZERO_SHOT)
def test_zero_shot_replies(reply: str, label: str | None) -> None:
    assert parse_label(reply, pick="first", options=True) == label


def test_letters_count_only_where_options_were_shown() -> None:
    assert parse_label("B", options=True) == R
    assert parse_label("B", options=False) is None
    assert parse_label("The claim is true.", options=False) == S


IN_CONTEXT = [
    ("The claim is true.", S),
    ("The claim is false.", R),
    ("It is impossible to tell.", N),
    ("The claim is true.\n------\nCaption: Table 2: ...", S),
    ("The claim is false. The claim is true for COPA only.", R),
    ("True", S),
    ("false", R),
    (" The claim is not true.", R),
    ("The claim is not necessarily true; the table has no significance test.", N),
    ("Unknown.", N),
]


@pytest.mark.parametrize(("reply", "label"), IN_CONTEXT)
def test_in_context_replies(reply: str, label: str | None) -> None:
    assert parse_label(reply, pick="first") == label


COT = [
    (
        "To verify this claim, we need to check whether GCN is better than LSTM.\n"
        "GCN scores 24.3 (table[2,1]) and LSTM 23.1 (table[1,1]).\n"
        "Therefore, the Claim is true.\nAnswer:\nTherefore, the claim is true.",
        S,
    ),
    (
        "We need to check if the claim is true. The difference is 88.64 - 86.69 = 1.95, "
        "not 2.5 as stated.\nAnswer:\nTherefore, the claim is false.",
        R,
    ),
    (
        "The claim could be true or false depending on the test set; the table only reports dev scores.\n"
        "Answer:\nTherefore, it is impossible to tell.",
        N,
    ),
    (
        "At first the claim seems true, since 0.93 > 0.92. But the claim says all models, "
        "and ANN scores 0.91 for both. So the claim is false.",
        R,
    ),
    ("Step 1: 45.2 > 44.0, true. Step 2: 30.1 > 31.0, false. Final answer: false", R),
    ("... so the statement holds.\nFinal Answer: True", S),
    ("The reasoning shows the claim is false.\nAnswer: The claim is true.", S),
    ("Reasoning: the table has no information about training time, so we cannot tell.", N),
    ("The answer is not obvious. BLEU goes up. The answer is: true", S),
]


@pytest.mark.parametrize(("reply", "label"), COT)
def test_chain_of_thought_replies(reply: str, label: str | None) -> None:
    assert parse_label(reply, pick="last") == label


def test_first_and_last_differ_only_without_an_answer_marker() -> None:
    reply = "The claim looks true at first, but the numbers make it false."
    assert parse_label(reply, pick="first") == S
    assert parse_label(reply, pick="last") == R
    marked = "It looks true at first.\nAnswer: false. True only for COPA."
    assert parse_label(marked, pick="first") == parse_label(marked, pick="last") == R


def test_unsupported_and_nei_abbreviation() -> None:
    from structbench.benchmarks.scitab.parse import parse_label

    assert parse_label("The claim is unsupported by the data.", pick="first", options=False) == "refutes"
    assert parse_label("unsupported", pick="first", options=False) == "refutes"
    assert parse_label("NEI", pick="first", options=False) == "not enough info"
