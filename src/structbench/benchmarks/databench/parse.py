"""Reading a DataBench answer out of a model's reply to a prompt that shows the table.

The prompts ask for the answer alone on a last line ``Answer: <value>``. The answer is what follows the last
``Answer:`` marker, up to the end of its line (a marker alone on its line: the next non-empty line). A reply with
no marker is an answer in full, its line breaks read as spaces, as the official runner writes each response on one
line of its submission file; the official check (``answers``) then reads it. Nothing else is changed, so a reply
the official scorer would be given scores as it would score it.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"\banswer\s*:", re.IGNORECASE)


def parse_answer(reply: str) -> str:
    """The answer ``reply`` gives (see the module docstring); ``""`` when it gives none."""
    markers = list(MARKER.finditer(reply))
    if not markers:
        return reply.replace("\n", " ").strip()
    rest = reply[markers[-1].end():]
    lines = [line.strip() for line in rest.split("\n")]
    first = lines[0] or next((line for line in lines[1:] if line), "")
    return first
