"""The paper's evaluation prompts (Appendix C) and how a context's units are laid out in them.

The templates are quoted from the figures' text: Fig. 15-18 (QA for KG, Table, KG+Text, Table+Text;
used by the noise robustness, order insensitivity and information integration testbeds) and Fig. 19-22
(negative rejection). The figures are images; their extracted text loses some Markdown, so the section
headings are made uniform (``### Triples:``, ``### Table:``, ``### Texts:``, ``**Task Description:**``,
``### Question:``). Fig. 22 is printed with Fig. 21's caption and its text is missing; the Table+Text
rejection instruction follows Fig. 18 and Fig. 21 ("Based on the table and texts provided above, please
judge whether ..."). Table rows are written ``|cell|cell|`` as in Fig. 18 and Fig. 20; triples as
``(s, r, o)`` one a line (Fig. 15).
"""

from __future__ import annotations

from collections.abc import Sequence

from structbench.benchmarks.skabench.units import Passage, Row, Triple

TRIPLES_HEADING = "### Triples:"
TABLE_HEADING = "### Table:"
TEXTS_HEADING = "### Texts:"

QA_TASK = {
    # Fig. 15
    "kg": "Based on the triples provided above, please answer the following questions.",
    # Fig. 16
    "table": "Please look at the table, and then answer the following questions.",
    # Fig. 17 (sic: "the specific product" is in the paper's prompt, carried over from STaRK-Amazon)
    "kg+text": "Based on the triples and texts provided above, please answer the specific product for "
    "following questions.",
    # Fig. 18 (sic)
    "table+text": "Based on the table and texts provided above, please answer the specific product for "
    "following questions.",
}

REJECTION_TASK = {
    # Fig. 19
    "kg": "Based on the triples provided above, please judge whether the following questions can be answered.",
    # Fig. 20
    "table": "Please look at the table, and then judge whether the following questions can be answered.",
    # Fig. 21
    "kg+text": "Based on the triples and texts provided above, please judge whether the following questions "
    "can be answered.",
    # Fig. 22 (text missing from the paper; by analogy with Fig. 18 and Fig. 21)
    "table+text": "Based on the table and texts provided above, please judge whether the following questions "
    "can be answered.",
}

QA_FORMAT = 'Return the final result as JSON in the format {"answer": <YOUR ANSWER LIST>} in the last line.'
REJECTION_FORMAT = (
    'Return the final result as JSON in the format {"answer": "yes"} or {"answer": "no"} in the last line.'
)

PROMPT = "{knowledge}\n**Task Description:** {task}\n### Question:\n{question}\n{answer_format}"


PAPER_FORMAT = "paper"
"""The ``serialization`` of the paper's figures: ``|cell|cell|`` rows and ``(s, r, o)`` triples."""


def header_line(header: Sequence[str]) -> str:
    return "|" + "|".join(h.replace("\n", " ") for h in header) + "|"


def render_knowledge(
    knowledge_type: str,
    structured: Sequence[Triple | Row],
    texts: Sequence[Passage],
    header: Sequence[str] | None = None,
) -> str:
    """The knowledge base block: triples or the table (header first), then the texts for hybrids."""
    if knowledge_type.startswith("kg"):
        lines = [TRIPLES_HEADING, *(u.line() for u in structured)]
    else:
        blanked = bool(header) and not any(h.strip() for h in header or [])  # perturbation=no_header
        shown = [] if blanked else [header_line(header or [])]
        lines = [TABLE_HEADING, *shown, *(u.line() for u in structured)]
    if knowledge_type.endswith("+text"):
        lines += [TEXTS_HEADING, *(u.line() for u in texts)]
    return "\n".join(lines)


def serialized_knowledge(knowledge_type: str, structured: str, texts: Sequence[Passage]) -> str:
    """The knowledge base block with the triples or the table already written in another serialization (the
    ``serialization`` option): the same headings, then the texts for hybrids as the paper lays them out."""
    lines = [TRIPLES_HEADING if knowledge_type.startswith("kg") else TABLE_HEADING, structured]
    if knowledge_type.endswith("+text"):
        lines += [TEXTS_HEADING, *(u.line() for u in texts)]
    return "\n".join(lines)


def qa_prompt(knowledge_type: str, knowledge: str, question: str) -> str:
    """The QA prompt (Fig. 15-18)."""
    return PROMPT.format(knowledge=knowledge, task=QA_TASK[knowledge_type], question=question, answer_format=QA_FORMAT)


def rejection_prompt(knowledge_type: str, knowledge: str, question: str) -> str:
    """The negative rejection prompt (Fig. 19-22)."""
    return PROMPT.format(
        knowledge=knowledge, task=REJECTION_TASK[knowledge_type], question=question, answer_format=REJECTION_FORMAT
    )
