"""Reading the final answer and the program out of a reply."""

from __future__ import annotations

import pytest

from structbench.benchmarks.tablebench.parse import final_answer, python_block

REASONED = ("Thought: the format is 'Final Answer: AnswerName1, AnswerName2...'.\nAction: df['points'].max()\n"
            "Result: 44\nFinal Answer: Ivyby City")


@pytest.mark.parametrize(
    ("reply", "first", "last"),
    [
        ("Final Answer: 1062", "1062", "1062"),
        (REASONED, "AnswerName1, AnswerName2...'.", "Ivyby City"),
        ("**Final Answer:** 12.5", "", "12.5"),  # the released pattern wants "Final Answer: " with its space
        ("The answer is 12.", "", ""),
        ("Final Answer: a\nFinal Answer: b", "a", "b"),
    ],
)
def test_final_answer(reply: str, first: str, last: str) -> None:
    assert final_answer(reply, first=True) == first
    assert final_answer(reply) == last


def test_python_block_is_the_last_fenced_python() -> None:
    reply = "```python\nx = 1\n```\ntext\n```python\nprint(2)\n```\n```\nnot python\n```"
    assert python_block(reply) == "print(2)\n"
    assert python_block("```py\nprint(1)\n```") == ""  # the released parser wants ```python and a newline
