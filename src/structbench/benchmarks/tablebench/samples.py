"""From the release's lines to samples: one per question, with the four instructions that prompt for it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from structbench.benchmarks.tablebench.program import chart_references
from structbench.benchmarks.tablebench.source import (
    INSTRUCTION_FILES,
    QUESTIONS_FILE,
    Question,
    index_instructions,
    iter_lines,
    parse_line,
    read_instruction,
)
from structbench.benchmarks.tablebench.taxonomy import INSTRUCTION_TYPES, VISUALIZATION, InstructionType
from structbench.contract.benchmark import content_key
from structbench.core.errors import DataError
from structbench.data.evidence import Table
from structbench.data.sample import Sample, TextGold


def cell_text(value: Any) -> str:
    """A cell as text (an empty cell, JSON's null, as "")."""
    return "" if value is None else str(value)


def table_key(table: Mapping[str, Any]) -> str:
    """A digest naming the table: questions asked of the same table share it (their cluster)."""
    return content_key([json.dumps(table, sort_keys=True, ensure_ascii=False)])


class Release:
    """A TableBench folder laid out as the Hub repository: the questions and an index of the instruction files
    (built when it is opened, so that a malformed file fails before the run starts)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.questions = root / QUESTIONS_FILE
        self.offsets: dict[InstructionType, dict[str, int]] = {
            itype: index_instructions(root / INSTRUCTION_FILES[itype]) for itype in INSTRUCTION_TYPES
        }
        self.count = 0
        for number, _, text in iter_lines(self.questions):
            question = parse_line(self.questions, number, text, Question)
            self._check(question, number)
            self.count += 1
        if not self.count:
            raise DataError(f"{self.questions}: no questions")

    def _check(self, question: Question, number: int) -> None:
        where = f"{self.questions}:{number}"
        for itype in INSTRUCTION_TYPES:
            if question.id not in self.offsets[itype]:
                raise DataError(f"{where}: question {question.id!r} is missing from {INSTRUCTION_FILES[itype]}")
        if question.qtype == VISUALIZATION:
            try:
                chart_references(question.answer)
            except ValueError as err:
                raise DataError(f"{where}: answer: {err}") from None

    def samples(self, variant: str) -> Iterator[Sample]:
        """The questions as samples, in file order (read again, a line at a time)."""
        for number, _, text in iter_lines(self.questions):
            question = parse_line(self.questions, number, text, Question)
            yield self.sample(question, variant)

    def sample(self, question: Question, variant: str) -> Sample:
        instructions: dict[str, str] = {}
        answers: dict[str, str] = {}
        for itype in INSTRUCTION_TYPES:
            record = read_instruction(self.root / INSTRUCTION_FILES[itype], self.offsets[itype][question.id])
            instructions[itype] = record.instruction
            if record.answer != question.answer:
                answers[itype] = record.answer  # the released evaluation scores each file against its own answer
        return to_sample(question, instructions, variant, answers)


def to_sample(question: Question, instructions: Mapping[str, str], variant: str,
              answers: Mapping[str, str] | None = None) -> Sample:
    """A question as a sample: its table as evidence (and as the release stores it, for ``table.csv``), its
    instructions by type, and the answers of instruction files that differ from ``TableBench.jsonl``."""
    table = question.table.model_dump()
    meta: dict[str, Any] = {"qsubtype": question.qsubtype, "table": table_key(table)}
    if question.chart_type:
        meta["chart_type"] = question.chart_type
    extra: dict[str, Any] = {"table": table, "instructions": dict(instructions)}
    if answers:
        extra["answers"] = dict(answers)
    return Sample(
        id=question.id,
        benchmark="tablebench",
        variant=variant,
        task=question.qtype,
        question=question.question,
        evidence=[Table(header=[cell_text(c) for c in question.table.columns],
                        rows=[[cell_text(c) for c in row] for row in question.table.data])],
        gold=TextGold(text=question.answer),
        meta=meta,
        extra=extra,
    )


def gold_answer(sample: Sample, itype: InstructionType) -> str:
    """The reference the instruction type's file gives (the same in every file of the current release)."""
    answers: dict[str, str] = sample.extra.get("answers") or {}
    if itype in answers:
        return answers[itype]
    assert isinstance(sample.gold, TextGold)
    return sample.gold.text
