"""Read the model's final ``{"answer": ...}`` JSON (the prompts ask for it on the last line).

The last ``{"answer": ...}`` object in the reply wins (models often reason first); a slightly broken
object is repaired with ``json-repair``. QA answers become a list of strings; a rejection answer is
``"yes"`` or ``"no"``. Anything else parses to None (scored as wrong / not rejected).
"""

from __future__ import annotations

import re
from typing import Any

from structbench.core import untrusted

_ANSWER_OBJECT = re.compile(r"""\{\s*["']answer["']\s*:\s*""")
_VALUE_START = re.compile(r"""[\["'\d.+-]|true|false|null""")


def _last_answer_value(text: str) -> tuple[bool, Any]:
    """(found, value) of the last ``{"answer": ...}`` object in ``text``."""
    for match in reversed(list(_ANSWER_OBJECT.finditer(text))):
        tail = text[match.start() :]
        try:
            obj, _ = untrusted.raw_decode(tail)
        except untrusted.TooDeep:  # nested deeper than an answer (its text would recurse): no answer
            continue
        except ValueError:
            if not _VALUE_START.match(text, match.end()):
                continue  # e.g. the prompt's own placeholder {"answer": <YOUR ANSWER LIST>} echoed back
            line = tail.split("\n", 1)[0]
            try:
                obj = untrusted.repaired(line.replace("'", '"') if '"' not in line else line)
            except ValueError:
                continue
        if isinstance(obj, dict) and "answer" in obj:
            return True, obj["answer"]
    return False, None


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_answer_list(text: str) -> list[str] | None:
    """The answer list from a QA reply; a single value becomes a one-item list."""
    found, value = _last_answer_value(text)
    if not found or value is None:
        return None
    items = value if isinstance(value, list) else [value]
    flat: list[str] = []
    for item in items:
        if isinstance(item, list):
            flat.extend(_as_text(x) for x in item if x is not None)
        elif item is not None and not isinstance(item, dict):
            flat.append(_as_text(item))
    return flat


def parse_rejection(text: str) -> str | None:
    """``"yes"`` (answerable) or ``"no"`` (rejected) from a negative rejection reply."""
    found, value = _last_answer_value(text)
    if not found:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, str):
        word = value.strip().strip(".").lower()
        if word in ("yes", "no"):
            return word
    return None
