"""StructFact's prompt templates and how a sample becomes a request.

Templates are the official ones (``src/common.py`` at commit f0f1f56), which are what the paper's
Figure 13 shows (there the option lines are run together) and what produced its numbers. Figure 14 shows
shorter variants for w/o data, self-refinement and format instructions that ask for the words "Yes",
"No" or "Not sure enough"; the official code (and so we) ask for A/B/C everywhere, because only A/B/C is
parsed. The one official template without options (w/o data + CoT) is fixed, see ``WITHOUT_DATA_COT``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from structbench.backends.base import Message, Request
from structbench.backends.tokens import token_counter
from structbench.benchmarks.structfact.evidence import parse_evidence
from structbench.benchmarks.structfact.examples import DATA_PLACEHOLDER, EXAMPLES, Example
from structbench.benchmarks.structfact.options import ORIGINAL, StructFactOptions
from structbench.benchmarks.structfact.truncation import truncate
from structbench.data.evidence import Evidence, StructuredText, Table, Text
from structbench.data.perturb import shuffle_evidence
from structbench.data.sample import Sample
from structbench.data.serialize import SERIALIZERS
from structbench.strategies.tools import ToolTask, not_shown, table_workspace

_OPTIONS = """A) {option_a}
B) {option_b}
C) {option_c}"""

TOOL_MAX_TOKENS = 512
"""Tokens per reply of the tool loop at least (a query, or the final answer)."""

# Figure 13 "Zero-shot w/o CoT" = official TEMPLATE ("base").
ZERO_SHOT = f"""Given a question and related structured data, please provide your answer.
Choose one of the following options as your answer:
{_OPTIONS}
You only need to output the option ("A", "B" or "C").

Data:
{{data}}
Q: {{question}}
A: """

# Figure 13 "Zero-shot w/ CoT" = official TEMPLATE_COT ("cot").
ZERO_SHOT_COT = f"""Given a question and related structured data, please first provide an explanation for \
how you arrived at your answer.
Then, choose one of the following options as your final answer:
{_OPTIONS}
You should first output the explanation, followed by the selected option ("A", "B", or "C").

Data:
{{data}}
Q: {{question}}
Let's think step by step.

Explanation:"""

# Figure 13 "Few-shot w/o CoT" = official TEMPLATE_SHOT ("few_shot").
FEW_SHOT = f"""Given a question and related structured data, please provide your answer.
Choose one of the following options as your answer:
{_OPTIONS}
You only need to output the option ("A", "B" or "C").

{{examples}}

Now, consider the following data and question:

Data:
{{data}}
Q: {{question}}
A: """

# Figure 13 "Few-shot w/ CoT" = official TEMPLATE_SHOT_COT ("few_shot_cot"); the figure adds
# "Now, consider the following data and question:" which the official template does not have.
FEW_SHOT_COT = f"""Given a question and related structured data, please first provide an explanation for how \
you arrived at your answer.
Then, choose one of the following options as your final answer:
{_OPTIONS}
You should first output the explanation, followed by the selected option ("A", "B", or "C").

{{examples}}

Data:
{{data}}
Q: {{question}}
Let's think step by step.

Explanation:"""

# Figure 14 "w/o Data" (which shows no options) = official TEMPLATE_WO_DATA ("wo_data").
WITHOUT_DATA = f"""Use your knowledge to answer the following question.
Choose one of the following options as your answer:
{_OPTIONS}
You only need to output the option ("A", "B" or "C").

Q: {{question}}
A: """

# Figure 14 "w/o Data CoT" = official TEMPLATE_WO_DATA_COT ("wo_data_cot"): it asks for words although
# only A/B/C is parsed. Bug-compatible, behind ``official_without_data_cot``.
WITHOUT_DATA_COT_OFFICIAL = """Use your knowledge to answer the following question.
Answer with "Yes" or "No" and provide supporting evidence. If you cannot determine the answer, respond \
with "Not sure enough."

Q: {question}
Let's think step by step.
A: """

# Ours (the default): the official one with the CoT answer instructions of ZERO_SHOT_COT.
WITHOUT_DATA_COT = f"""Use your knowledge to answer the following question.
Please first provide an explanation for how you arrived at your answer.
Then, choose one of the following options as your final answer:
{_OPTIONS}
You should first output the explanation, followed by the selected option ("A", "B", or "C").

Q: {{question}}
Let's think step by step.

Explanation:"""

# Appendix H.5 "Enhanced Unstructured Context" = official TEMPLATE_ENHANCED ("enhanced"); the data is
# followed by "\n\nReference prompt: \n{GPT-4o description}\n" (official ``--enhance``).
ENHANCED = (
    f"""Given structural data and its descriptive prompt, please analyze this data and answer the \
subsequent question.
Choose one of the following options as your answer:
{_OPTIONS}
You only need to output the option ("A", "B" or "C").

Data:
{{data}}
Q: {{question}}
A: """
    + "\n"
)  # the official template ends with "A: " and a newline

# Figure 14 "Format Instruction" = official TEMPLATE_STRUCTURE ("struct"), typo included; {format} is the
# official Markdown sentence, or the matching sentence of FORMAT_DESCRIPTIONS for another serialization.
FORMAT_INSTRUCTIONS = f"""Given a question and related structured data, please provide your answer. \
{{format}}
Choose one of the following options as your answer:
{_OPTIONS}
You only need to output the option ("A", "B" or "C").

Data:
{{data}}
Q: {{question}}
A: """

FORMAT_DESCRIPTIONS = {
    ORIGINAL: "The given data is in markdown format. Columns in the table are separated by ' | ', rows are "
    "separate by '\\n', and list element starts with '*'.",
    "markdown": "The given data is in markdown format. Columns in the table are separated by ' | ', rows "
    "are separate by '\\n', and list element starts with '-'.",
    "csv": "The given data is in CSV format. Columns in the table are separated by ',', rows are separated "
    "by '\\n', and values containing ',' are quoted.",
    "json": "The given data is in JSON format. A table is a list of rows, each an object from column name "
    "to cell value (or an object with 'columns' and 'rows'), and a list is a JSON array.",
    "html": "The given data is in HTML format. Tables are <table> elements with <th> header cells and <td> "
    "data cells in <tr> rows, and list elements are <li> items.",
    "xml": "The given data is in XML format. Tables are <table> elements of <row> elements whose <cell> "
    "elements name their column, and list elements are <item> elements.",
    "triples": "The given data is a list of (subject, relation, object) triples, one per line; a table cell "
    "is written as (row, column, value).",
    "indexed_row_major": "The given data is in indexed row-major format. 'col :' is followed by the column names "
    "and each 'row N :' by that row's values, separated by ' | '.",
    "dataframe": "The given data is a printed pandas DataFrame. The first line holds the column names, and each "
    "further line a row index followed by that row's values.",
    "df_loader": "The given data is the pandas code that builds a DataFrame: each column name is mapped to the "
    "list of its values.",
    "concat": "The given data is the column names followed by the values of each row, all separated by spaces.",
}
"""The format sentence of ``format_instructions`` per serialization (only ``paper`` is the paper's)."""

# Figure 14 "Self-Refinement" / official TEMPLATE_SELF_REFINE ("refine"), asked as a follow-up turn of
# the zero-shot conversation (the model's first answer is already in it) instead of a fresh prompt that
# repeats the data, the question and the answer.
SELF_REFINE_FOLLOW_UP = f"""Please review the question based on the structural data and related answer.

Please provide feedback and suggest any corrections or additional information that could enhance the \
answer's accuracy, relevance to the data, or clarity.
Then, choose one of the following options as your final answer:
{_OPTIONS}
Feedback:"""


def record_id(sample: Sample) -> str:
    """The id of the record a sample asks about (one record gives a sample per option map)."""
    return str(sample.extra.get("record_id", sample.id))


def _option_fields(letters: dict[str, str]) -> dict[str, str]:
    return {f"option_{letter.lower()}": text for letter, text in letters.items()}


@dataclass(frozen=True)
class EvidenceText:
    """The data block of a prompt, and whether it was truncated."""

    text: str
    truncated: bool


class Prompter:
    """Builds StructFact requests under one set of run options."""

    def __init__(self, options: StructFactOptions, enhanced: dict[str, str] | None = None) -> None:
        self.options = options
        self.enhanced = enhanced or {}
        self.counter = token_counter(options.token_counter)

    # --- evidence ---------------------------------------------------------------------------------

    def _pieces(self, sample: Sample) -> tuple[list[str], list[Evidence]]:
        """Raw strings and typed pieces, without the unstructured context if ``drop_unstructured``."""
        raw: list[str] = list(sample.extra.get("evidence_raw") or [])
        typed: list[Evidence] = list(sample.evidence)
        if not self.options.drop_unstructured:
            return raw, typed
        new_raw = sample.extra.get("new_evidence_raw")
        if new_raw is not None:
            return list(new_raw), [p for text in new_raw for p in parse_evidence(text)]

        def structured(pieces: list[Evidence]) -> list[Evidence]:
            return [p for p in pieces if not isinstance(p, Text | StructuredText)]

        kept_raw = [text for text in raw if structured(parse_evidence(text))]
        return kept_raw, structured(typed)

    def render(self, raw: list[str], typed: list[Evidence], *, reshaped: bool = False) -> str:
        """Evidence pieces joined by newlines (the official ``'\\n'.join(stripped)``) in the serialization;
        ``reshaped`` evidence (shuffled or perturbed) cannot use the released strings and is rendered as Markdown."""
        fmt = self.options.serialization
        if fmt == ORIGINAL and not reshaped:
            return "\n".join(text.strip() for text in raw)
        render = SERIALIZERS.get("markdown" if fmt == ORIGINAL else fmt)
        return "\n".join(render(piece).strip() for piece in typed)

    def evidence(self, sample: Sample, *, shuffled: bool = False) -> EvidenceText:
        """The sample's data block: perturbed (``perturbation``), optionally shuffled, serialized, truncated to the
        token budget."""
        raw, typed = self._pieces(sample)
        perturbed = self.options.perturbs
        if perturbed:
            typed = self.options.perturbed(typed)
        if shuffled:
            typed = shuffle_evidence(typed, self.rng(sample, "shuffle"), self.options.shuffle)
        reshaped = shuffled or perturbed
        text, cut = truncate(self.render(raw, typed, reshaped=reshaped), self.options.max_evidence_tokens, self.counter)
        return EvidenceText(text, cut)

    # --- few-shot ---------------------------------------------------------------------------------

    def rng(self, sample: Sample, purpose: str) -> random.Random:
        """A generator seeded by the run seed, the record and the purpose: same run, same draw (and the same
        draw under every option map, so the maps' prompts differ only in the options' order)."""
        return random.Random(f"structfact:{sample.extra.get('seed', 0)}:{record_id(sample)}:{purpose}")

    def example_data(self, example: Example) -> str:
        if self.options.few_shot_placeholder:
            return DATA_PLACEHOLDER
        return self.render([example.data], parse_evidence(example.data))

    def examples(self, sample: Sample, *, cot: bool) -> str:
        """``shots`` examples from the official pool, answered with the letters of the option map."""
        letter_of = {text: letter for letter, text in self.options.letters.items()}
        chosen = self.rng(sample, "examples").sample(EXAMPLES, self.options.shots)
        blocks = []
        for ex in chosen:
            head = f"Data:\n{self.example_data(ex)}\nQ: {ex.question}\n"
            if cot:
                blocks.append(f"{head}Explanation: {ex.explanation}\nFinal Answer: {letter_of[ex.answer]}.")
            else:
                blocks.append(f"{head}A: {letter_of[ex.answer]}.")
        intro = "Here are some examples.\n" if len(chosen) > 1 else "Here is an example.\n"
        return intro + "\n\n".join(blocks)

    # --- requests ---------------------------------------------------------------------------------

    def request(self, text: str, *, cot: bool) -> Request:
        """A one-turn chat request with the paper's sampling parameters (Table 4)."""
        o = self.options
        return Request.chat(
            text,
            max_tokens=o.max_tokens_cot if cot else o.max_tokens,
            temperature=o.temperature,
            top_p=o.top_p,
            min_tokens=o.min_tokens,
            logprobs=o.logprobs,
            top_logprobs=5 if o.logprobs else 0,
            choices=tuple(o.letters) if o.answer == "constrained" and not cot else (),
        )

    def fill(self, template: str, sample: Sample, **fields: Any) -> str:
        return template.format(question=sample.question, **fields, **_option_fields(self.options.letters))

    def zero_shot(self, sample: Sample, *, cot: bool = False, long: bool = False) -> Request:
        data = self.evidence(sample).text
        return self.request(self.fill(ZERO_SHOT_COT if cot else ZERO_SHOT, sample, data=data), cot=cot or long)

    def few_shot(self, sample: Sample, *, cot: bool = False) -> Request:
        template = FEW_SHOT_COT if cot else FEW_SHOT
        text = self.fill(template, sample, data=self.evidence(sample).text, examples=self.examples(sample, cot=cot))
        return self.request(text, cot=cot)

    def without_data(self, sample: Sample, *, cot: bool = False) -> Request:
        if not cot:
            template = WITHOUT_DATA
        else:
            template = WITHOUT_DATA_COT_OFFICIAL if self.options.official_without_data_cot else WITHOUT_DATA_COT
        return self.request(self.fill(template, sample), cot=cot)

    def shuffled(self, sample: Sample) -> Request:
        return self.request(self.fill(ZERO_SHOT, sample, data=self.evidence(sample, shuffled=True).text), cot=False)

    def format_instructions(self, sample: Sample) -> Request:
        name = self.options.serialization
        fmt = FORMAT_DESCRIPTIONS.get(name, f"The given data is in {name} format.")
        text = self.fill(FORMAT_INSTRUCTIONS, sample, data=self.evidence(sample).text, format=fmt)
        return self.request(text, cot=False)

    def enhanced_context(self, sample: Sample) -> Request:
        data = self.evidence(sample).text
        reference = self.enhanced.get(record_id(sample))
        if reference:
            data += f"\n\nReference prompt: \n{reference}\n"
        return self.request(self.fill(ENHANCED, sample, data=data), cot=False)

    def tool_task(self, sample: Sample) -> ToolTask:
        """Ours (``-s tools``): the zero-shot prompt whose tables are given as their schema, row count and first rows,
        queried with sql and python tools; the rest of the evidence (texts, lists, graphs) is shown as zero-shot
        shows it, in the serialization (Markdown for the released strings)."""
        _, typed = self._pieces(sample)
        if self.options.perturbs:
            typed = self.options.perturbed(typed)
        tables = [p for p in typed if isinstance(p, Table)]
        rest: list[Evidence] = [p for p in typed if not isinstance(p, Table)]
        workspace = table_workspace(tables)
        parts = [self.render([], rest, reshaped=True)] if rest else []
        if tables:
            parts += [not_shown(len(tables)), workspace.schema]
        text = self.fill(ZERO_SHOT, sample, data="\n".join(parts))
        return ToolTask((Message("user", text),), workspace, max_tokens=max(self.options.max_tokens, TOOL_MAX_TOKENS))

    def refine_follow_up(self, sample: Sample, reply: str) -> str:
        return SELF_REFINE_FOLLOW_UP.format(**_option_fields(self.options.letters))
