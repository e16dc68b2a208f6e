"""The replies a perfect model gives, in each instruction type's format: a final answer line (after reasoning for
the chains of thought), a program that prints it (program of thought), and for a chart a program that draws the
reference values as the chart type's test reads them back (on a new figure, so that it passes the released
double run too; loops rather than comprehensions, which the released ``exec`` cannot see the program's names in).
"""

from __future__ import annotations

from typing import Any

from structbench.benchmarks.tablebench.program import chart_references
from structbench.benchmarks.tablebench.taxonomy import InstructionType

HEAD = "import pandas as pd \nimport matplotlib.pyplot as plt\ndf = pd.read_csv('table.csv')\n"

DRAW: dict[str, str] = {
    "bar": "for series in y_references:\n    plt.bar(range(len(series)), series)\n",
    "waterfall": "for series in y_references:\n    plt.bar(range(len(series)), series)\n",
    "hbar": "for series in y_references:\n    plt.barh(range(len(series)), series)\n",
    "line": "for series in y_references:\n    plt.plot(range(len(series)), series)\n",
    "area": "for series in y_references:\n    plt.fill_between(range(len(series)), series)\n",
    "scatter": "for series in y_references:\n    plt.scatter(range(len(series)), series)\n",
    "pie": "values = []\nfor series in y_references:\n    values.extend(series)\nplt.pie(values)\n",
    "radar": (
        "import math\naxes = plt.subplot(polar=True)\nfor series in y_references:\n    angles = []\n"
        "    for i in range(len(series)):\n        angles.append(2 * math.pi * i / len(series))\n"
        "    axes.plot(angles + angles[:1], list(series) + list(series[:1]))\n"
    ),
}


def _nested(references: list[Any]) -> list[list[Any]]:
    return [r if isinstance(r, list) else [r] for r in references]


def chart_program(answer: str, chart_type: str | None) -> str:
    """A program drawing the chart question's reference values."""
    references = _nested(chart_references(answer))
    draw = DRAW.get(chart_type or "", DRAW["bar"])
    return f"{HEAD}y_references = {references!r}\nplt.figure()\n{draw}plt.show()"


def reply(itype: InstructionType, answer: str, *, chart: bool, chart_type: str | None) -> str:
    """The oracle's reply to an instruction of type ``itype`` whose reference is ``answer``."""
    if chart:
        return f"```python\n{chart_program(answer, chart_type)}\n```"
    if itype == "PoT":
        code = (f"import pandas as pd \ndf = pd.read_csv('table.csv')\nanswer = {answer!r}\n"
                "print(f'Final Answer: {answer}')")
        return f"The oracle knows the answer and prints it.\n```python\n{code}\n```"
    if itype == "TCoT":
        return f"The oracle reads the answer from the reference.\nFinal Answer: {answer}"
    if itype == "SCoT":
        return ("Thought: The oracle knows the reference answer.\nAction: df = pd.read_csv('table.csv')\n"
                "Result: The table is loaded.\nConcluding Thought: The reference answers the question.\n"
                f"Final Answer: {answer}")
    return f"Final Answer: {answer}"
