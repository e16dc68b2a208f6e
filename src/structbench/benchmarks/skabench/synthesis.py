"""The paper's LLM noisy-unit synthesis for Table and Table+Text instances (section 3.2.3, Appendix B).

1. Derive the "condition" a row must satisfy to help answer the question, from the question, answer
   and positive units (Fig. 13; the figure's text is not in the paper, so this prompt is a
   reconstruction in the style of Fig. 12 and Fig. 14).
2. Ask for ``per_call`` noisy rows in the table's format that do not change the answer (Fig. 12,
   verbatim). The generating models take turns call by call (the paper alternates GPT-4o and
   DeepSeek-V3, for diversity).
3. Check the generated rows against the condition (Fig. 14, verbatim): a reply of "0" (no answer can
   be derived from them) accepts them; "1" or "2" rejects them and rows are generated again. The paper
   checks a whole batch at once (``check="batch"``); ``check="row"`` checks and keeps rows one by one.
   The condition and the checks come from one model (the paper's DeepSeek-V3).

Rounds repeat until ``target`` rows are accepted; a run that accepts nothing for ``patience`` rounds in
a row stops short (``SynthesisReport.stalled``), as does one that reaches ``max_calls``. Each generation
request carries its round number as ``seed``, so no round is answered from the cache with an earlier
round's reply. Rows with the wrong number of cells, or repeating a row already in the table, are dropped
before the check. Accepted rows are appended after the table's last row (their ``order`` continues it).
A Table+Text instance gets rows over its table's columns (its paragraphs are left as they are).
Models are ``Request -> Response`` coroutines: ``structbench.contract.benchmark.other_model(spec)`` inside a run
or a ``ModelPool``, so every call is cached and no completed call is repeated.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from structbench.backends.base import Request
from structbench.benchmarks.skabench.prompts import header_line
from structbench.benchmarks.skabench.units import Instance, Row
from structbench.contract.benchmark import Generate

# Fig. 12: the prompt for noisy units synthesis.
SYNTHESIS_PROMPT = (
    "Table:\n{table}\n"
    "Task Description: According to the above table, we have the following question and answer.\n"
    "Question: {question}\n"
    "Answer: {answer}\n"
    "Your task is to generate {n} noisy rows for the table. You need to make sure that you don't change the "
    "answer to the current question after adding noise rows to the table. Your output noise rows must not "
    "duplicate the existing table, and the table format should be the same as the original table. Note that "
    "your output does not contain the original table rows."
)

# Fig. 13 (reconstructed): the prompt for "condition" summarizing.
CONDITION_PROMPT = (
    "### Question:\n{question}\n"
    "### Answer:\n{answer}\n"
    "### Positive Units:\n{units}\n"
    "Task Description: The above are a question, its answer and the positive knowledge units needed to "
    'deduce the answer. Please summarize the "conditions" that a knowledge unit must satisfy to be used for '
    'deducing the answer to the above question. Reply with one line that starts with "Conditions:".'
)

# Fig. 14: the prompt for checking noisy units.
CHECK_PROMPT = (
    "### Question:\n{question}\n"
    "### Answer:\n{answer}\n"
    "### Noisy Units:\n{units}\n"
    "### Positive Unit Condition:\n{condition}\n"
    "Task Description: The above are KBQA question and corresponding answer. Please judge whether the Noisy "
    'knowledge units satisfy the "positive unit condition", thereby deducing answer to the above question. '
    'If you can get partial answers, reply me "1" directly; If you can get all the answers, please reply me '
    '"2" directly; If you can\'t get any result, please reply me "0" directly.'
)


@dataclass
class SynthesisReport:
    """What a synthesis run produced."""

    rows: list[Row] = field(default_factory=list)
    """Accepted noisy rows, in generation order."""
    condition: str = ""
    generated: int = 0
    """Well-formed new rows the models proposed."""
    malformed: int = 0
    """Proposed lines with the wrong number of cells, or repeating an existing row."""
    rejected: int = 0
    """Rows rejected by the condition check."""
    calls: int = 0
    rounds: int = 0
    """Generation requests made."""
    accepted_by_model: Counter[int] = field(default_factory=Counter)
    """Accepted rows per generating model (its index in ``generators``)."""
    stalled: bool = False
    """Stopped before ``target``: ``patience`` rounds in a row accepted nothing, or ``max_calls`` was reached."""


def _table_text(instance: Instance, rows: Sequence[Row]) -> str:
    return "\n".join([header_line(instance.header or []), *(r.line() for r in rows)])


def _answer_text(instance: Instance) -> str:
    return ", ".join(instance.answers)


def parse_rows(text: str, width: int) -> list[tuple[str, ...]]:
    """Pipe-delimited rows of ``width`` cells in a reply (``|a|b|`` or ``a | b``); others are skipped."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if "|" not in line or re.fullmatch(r"[|\s:-]+", line):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == width:
            rows.append(tuple(cells))
    return rows


def parse_check(text: str) -> int | None:
    """The 0/1/2 verdict of a check reply."""
    match = re.search(r"\b([012])\b", text)
    return int(match.group(1)) if match else None


def parse_condition(text: str) -> str:
    """The text after "Conditions:" (or the whole reply)."""
    match = re.search(r"conditions?\s*:\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    return (match.group(1) if match else text).strip()


async def _ask(
    generate: Generate, prompt: str, temperature: float, report: SynthesisReport, seed: int | None = None
) -> str:
    report.calls += 1
    response = await generate(Request.chat(prompt, max_tokens=2048, temperature=temperature, seed=seed))
    return response.text


async def derive_condition(instance: Instance, generate: Generate, report: SynthesisReport | None = None) -> str:
    """Step 1: the condition a unit must satisfy to help answer the question."""
    report = report or SynthesisReport()
    units = "\n".join([header_line(instance.header or []), *(u.line() for u in instance.positive_units)])
    reply = await _ask(
        generate,
        CONDITION_PROMPT.format(question=instance.question, answer=_answer_text(instance), units=units),
        0.0,
        report,
    )
    return parse_condition(reply)


async def synthesize_noisy_rows(
    instance: Instance,
    generators: Generate | Sequence[Generate],
    *,
    checker: Generate | None = None,
    target: int = 20,
    per_call: int = 20,
    check: Literal["batch", "row"] = "batch",
    temperature: float = 0.7,
    patience: int = 5,
    max_calls: int | None = None,
) -> SynthesisReport:
    """Generate ``target`` noisy rows for a table instance that leave its answer unchanged.

    ``generators`` take turns proposing rows (one model, or the paper's two); ``checker`` (default: the
    first generator) derives the condition and checks the rows."""
    if instance.header is None or instance.knowledge_type not in ("table", "table+text"):
        raise ValueError(f"{instance.id}: noisy row synthesis needs a table instance")
    models = [generators] if callable(generators) else list(generators)
    if not models:
        raise ValueError("noisy row synthesis needs at least one generating model")
    judge = checker or models[0]
    width = len(instance.header)
    report = SynthesisReport()
    report.condition = await derive_condition(instance, judge, report)
    table = sorted(
        (u for u in [*instance.positive_units, *instance.noisy_units] if isinstance(u, Row)),
        key=lambda r: r.order or 0,
    )
    seen = {tuple(c.strip().lower() for c in r.cells) for r in table}
    next_order = max((r.order or 0 for r in table), default=-1) + 1
    idle = 0
    while len(report.rows) < target:
        if idle >= patience or (max_calls is not None and report.calls + 2 > max_calls):
            report.stalled = True  # room is left for one generate-and-check round at least
            break
        model = report.rounds % len(models)
        report.rounds += 1
        reply = await _ask(
            models[model],
            SYNTHESIS_PROMPT.format(
                table=_table_text(instance, [*table, *report.rows]),
                question=instance.question,
                answer=_answer_text(instance),
                n=per_call,
            ),
            temperature,
            report,
            seed=report.rounds,
        )
        before = len(report.rows)
        fresh: list[tuple[str, ...]] = []
        for cells in parse_rows(reply, width):
            key = tuple(c.lower() for c in cells)
            if key in seen or list(cells) == instance.header:
                report.malformed += 1
                continue
            seen.add(key)
            fresh.append(cells)
        report.generated += len(fresh)
        batches = [fresh] if check == "batch" else [[cells] for cells in fresh]
        for batch in batches if fresh else []:
            if len(report.rows) >= target or (max_calls is not None and report.calls >= max_calls):
                break
            verdict = parse_check(
                await _ask(
                    judge,
                    CHECK_PROMPT.format(
                        question=instance.question,
                        answer=_answer_text(instance),
                        units="\n".join([header_line(instance.header), *("|" + "|".join(c) + "|" for c in batch)]),
                        condition=f"Conditions: {report.condition}",
                    ),
                    0.0,
                    report,
                )
            )
            if verdict != 0:
                report.rejected += len(batch)
                continue
            for cells in batch[: target - len(report.rows)]:
                report.rows.append(Row(cells, next_order))
                next_order += 1
        accepted = len(report.rows) - before
        report.accepted_by_model[model] += accepted
        idle = 0 if accepted else idle + 1
    return report


def with_noisy_rows(instance: Instance, rows: Sequence[Row]) -> Instance:
    """``instance`` with ``rows`` added to its noisy units."""
    return instance.model_copy(update={"noisy_units": [*instance.noisy_units, *rows]})
