"""Reading a veracity label out of a model's reply.

Semantics (``parse_label``):

1. Echoes of the prompt are removed first: the option lists ("A) the claim is true. B) ...", section
   4.1's "A) True B) False C) Unknown?"),
   the question's "true or false" (so "Is the claim true or false? ..." says nothing), and "correct"
   in "the correct option/answer is".
2. If the reply has an answer marker ("Answer:", "Final answer:", "the answer is"), only the text
   after the last marker is read first; when it holds no label, the whole reply is read.
3. In the text read, every *mention* is found: an option letter (only when the prompt showed
   options: "A", "A)", "(A)", "option A", "answer: A"), or a phrase:
   - not enough info: "impossible to tell", "cannot be determined/verified/...", "not enough
     information", "does not provide sufficient data", "insufficient evidence", "unknown",
     "uncertain", "unverifiable", "not necessarily true", "neither true nor false" ...;
   - refutes: "false", "refute(s|d)", "incorrect", "inaccurate", "contradict(s|ed)", "not true",
     "not supported", "does not support", "partially true/correct/right" (the paper counts a partly
     right claim as refuted) ...;
   - supports: "true", "support(s|ed)", "correct", "accurate".
   Where two mentions overlap, the one starting first wins, then the longer ("not true" beats "true").
4. A direct answer (zero-shot, in-context) is the **first** mention; a chain-of-thought answer, whose
   reasoning may mention labels along the way, is the **last**.
5. Failing all that, a reply opening with a bare "Yes"/"No" ("No.", "Yes, ...") means supports/refutes
   ("No idea" does not).
6. No mention: ``None`` (an invalid prediction, wrong for every class).
"""

from __future__ import annotations

import re
from typing import Literal

from structbench.benchmarks.scitab.prompts import OPTION_LABELS
from structbench.benchmarks.scitab.source import NEI, REFUTES, SUPPORTS, Label

Pick = Literal["first", "last"]

_ECHOES = [
    re.compile(
        r"A\)\s*the claim is true\.?\s*B\)\s*the claim is false\.?(?:\s*C\)\s*it is impossible to tell\.?)?",
        re.IGNORECASE,
    ),
    re.compile(r"A\)\s*True\s*B\)\s*False(?:\s*C\)\s*Unknown\??)?", re.IGNORECASE),  # section 4.1's options
    re.compile(r"\btrue,? or false\b(?:,? or (?:is it )?impossible to tell)?", re.IGNORECASE),
    re.compile(r"\bcorrect(?= (?:option|answer|choice|label)\b)", re.IGNORECASE),  # "the correct option is B"
]
_MARKER = re.compile(r"(?:\bfinal answer\b|\banswer\b(?:\s+is)?)\s*[:：]|\bthe (?:final )?answer is\b", re.IGNORECASE)

_NOT = r"(?:\bnot|n't)"
_NEI = [
    r"\bimpossible to (?:tell|say|determine|know|verify|judge|decide)",
    r"(?:\bcan ?not|\bcan't|\bunable to|\bnot possible to|\bno way to) (?:be )?"
    r"(?:tell|told|say|said|determined?|know|known|verif(?:y|ied)|judged?|concluded?|decided?|confirmed?)",
    rf"{_NOT} (?:be )?(?:determinable|verifiable)",
    rf"{_NOT} (?:\w+ ){{0,3}}(?:enough|sufficient) (?:info(?:rmation)?|evidence|data|context|details)",
    r"\b(?:insufficient|no|lack of|not sufficient) (?:info(?:rmation)?|evidence|data)",
    rf"{_NOT} necessarily (?:true|false|correct)",
    r"\bneither true nor false",
    r"\b(?:unknown|uncertain|undetermined|unverifiable|indeterminate|unclear)",
    r"\bNEI",
]
_REFUTES = [
    rf"{_NOT} (?:entirely |completely |fully |quite )?(?:true|correct|accurate|supported|right)",
    r"\b(?:does|do|did)(?: not|n't) support",
    r"\bpartially (?:true|correct|right|supported)",
    r"\bfalse",
    r"\brefute[sd]?",
    r"\bunsupported",
    r"\bincorrect",
    r"\binaccurate",
    r"\bcontradict(?:s|ed|ory)?",
]
_SUPPORTS = [r"\btrue", r"\bsupport(?:s|ed)?", r"\bcorrect", r"\baccurate"]

_PHRASES: list[tuple[re.Pattern[str], Label]] = [
    (re.compile(rf"{p}\b", re.IGNORECASE), label)
    for label, patterns in ((NEI, _NEI), (REFUTES, _REFUTES), (SUPPORTS, _SUPPORTS))
    for p in patterns
]
_LETTERS = [
    re.compile(r"^\s*\(?([ABC])(?:[).:]|\s*$|\s*\n)"),  # the reply opens with the letter alone
    re.compile(r"(?i:\b(?:answer|option|choice)(?:\s+is)?)\s*[:：\-]?\s*\(?([ABC])\b"),
    re.compile(r"(?<![\w(])\(([ABC])\)"),
    re.compile(r"(?<![\w(])([ABC])\)"),
]
_YES_NO = re.compile(r"^\W*(yes|no)(?=\s*(?:[.,!;:\n]|$))", re.IGNORECASE)


def _mentions(text: str, options: bool) -> list[tuple[int, int, Label]]:
    """Non-overlapping (start, end, label) mentions in reading order."""
    found: list[tuple[int, int, Label]] = []
    for pattern, label in _PHRASES:
        found.extend((m.start(), m.end(), label) for m in pattern.finditer(text))
    if options:
        for pattern in _LETTERS:
            found.extend((m.start(1), m.end(1), OPTION_LABELS[m.group(1)]) for m in pattern.finditer(text))
    found.sort(key=lambda m: (m[0], -(m[1] - m[0])))
    kept: list[tuple[int, int, Label]] = []
    for start, end, label in found:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, label))
    return kept


def _scan(text: str, pick: Pick, options: bool) -> Label | None:
    mentions = _mentions(text, options)
    if mentions:
        return mentions[0 if pick == "first" else -1][2]
    yes_no = _YES_NO.match(text)
    if yes_no:
        return SUPPORTS if yes_no.group(1).lower() == "yes" else REFUTES
    return None


def parse_label(text: str, *, pick: Pick = "first", options: bool = False) -> Label | None:
    """The veracity label ``text`` gives (see the module docstring), or None when it gives none."""
    cleaned = text
    for echo in _ECHOES:
        cleaned = echo.sub(" ", cleaned)
    markers = list(_MARKER.finditer(cleaned))
    if markers:
        tail = cleaned[markers[-1].end() :]
        label = _scan(tail, "first", options)
        if label is not None:
            return label
    return _scan(cleaned, pick, options)
