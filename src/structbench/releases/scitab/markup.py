"""SciGen's typographic cell markers (``[BOLD] ``, ``[ITALIC] ``, ``[EMPTY]``) and how tables show them.

The release keeps the source paper's emphasis as text markers inside cells (5,418 cells carry
``[BOLD]``, mostly as a prefix; 1,503 ``[ITALIC]``; 1,350 cells are ``[EMPTY]``). The paper's own
prompts (Appendix H) show those tables without markers (e.g. "74.4 (±0.9)" for the data's
"[BOLD] 74.4 (± 0.9)", "Model" for "[BOLD] Model"), so ``strip`` is the default: every marker is
removed wherever it occurs in a header, cell or caption, with the space around it collapsed to one,
and ``[EMPTY]`` becomes an empty cell. ``keep`` leaves the release's text untouched. Claims are never
changed (the paper's prompts keep their ``[CONTINUE]`` markers).
"""

from __future__ import annotations

import re
from typing import Literal

Markup = Literal["strip", "keep"]

_MARKER = re.compile(r"\s*\[(?:BOLD|ITALIC)\]\s*")
EMPTY = "[EMPTY]"


def clean(text: str, markup: Markup = "strip") -> str:
    """``text`` (a header, cell or caption) with markers treated as ``markup`` says."""
    if markup == "keep":
        return text
    if text.strip() == EMPTY:
        return ""
    return _MARKER.sub(" ", text).strip()
