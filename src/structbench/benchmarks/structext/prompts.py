"""Prompt templates: the paper's Tables 7-10 and the official repository's evaluation prompt.

Every prompt takes a ``PromptParts`` (language, question, requirement, reference, rule hint,
demonstrations) so the same builders serve generated and released samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources

PREAMBLE = (
    "you are a {language} file parser, you are required to answer questions pertaining to the given "
    "{language} file."
)
"""The first line of every paper prompt (Tables 7-10)."""

# Paper, Table 7 ("Prompt of Naive Prompt method"), verbatim. INPUT 0..3: language, question, reference,
# requirement.
NAIVE = PREAMBLE + """

### Question:
{question}

### Reference:
{reference}

### Requirement:
{requirement}

Please follow the format below for your output:

### Answer:
XXXXX"""

# Paper, Table 8 ("Prompt of CoT method"), verbatim, including its "Prcess" typo; used for Self-CoT.
SELF_COT = PREAMBLE + """

### Question:
{question}

### Reference:
{reference}

### Requirement:
{requirement}

Please follow the format below for your output:

### Reasoning Prcess:
xxxx

### Answer:
xxxxx"""

# Plan-and-Solve CoT (Wang et al., 2023). The paper names it (Sec. 4.2) but prints no template: this is
# Table 8's layout with the Plan-and-Solve trigger sentence and a plan section before the answer.
PS_TRIGGER = (
    "Let's first understand the problem and devise a plan to solve the problem. Then, let's carry out the "
    "plan and solve the problem step by step."
)
"""Plan-and-Solve's zero-shot trigger (Wang et al., 2023)."""
PS_COT = PREAMBLE + """

### Question:
{question}

### Reference:
{reference}

### Requirement:
{requirement}

""" + PS_TRIGGER + """

Please follow the format below for your output:

### Plan:
xxxx

### Solution:
xxxx

### Answer:
xxxxx"""

# Paper, Table 9 ("Prompt of Few Shot method"), verbatim. INPUT 1 is the demonstrations; the paper does not
# print their layout, so each is laid out as the official repository lays out its examples
# (Evaluation/generate_dataset.py: "### Question:", the question with its requirement as released,
# "### Reference:", "### Answer:"; see DEMONSTRATION).
FEW_SHOT = PREAMBLE + """

### Demonstration:
{demonstration}

### Question:
{question}

### Reference:
{reference}

### Requirement:
{requirement}

Please follow the format below for your output:

### Answer:
xxxxxx"""

DEMONSTRATION = """### Question:
{question}

### Reference:
{reference}

### Answer:
{answer}"""
"""One demonstration, as the official evaluation prompt writes an example (without its trailing blank lines,
which join demonstrations instead)."""

# Paper, Table 10 ("Prompt of \w Hint method"), with the "###" of its section titles restored: the
# extracted text of Table 10 lost its Markdown (its "# -*- coding" line lost the "#" as well), Tables 7-9
# print every title with "###", and the official code titles its own hint section "### Hint:". The
# official repository has no Table 7-10 templates at any commit.
RULE_HINT = PREAMBLE + """

### Question:
{question}

### Reference:
{reference}

### Requirement:
{requirement}

### Rule Hint:
{hint}

Please follow the format below for your output:

### Answer:
XXXXX"""

# The official repository's evaluation prompt (Evaluation/generate_dataset.py, get_data): language is the
# release's lower-case typename; the hint and the examples are optional sections.
OFFICIAL_HEAD = (
    "There are References in {language}. Based on the content under “### Question:”, please provide the "
    "answer directly after “### Answer:”. Avoid including any redundant information in your answer.\n\n"
)
OFFICIAL_HINT = "### Hint:\n{hint}\n\n"
OFFICIAL_EXAMPLE = "### Question:\n{question}\n\n### Reference:\n{reference}\n\n### Answer:\n{answer}\n\n"
OFFICIAL_TAIL = "### Question:\n{question}\n\n### Reference:\n{reference}\n\n### Answer:\n"

def _read_hints() -> dict[str, str]:
    text = resources.files(__package__).joinpath("rule_hints.txt").read_text(encoding="utf-8")
    rows = (line.split("\t", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {template: hint for template, hint in rows}


RULE_HINTS: dict[str, str] = _read_hints()
"""The rule hint of each template (paper Listing 1, kept in ``rule_hints.txt``)."""


@dataclass(frozen=True)
class Demo:
    """One worked example: question (with its requirement), reference text, answer."""

    question: str
    requirement: str
    full_question: str
    """Question and requirement as the release writes them (the official prompt shows this)."""
    reference: str
    answer: str
    raw_answer: str | None = None
    """The answer exactly as released (unstripped), for the official prompt; None: same as ``answer``."""


@dataclass(frozen=True)
class PromptParts:
    """Everything a prompt can show about one sample."""

    language: str
    """The paper's name (JSON, LaTeX ...)."""
    typename: str
    """The release's lower-case name, used by the official prompt."""
    question: str
    """The question without its requirement."""
    requirement: str
    full_question: str
    """Question and requirement as one text, as the release stores it."""
    reference: str
    hint: str
    demos: list[Demo] = field(default_factory=list)


def _requirement(parts: PromptParts | Demo) -> str:
    return parts.requirement or "None"


def naive(p: PromptParts) -> str:
    return NAIVE.format(language=p.language, question=p.question, reference=p.reference,
                        requirement=_requirement(p))


def self_cot(p: PromptParts) -> str:
    return SELF_COT.format(language=p.language, question=p.question, reference=p.reference,
                           requirement=_requirement(p))


def ps_cot(p: PromptParts) -> str:
    return PS_COT.format(language=p.language, question=p.question, reference=p.reference,
                         requirement=_requirement(p))


def rule_hint(p: PromptParts) -> str:
    return RULE_HINT.format(language=p.language, question=p.question, reference=p.reference,
                            requirement=_requirement(p), hint=p.hint)


def few_shot(p: PromptParts) -> str:
    demos = "\n\n".join(
        DEMONSTRATION.format(question=d.full_question, reference=d.reference, answer=d.answer) for d in p.demos
    )
    return FEW_SHOT.format(language=p.language, demonstration=demos, question=p.question,
                           reference=p.reference, requirement=_requirement(p))


def official(p: PromptParts, *, with_hint: bool = False) -> str:
    """The official evaluation prompt; ``p.demos`` become its "### Examples:" section."""
    text = OFFICIAL_HEAD.format(language=p.typename)
    if with_hint and p.hint:
        text += OFFICIAL_HINT.format(hint=p.hint)
    if p.demos:
        text += "### Examples:\n\n" + "".join(
            OFFICIAL_EXAMPLE.format(
                question=d.full_question, reference=d.reference,
                answer=d.answer if d.raw_answer is None else d.raw_answer,
            )
            for d in p.demos
        )
    return text + OFFICIAL_TAIL.format(question=p.full_question, reference=p.reference)
