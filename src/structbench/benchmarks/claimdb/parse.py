"""The verdict of ClaimDB's final reply.

The paper's agents return a ``ClaimVerdict`` object (structured output); its code scores ``verdict == label``, a run
that failed (no object, the turn limit, an error) having the verdict ``""``. ``strict`` reads as it does: the last
JSON object of the reply with a ``verdict`` that is one of the three labels as written. structbench's default also
reads a verdict written in another case, and a reply without the object by the last label it names (a model
without structured output often answers in prose)."""

from __future__ import annotations

import re

from structbench.benchmarks.claimdb.claims import LABELS
from structbench.core import untrusted

_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_LABEL = re.compile(r"NOT\s+ENOUGH\s+INFO(?:RMATION)?|ENTAILED|CONTRADICTED", re.IGNORECASE)


def _verdicts(text: str) -> list[str]:
    """The ``verdict`` values of the reply's JSON objects, in order."""
    found = []
    for match in _OBJECT.finditer(text):
        try:
            obj = untrusted.loads(match.group(0))
        except ValueError:  # (not JSON, or lists nested deeper than ``untrusted.MAX_NESTING`` inside: no verdict)
            continue
        if isinstance(obj, dict) and isinstance(obj.get("verdict"), str):
            found.append(obj["verdict"])
    return found


def parse_verdict(text: str, *, strict: bool = False) -> str | None:
    """The reply's verdict (one of ``LABELS``), or None when it gives none."""
    verdicts = _verdicts(text)
    if strict:
        return verdicts[-1] if verdicts and verdicts[-1] in LABELS else None
    for value in reversed(verdicts):
        label = " ".join(value.upper().split())
        if label in LABELS:
            return label
    named = _LABEL.findall(text)
    if not named:
        return None
    last = " ".join(named[-1].upper().split())
    return "NOT ENOUGH INFO" if last.startswith("NOT") else last
