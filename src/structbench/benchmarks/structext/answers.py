"""Reading the answer out of a reply: the text after its last "Answer:" heading.

The paper's prompts (Tables 7-10) ask for the answer under an "### Answer:" (or "Answer:") heading,
after optional reasoning; the official scorer compares the whole reply instead (``raw``).
"""

from __future__ import annotations

import re

ANSWER_HEADING = re.compile(r"^[ \t#*]*answer[ \t*]*:[ \t*]*", re.IGNORECASE | re.MULTILINE)
FENCE = re.compile(r"\A```[^\n]*\n(.*?)\n?```\Z", re.DOTALL)


def extract_answer(reply: str, *, raw: bool = False) -> str:
    """The answer text: after the last "Answer:" heading (whole reply if none), one code fence removed."""
    if raw:
        return reply
    marks = list(ANSWER_HEADING.finditer(reply))
    text = reply[marks[-1].end() :] if marks else reply
    text = text.strip()
    fenced = FENCE.match(text)
    return fenced.group(1).strip() if fenced else text
