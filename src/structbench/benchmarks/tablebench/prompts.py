"""How a question becomes a prompt: the release's own instruction, sent as the one user message.

Every line of ``TableBench_<type>.jsonl`` carries the whole prompt (``instruction``): a role, the answer format
for its question's subtype, the instruction type's way of thinking, the table as a Python dict and the question.
The released inference script sends it as the only user turn, greedy; so does structbench. ``instruction``
writes such prompts for ``structbench generate tablebench``: the DP answer formats are those of the repository's
example file, the other types' roles and reasoning lines those of the published TableInstruct instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from structbench.backends.base import Request
from structbench.benchmarks.tablebench.taxonomy import VISUALIZATION, InstructionType
from structbench.core.errors import DataError
from structbench.data.evidence import Evidence, Table
from structbench.data.serialize import serialize

PAPER_FORMAT = "paper"
"""The ``serialization`` that keeps the release's instruction as it is."""
TABLE_BLOCK = re.compile(r"(Read the table below in JSON format:\n)?\[TABLE\] \n.*?\n\nLet's get start!", re.S)
"""The table in a release's instruction (with the sentence that introduces it), up to the line after it."""
MAX_TOKENS = 4096
"""New tokens per reply (the release's inference script allows 8,000; ``--max-tokens 8000`` restores that)."""

ROLE = "You are a table analyst. Your task is to answer questions based on the table content."
ROLES: dict[InstructionType, str] = {
    "DP": ROLE,
    "TCoT": ROLE,
    "SCoT": (
        "You are a table analyst. Your task is to utilize the Python package 'pandas' to analyze the table and then "
        "answer questions.\n\n[Guidelines]\nYou should act in following patterns step by step to analyze the table "
        "and then give the final answer:\n[Action Patterns]\nThought: You should always think about what to do to "
        "interact with Python code base on Result\nAction: the action can **ONLY** be single line python code\n"
        "Result: Simulate the result of the execution of the python code in Action, analyse that result and decide "
        "whether to continue or not \n(This thought/Action/Result can repeat N times)"
    ),
    "PoT": (
        "You are a data analyst proficient in Python. Your task is to write executable Python code to analyze the "
        "table and then answer questions.\n\n[Guidelines]\nYou should act following requirements below:\n1. based "
        "on the question, write out your analytical approach, and then write Python code according to this "
        "approach.\n2. The code needs to be concise and easy to understand, and if necessary, add comments for "
        "clarification.\n3. Code blocks need to strictly start with ```python and end with ```\n4. Your analysis "
        "must be based entirely on the above data. If the user's question is not related to data analysis, please "
        "politely refuse.\n5. You need to generate executable code. If there are results to be presented, please "
        "use the print function; if there are charts, please use the matplotlib library to draw them.\n6. Ensure "
        "to load the table with command ```df = pd.read_csv('table.csv')```"
    ),
}
THINKING: dict[InstructionType, str] = {
    "DP": "Give the final answer to the question directly without any explanation.",
    "TCoT": "Let's think step by step and then give the final answer to the question.",
    "SCoT": "Let's think step by step and then give the final answer to the question. \nEnsure to have a "
            "concluding thought that verifies the table, observations and the question before giving the final "
            "answer. ",
    "PoT": "Let's think step by step and then generate python code to analyze table and present the final answer "
           "to the question.",
}

_LIST_FORMAT = (
    "The answer should follow the format below:\n[Answer Format]\nFinal Answer: AnswerName1, AnswerName2...\n\n"
    "{examples}"
    "Ensure the final answer format is the last output line and can only be in the \"Final Answer: AnswerName1, "
    "AnswerName2...\" form, no other form. Ensure the \"AnswerName\" is {what}, as short as possible, without any "
    "explanation.{space}"
)
_TEXT_FORMAT = (
    "The answer should follow the format below as in examples:\n[Answer Format]\nFinal Answer: Answer.\n\n"
    "[Answer Examples]\n{examples}\n\nEnsure the final answer format is the last output line and the answer should "
    "{rule}"
)
ANSWER_FORMATS: dict[str, str] = {
    "default": _LIST_FORMAT.format(examples="", what="a number or entity name", space=""),
    "ImpactAnalysis": _LIST_FORMAT.format(
        examples="", what="a entity name or a impact description(No clear impact, Negtive impact or Positive impact)",
        space=" "),
    "TrendForecasting": _LIST_FORMAT.format(
        examples="[Answer Example]\nFinal Answer: 1, 2, 3\nFinal Answer: Increasing trend\nFinal Answer: Increasing "
                 "trend, 13.5\n\n",
        what="a number, entity name or a trend description(No clear trend, Increasing trend or Decreasing trend)",
        space=" "),
    "CorrelationAnalysis": (
        "The answer should follow the format below as in examples:\n[Answer Format]\nFinal Answer: "
        "CorrelationRelation, CorrelationCoefficient.\n\n[Answer Examples]\nFinal Answer: No correlation, 0.22\n"
        "Final Answer: Strong positive correlation, 0.82\n\nEnsure the final answer format is the last output line "
        "and can only be in the \"Final Answer: CorrelationRelation, CorrelationCoefficient.\" form, no other form.\n"
        "Ensure that: the correlation coefficient should be a float number with two decimal places; the correlation "
        "relation can only be \"No correlation\" with the correlation coefficient between -0.3 to +0.3, \"Weak "
        "positive correlation\" with the correlation coefficient between +0.3 to +0.7, \"Weak negative correlation\" "
        "with the correlation coefficient between -0.3 to -0.7, \"Strong positive correlation\" with the correlation "
        "coefficient between +0.7 to +1, or \"Strong negative correlation\" with the correlation coefficient between "
        "-0.7 to -1."
    ),
    "CausalAnalysis": _TEXT_FORMAT.format(
        examples="Final Answer: Yes, Higher interest positively influences deposit balances change (correlation "
                 "coefficient of 0.89).\nFinal Answer: No, Analysis reveals a negligible inverse correlation (0.21), "
                 "suggesting the gdp does not causally influence the population.",
        rule="give the conclusion then provide a brief explanation of the causal analysis results as concise as "
             "possible."),
    "DescriptiveAnalysis": _TEXT_FORMAT.format(
        examples="Final Answer: The table presents the results of 6 teams over 4 seasons, measured in wins and "
                 "points. The data indicates that the team with the most wins also scored the most points.",
        rule="give a brief description of the table and provide descriptive explanations for the main columns and "
             "offer some basic insights about the table."),
    "AnomalyDetection": _TEXT_FORMAT.format(
        examples="Final Answer: The three anomalies are row 5 with Tom having an unusually high score 101 in the Math "
                 "column, row 7 with an unusually low score 3 in the English column, and row 9 with an unusually high "
                 "score 200 in the Science column.\nFinal Answer: No anomalies are detected in the table.",
        rule="point out the abnormal data with total number then explain why for each anomaly as short as possible. "
             "If no anomaly is detected, the answer should be \"No anomalies are detected in the table.\""),
    VISUALIZATION: (
        "The answer should follow the format below and ensure the first three code lines is exactly the same with "
        "the following code block:\n[Answer Format]\n```python\nimport pandas as pd \nimport matplotlib.pyplot as "
        "plt\ndf = pd.read_csv('table.csv')\n...\nplt.show()\n```\n\nEnsure the final answer format is the python "
        "code block that can generate the chart correctly. Ensure the last line in python code can only be "
        "\"plt.show()\", no other from."
    ),
    "PoT": (
        "The generated Python code should follow the format below, and ensure the first two code lines is exactly the "
        "same with the following code block:\n[Python Code Format]\n```python\nimport pandas as pd \ndf = "
        "pd.read_csv('table.csv')\n...\nprint(f'Final Answer: {{answer}}')\n```\n\nEnsure the final answer is the "
        "last line in python code and can only be in the \"print(f'Final Answer: {{answer}}')\" form, no other from. "
        "Ensure variable \"answer\" can only be \"AnswerName1, AnswerName2...\" form, no other form, and "
        "\"AnswerName\" can only be a number or entity name, as short as possible, without any explanation."
    ),
}
"""Answer formats by question subtype (``default`` for the rest; charts by ``Visualization``; ``PoT`` for program
of thought's answers that are no chart)."""


def answer_format(itype: InstructionType, qtype: str, qsubtype: str) -> str:
    if qtype == VISUALIZATION:
        return ANSWER_FORMATS[VISUALIZATION]
    if itype == "PoT":
        return ANSWER_FORMATS["PoT"]
    return ANSWER_FORMATS.get(qsubtype, ANSWER_FORMATS["default"])


def table_text(table: dict[str, Any]) -> str:
    """The table as the instructions show it: the Python ``repr`` of ``{'columns': [...], 'data': [...]}``."""
    return repr({"columns": table["columns"], "data": table["data"]})


def instruction(itype: InstructionType, qtype: str, qsubtype: str, table: dict[str, Any], question: str) -> str:
    """An instruction in the release's layout (``structbench generate tablebench``)."""
    return (f"{ROLES[itype]}\n\n\n{answer_format(itype, qtype, qsubtype)}\n\n\n{THINKING[itype]}\n\n"
            f"Read the table below in JSON format:\n[TABLE] \n{table_text(table)}\n\nLet's get start!\n"
            f"Question: {question}\n")


def render_table(evidence: Sequence[Evidence], fmt: str, release: dict[str, Any]) -> str:
    """The sample's table as ``fmt`` renders it; ``paper``: as the release writes its table (a perturbed one), each
    cell with the value the release's table gives its text (a number stays a number)."""
    if fmt != PAPER_FORMAT:
        return serialize(evidence, fmt)
    (table,) = evidence
    assert isinstance(table, Table)
    values: dict[str, Any] = {}
    for value in [*release["columns"], *(v for row in release["data"] for v in row)]:
        values.setdefault("" if value is None else str(value), value)
    return table_text({"columns": [values.get(c, c) for c in table.header],
                       "data": [[values.get(c, c) for c in row] for row in table.rows]})


def with_table(text: str, table: str, fmt: str, sample_id: str) -> str:
    """The instruction with ``table`` in place of its own; "Read the table below in JSON format:" loses "in JSON
    format" where another serializer renders it (the rest of the release's wording stays)."""
    found = TABLE_BLOCK.search(text)
    if found is None:
        raise DataError(f"tablebench: the instruction of {sample_id} has no '[TABLE] ' block followed by "
                        "\"Let's get start!\": it cannot show the table another way")
    lead = found.group(1) or ""
    if fmt != PAPER_FORMAT:
        lead = lead.replace(" in JSON format:", ":")
    return f"{text[:found.start()]}{lead}[TABLE] \n{table}\n\nLet's get start!{text[found.end():]}"


def request(text: str, max_tokens: int = MAX_TOKENS) -> Request:
    """The instruction as the only user message, greedy, as the released inference script sends it."""
    return Request.chat(text, max_tokens=max_tokens, temperature=0.0)
