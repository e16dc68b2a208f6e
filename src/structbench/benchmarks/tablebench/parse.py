"""Reading a reply: its final answer (``Final Answer: ...``) and its Python program (a fenced block).

The released parser (``parse_tablebench_instruction_response_script.py``) takes the rest of the line after the
*first* ``Final Answer: `` and the *last* block fenced as ```` ```python\\n ... ``` ````. The instructions ask for the
final answer on the reply's last line, and a reply that reasons first may name the format on the way (a symbolic
chain of thought restating "Final Answer: AnswerName1, ..."); structbench's parser reads the *last* such line, and
takes bold markers off it. ``first=True`` is the released behaviour.
"""

from __future__ import annotations

import re

_FINAL = re.compile(r"Final Answer: (.+)")
_FINAL_LOOSE = re.compile(r"Final Answer:[ \t]*(.+)")
_PYTHON = re.compile(r"```python\n(.*?)```", re.S)


def final_answer(text: str, *, first: bool = False) -> str:
    """The final answer of ``text`` ("" when it gives none): the released rule (``first``), or the last one."""
    if first:
        found = _FINAL.search(text)
        return found.group(1) if found else ""
    answers = _FINAL_LOOSE.findall(text)
    if not answers:
        return ""
    return answers[-1].strip().strip("*").strip()


def python_block(text: str) -> str:
    """The last ```` ```python ```` block of ``text``, as the released parser cuts it ("" when there is none)."""
    blocks = _PYTHON.findall(text)
    return blocks[-1] if blocks else ""
