"""SciTab's prompts, quoted from the paper's Appendix H, and how a sample becomes one.

Tables are rendered as the paper's prompts show them ("|| cell | cell ||" lines, header first: the
``paper`` serialization) or by any registered serializer (``--option serialization=markdown``).
The paper's prompts are two-class ("true or false"); for three-class runs the question also offers
"impossible to tell" and the PoT instruction says how to return it (see ``QUESTIONS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from structbench.benchmarks.scitab.source import NEI, REFUTES, SUPPORTS, Label
from structbench.data.evidence import Table
from structbench.data.sample import Sample
from structbench.data.serialize import serialize

Setting = Literal["2-class", "3-class"]
Style = Literal["zero_shot", "in_context", "cot", "pot", "open_model"]

PAPER_FORMAT = "paper"
SEPARATOR = "------"

# Appendix H.1, Zero-shot Prompts (verbatim). The two-class variant drops option C.
ZERO_SHOT = """Table: {table}
Claim: {claim}
Based on the information in the Table, is the above claim true?
{options}"""
OPTIONS: dict[Setting, str] = {
    "3-class": "A) the claim is true.\nB) the claim is false.\nC) it is impossible to tell.",
    "2-class": "A) the claim is true.\nB) the claim is false.",
}
OPTION_LABELS: dict[str, Label] = {"A": SUPPORTS, "B": REFUTES, "C": NEI}
"""The default (and only) option map of the zero-shot prompt."""

# Appendix H.2 (few-shot), H.3 (chain-of-thought), H.4 (program-of-thoughts): one block per
# demonstration, separated by "------". H.2 and H.3 open with one header line; H.4 repeats its
# two-line header in every block.
IN_CONTEXT_HEADER = "Read the following table and then answer a question."
POT_HEADER: dict[Setting, str] = {
    "2-class": "Read the following table and then write Python code to answer a question:\n"
    "(please call the function equal(a, b) to check whether a and b are equal)",
    "3-class": "Read the following table and then write Python code to answer a question:\n"
    "(please call the function equal(a, b) to check whether a and b are equal; "
    "set ans = None if it is impossible to tell)",
}
BLOCK = """Caption: {caption}
Table:
{table}
Claim: {claim}
Question: {question}"""
QUESTIONS: dict[Style, dict[Setting, str]] = {
    "in_context": {
        "2-class": "Is the above claim true or false? Please directly give the answer.",
        "3-class": "Is the above claim true or false, or is it impossible to tell? Please directly give the answer.",
    },
    "cot": {
        "2-class": "Is the above claim true or false? Let us think step by step.",
        "3-class": "Is the above claim true or false, or is it impossible to tell? Let us think step by step.",
    },
    "pot": {
        "2-class": "Based on the information in the table, is the above claim true or false?",
        "3-class": "Based on the information in the table, is the above claim true or false, "
        "or is it impossible to tell?",
    },
}
POT_CODE_LINE = "# Python Code, return ans"

# Section 4.1: the input of the encoder-decoder (FLAN-T5) and open-source LLMs (LLaMA, Alpaca, Vicuna),
# [T; P; C; Q]: the linearized table, the caption, the claim and this question template (verbatim).
OPEN_MODEL_QUESTION = "Based on the information in the table, is the above claim true? A) True B) False C) Unknown?"

ANSWERS: dict[Label, str] = {
    SUPPORTS: "The claim is true.",
    REFUTES: "The claim is false.",
    NEI: "It is impossible to tell.",
}
"""H.2's answer lines (the paper shows true and false; NEI is ours)."""
COT_ANSWERS: dict[Label, str] = {
    SUPPORTS: "Therefore, the claim is true.",
    REFUTES: "Therefore, the claim is false.",
    NEI: "Therefore, it is impossible to tell.",
}
ZERO_SHOT_ANSWERS: dict[Label, str] = {
    SUPPORTS: "A) the claim is true.",
    REFUTES: "B) the claim is false.",
    NEI: "C) it is impossible to tell.",
}

DemoKey = tuple[str, Label]
"""(table_id, label) of a demonstration claim (see ``pool.DEMONSTRATIONS``)."""

WOZ, PROBING, WIKIDATA = (
    "1d045a18-ec29-4ba4-806d-f102ece9f985",
    "d35d9a04-de0f-4f2b-ac85-d794d5212e41",
    "33a87cb6-8a23-46f2-8fee-97555075aab1",
)

# H.3's reasoning for its WoZ2.0 and probing demonstrations (the PDF's line wraps joined, one
# sentence per line). The two Wikidata ones follow the same style and are ours.
REASONING: dict[DemoKey, str] = {
    (
        WOZ,
        SUPPORTS,
    ): """To verify this claim, we need to compare the performance of COMER with and without hierarchical attention design.
The performance of COMER with hierarchical attention design is 88.64% (table[2,2]).
The performance of COMER without hierarchical attention design is 86.69% (table[3,2]).
Therefore, the performance of COMER with hierarchical attention design is higher than the performance of COMER without hierarchical attention design by 88.64 - 86.69 = 1.95.
Therefore, the Claim is true.""",  # noqa: E501
    (
        PROBING,
        REFUTES,
    ): """To verify this claim, we need to compare the performance of CMOW-R and CMOW-C on WordContent and BigramShift.
The performance of CMOW-R on WordContent is 72.9 (table[2,10]).
The performance of CMOW-C on WordContent is 66.8 (table[1,10]).
The performance of CMOW-R on BigramShift is 70.8 (table[2,2]).
The performance of CMOW-C on BigramShift is 66.0 (table[1,2]).
Therefore, the performance of CMOW-C is higher than the performance of CMOW-R on WordContent by 66.8 - 72.9 = -6.1.
The performance of CMOW-C is lower than the performance of CMOW-R on BigramShift by 66.0 - 70.8 = -4.8.
Therefore, the Claim is false.""",
    (
        WIKIDATA,
        SUPPORTS,
    ): """To verify this claim, we need to compare the performance of our model with and without word-level attention.
The performance of Our Model is 0.650, 0.519, 0.422 and 0.405 (table[3,1] to table[3,4]).
The performance without word-level attention (-Word-ATT) is 0.648, 0.515, 0.395 and 0.389 (table[1,1] to table[1,4]).
Therefore, removing the word-level attention lowers every score, so the word-level attention is useful.
Therefore, the Claim is true.""",
    (
        WIKIDATA,
        NEI,
    ): """To verify this claim, we need to compare our model with the variants -Word-ATT and -Capsule under every recall and AUC.
The performance of Our Model is 0.650, 0.519, 0.422 and 0.405 (table[3,1] to table[3,4]).
The performance of -Word-ATT is 0.648, 0.515, 0.395 and 0.389 (table[1,1] to table[1,4]), and the performance of -Capsule is 0.635, 0.507, 0.413 and 0.386 (table[2,1] to table[2,4]).
Our model is higher everywhere, but some differences are as small as 0.002 and the table reports no significance test.
Therefore, whether our model outperforms the variants significantly cannot be verified from the table.""",  # noqa: E501
}

# H.4's programs (indentation restored; the third program's wrapped last line joined). The
# not-enough-info program is ours.
PROGRAMS: dict[DemoKey, str] = {
    (WOZ, SUPPORTS): """COMER_acc = 88.64
COMER_acc_no_residual = 86.69
accuracy_drop = COMER_acc - COMER_acc_no_residual
ans = equal(accuracy_drop, 1.95)""",
    (WIKIDATA, SUPPORTS): """our_model_recalls = [0.650, 0.519, 0.422, 0.405]
without_word_att_recalls = [0.648, 0.515, 0.395, 0.389]
ans = True
for i in range(4):
    if our_model_recalls[i] < without_word_att_recalls[i]:
        ans = False
        break""",
    (PROBING, REFUTES): """CMOW_C_score_on_WC = 66.8
CMOW_C_score_on_BShift = 66.0
CMOW_R_score_on_WC = 72.9
CMOW_R_score_on_BShift = 70.8
ans = equal(CMOW_C_score_on_WC - CMOW_R_score_on_WC, 5) and equal(CMOW_C_score_on_BShift - CMOW_R_score_on_BShift, 5)""",  # noqa: E501
    (WIKIDATA, NEI): """our_model = [0.650, 0.519, 0.422, 0.405]
without_word_att = [0.648, 0.515, 0.395, 0.389]
without_capsule = [0.635, 0.507, 0.413, 0.386]
outperforms = all(o > w and o > c for o, w, c in zip(our_model, without_word_att, without_capsule))
# The table reports no significance test, so "significantly" cannot be checked.
ans = None if outperforms else False""",
}


def paper_table(table: Table) -> str:
    """The paper's rendering: one "|| a | b ||" line per row, the header first, no caption."""
    return "\n".join("|| " + " | ".join(row) + " ||" for row in [table.header, *table.rows])


def table_text(table: Table, fmt: str, *, with_caption: bool) -> str:
    """``table`` in serialization ``fmt`` (``paper`` or a registered name), with or without its caption."""
    if fmt == PAPER_FORMAT:
        body = paper_table(table)
        return f"{table.caption}\n{body}" if with_caption and table.caption else body
    shown = table if with_caption else table.model_copy(update={"caption": None})
    return serialize([shown], fmt)


def claim_table(sample: Sample) -> Table:
    """The claim's table (with its caption)."""
    return _table(sample)


def _table(sample: Sample) -> Table:
    evidence = sample.evidence[0]
    if not isinstance(evidence, Table):
        raise TypeError(f"SciTab sample {sample.id} has no table")
    return evidence


def _block(sample: Sample, style: Style, setting: Setting, fmt: str) -> str:
    table = _table(sample)
    return BLOCK.format(
        caption=table.caption or "",
        table=table_text(table, fmt, with_caption=False),
        claim=sample.question,
        question=QUESTIONS[style][setting],
    )


def _gold(sample: Sample) -> Label:
    label = getattr(sample.gold, "label", None)
    if label not in ANSWERS:
        raise ValueError(f"SciTab sample {sample.id} has no veracity label")
    return label


def demo_key(sample: Sample) -> DemoKey:
    return (str(sample.meta["table_id"]), _gold(sample))


def zero_shot(sample: Sample, setting: Setting, fmt: str) -> str:
    """Appendix H.1."""
    table = table_text(_table(sample), fmt, with_caption=True)
    return ZERO_SHOT.format(table=table, claim=sample.question, options=OPTIONS[setting])


# Ours (-s tools): H.1's question and options over the table's schema, row count and first rows, which the model
# queries with tools instead of reading (``strategies.tools``); the reply is read as H.1's.
TOOLS = """{note}
{schema}
Claim: {claim}
Based on the information in the Table, is the above claim true?
{options}"""


def tools(sample: Sample, setting: Setting, schema: str, note: str) -> str:
    """The tool loop's question: H.1's, the table described by ``schema`` (not shown in full)."""
    return TOOLS.format(note=note, schema=schema, claim=sample.question, options=OPTIONS[setting])


def in_context(sample: Sample, demos: Sequence[Sample], setting: Setting, fmt: str) -> str:
    """Appendix H.2: the demonstrations with their answers, then the query ending in "Answer:"."""
    blocks = [f"{_block(d, 'in_context', setting, fmt)}\nAnswer:\n{ANSWERS[_gold(d)]}" for d in demos]
    query = f"{_block(sample, 'in_context', setting, fmt)}\nAnswer:"
    return IN_CONTEXT_HEADER + "\n" + f"\n{SEPARATOR}\n".join([*blocks, query])


def cot(sample: Sample, demos: Sequence[Sample], setting: Setting, fmt: str) -> str:
    """Appendix H.3: demonstrations with reasoning and answer; the query ends in "Reasoning:"."""
    blocks = [
        f"{_block(d, 'cot', setting, fmt)}\nReasoning:\n{REASONING[demo_key(d)]}\nAnswer:\n{COT_ANSWERS[_gold(d)]}"
        for d in demos
    ]
    query = f"{_block(sample, 'cot', setting, fmt)}\nReasoning:"
    return IN_CONTEXT_HEADER + "\n" + f"\n{SEPARATOR}\n".join([*blocks, query])


def pot(sample: Sample, demos: Sequence[Sample], setting: Setting, fmt: str) -> str:
    """Appendix H.4: header + block + "# Python Code, return ans" + program, per demonstration."""
    head = POT_HEADER[setting]
    blocks = [f"{head}\n{_block(d, 'pot', setting, fmt)}\n{POT_CODE_LINE}\n{PROGRAMS[demo_key(d)]}" for d in demos]
    query = f"{head}\n{_block(sample, 'pot', setting, fmt)}\n{POT_CODE_LINE}"
    return f"\n{SEPARATOR}\n".join([*blocks, query])


def linearize(table: Table) -> str:
    """The table flattened as Chen et al. (2020, TabFact) do for Table-BERT: "row 1 is : col is value ; col
    is value ." per row (numbered from 1), which SciTab's section 4.1 follows."""
    rows = []
    for i, row in enumerate(table.rows, start=1):
        cells = " ; ".join(f"{column} is {cell}" for column, cell in zip(table.header, row, strict=False))
        rows.append(f"row {i} is : {cells} .")
    return " ".join(rows)


def open_model(sample: Sample, fmt: str) -> str:
    """Section 4.1's input of encoder-decoder and open-source models: table, caption, claim, question, one a
    line (``paper`` serialization: the TabFact linearization; another serializer renders the table)."""
    table = _table(sample)
    text = linearize(table) if fmt == PAPER_FORMAT else table_text(table, fmt, with_caption=False)
    return "\n".join([text, table.caption or "", sample.question, OPEN_MODEL_QUESTION])


def style_of(prompt: str) -> Style:
    """Which strategy's template ``prompt`` (the last user turn) follows; used by the oracle."""
    if prompt.rstrip().endswith(OPEN_MODEL_QUESTION):
        return "open_model"
    if prompt.rstrip().endswith(POT_CODE_LINE):
        return "pot"
    if prompt.rstrip().endswith("Reasoning:"):
        return "cot"
    if prompt.startswith(IN_CONTEXT_HEADER):
        return "in_context"
    return "zero_shot"
