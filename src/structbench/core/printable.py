"""Text from a run (a name, a task, a model's error message) made safe to print on a terminal.

A task named ``\\x1b]8;;http://evil/\\x1b\\\\link`` or ``\\x1b]0;title\\x07`` printed by ``structbench report`` made a
hidden link or retitled the terminal: escape sequences start with control characters. Every line the command line
prints goes through ``printable`` (``cli.common.echo``, ``print_markdown``, ``print_results``).
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but newline and tab (ESC, BEL, CR, backspace ...), DEL, and the C1 controls (CSI U+009B, OSC U+009D
...), which terminals read as the start of an escape sequence."""


def printable(text: str) -> str:
    """``text`` without control characters, newlines and tabs kept."""
    return CONTROL.sub("", text)
