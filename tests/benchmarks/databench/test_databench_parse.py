"""Reading the answer out of a reply to a prompt that shows the table."""

from __future__ import annotations

import pytest

from structbench.benchmarks.databench.parse import parse_answer


@pytest.mark.parametrize(("reply", "answer"), [
    ("Answer: True", "True"),
    ("The orchard with the most trees is in the North.\nAnswer: North", "North"),
    ("Answer: 3\nLet me check again: the table has more.\nANSWER: 4 ", "4"),  # the last marker counts
    ("Final answer:\n\n['a', 'b']\n", "['a', 'b']"),  # a marker alone on its line: the next line
    ("answer: [1, 2.5] (from rows 3 and 7)", "[1, 2.5] (from rows 3 and 7)"),
    ("42", "42"),  # no marker: the reply is the answer
    ("  ['a',\n 'b']  ", "['a',  'b']"),  # its line breaks read as spaces, as in a submission file
    ("Answer:", ""),
    ("", ""),
])
def test_the_answer_is_the_last_marked_line_or_the_whole_reply(reply: str, answer: str) -> None:
    assert parse_answer(reply) == answer
