"""How a DataBench question becomes a prompt.

- ``pot``: the SemEval-2025 Task 8 baseline's prompt, verbatim (``databench_eval.utils.example_generator``,
  PyPI ``databench-eval`` 4.0.1): one worked example, then the question as a Python function to complete in one
  line, with the answer type as its return annotation and the table's column names.
- ``direct`` and ``cot`` (structbench's; DataBench publishes no prompt that shows the table): the table, the
  question, what kind of value the answer is, and the answer alone on a last line ``Answer: <value>``; ``cot``
  asks for step-by-step reasoning before it.
"""

from __future__ import annotations

from collections.abc import Sequence

from structbench.data.evidence import Table
from structbench.data.serialize import serialize

ANSWER_KINDS: dict[str, str] = {
    "boolean": "True or False",
    "category": "a single value, written as it is in the table",
    "number": "a single number",
    "list[category]": "a list of values written as they are in the table, like ['a', 'b']",
    "list[number]": "a list of numbers, like [1, 2.5]",
}
"""Answer type -> how the prompts that show the table describe the answer expected."""

ANSWER_LINE = "Answer:"

DIRECT = """You are given a table (the dataset {dataset}) and a question about it.

{table}

Question: {question}
The answer is {kind}. Reply with the answer alone, on a last line written as "{marker} <answer>"."""

COT = """You are given a table (the dataset {dataset}) and a question about it.

{table}

Question: {question}
The answer is {kind}. Think step by step, then give the answer alone, on a last line written as "{marker} <answer>"."""

TEMPLATES = {"direct": DIRECT, "cot": COT}

POT = "\n".join([
    "",
    "# TODO: complete the following function in one line. It should give the answer to: How many rows are there "
    "in this dataframe? ",
    "def example(df: pd.DataFrame) -> int:",
    '    df.columns=["A"]',
    "    return df.shape[0]",
    "",
    "# TODO: complete the following function in one line. It should give the answer to: {question}",
    "def answer(df: pd.DataFrame) -> {type}:",
    "    df.columns = {columns}",
    "    return",
])
"""``databench_eval.utils.example_generator``'s prompt (``{type}`` is the row's ``type`` as the file has it,
``{columns}`` Python's ``list(df.columns)``)."""


def show_table(style: str, dataset: str, table: Table, question: str, semantic: str, serialization: str) -> str:
    """The ``direct`` or ``cot`` prompt for ``question`` over ``table`` in ``serialization``."""
    return TEMPLATES[style].format(dataset=dataset, table=serialize([table], serialization), question=question,
                                   kind=ANSWER_KINDS[semantic], marker=ANSWER_LINE)


def program(question: str, type_: str, columns: Sequence[str]) -> str:
    """The ``pot`` prompt: the official baseline's."""
    return POT.format(question=question, type=type_, columns=list(columns))
