"""A dataset's questions (``qa.parquet``) as samples: one per row, in file order.

Each row has the ``question``, its answer over the whole table (``answer``), over DataBench Lite's 20-row sample
(``sample_answer``), and its answer ``type`` (``boolean``, ``category``, ``number``, ``list[category]``,
``list[number]``); ``columns_used`` and ``column_types`` name the columns it reads. The gold answer is the variant's
answer as text: the value as the file holds it, printed (a list as ``['a', 'b']``), which is how the official
evaluator reads it. A sample keeps the row's fields as the file has them (``export`` writes ``answer``,
``sample_answer`` and ``type``).
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from structbench.benchmarks.databench.answers import SEMANTICS
from structbench.core.errors import DataError
from structbench.data.sample import Sample, TextGold

REQUIRED = ("question", "answer", "type", "sample_answer")
"""Columns every ``qa.parquet`` has; ``dataset``, ``columns_used``, ``column_types`` (and others) are kept when
present."""
GOLD_FIELD = {"databench": "answer", "lite": "sample_answer"}
"""Variant -> the column holding its gold answer."""
KEPT = ("answer", "sample_answer", "type", "columns_used", "column_types")
"""The row's fields a sample keeps (``Sample.extra``), as the file holds them."""


@dataclass(frozen=True)
class Question:
    """One row of a dataset's ``qa.parquet``."""

    dataset: str
    """The dataset folder (``001_Forbes``)."""
    row: int
    """Position in the file, from 0."""
    fields: dict[str, Any]
    """The row, as the file holds it (JSON-able)."""
    answers: dict[str, str]
    """Variant -> its gold answer as the official evaluator reads it: the file's value, printed."""

    @property
    def semantic(self) -> str:
        return str(self.fields["type"]).strip()


def _jsonable(value: Any) -> Any:
    """A Parquet value as JSON can hold it: lists kept as lists, dates and decimals as their text."""
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime.date | datetime.time | datetime.timedelta | decimal.Decimal | bytes):
        return str(value)
    return value


def read_questions(path: Path, dataset: str) -> list[Question]:
    """The questions of ``path`` (a dataset's ``qa.parquet``), each checked: a missing column or an unknown answer
    type is a ``DataError`` naming the file and row."""
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    questions = []
    for i, row in enumerate(rows):
        missing = [c for c in REQUIRED if c not in row]
        if missing:
            raise DataError(f"{path}: no column {missing[0]!r} (a DataBench qa.parquet has {', '.join(REQUIRED)})")
        fields = {str(k): _jsonable(v) for k, v in row.items()}
        semantic = str(fields["type"]).strip()
        if semantic not in SEMANTICS:
            raise DataError(f"{path}, row {i + 1}: answer type {fields['type']!r} is not one of "
                            f"{', '.join(SEMANTICS)}")
        if not str(fields["question"] or "").strip():
            raise DataError(f"{path}, row {i + 1}: empty question")
        answers = {variant: str(row[column]) for variant, column in GOLD_FIELD.items()}
        questions.append(Question(dataset=dataset, row=i, fields=fields, answers=answers))
    return questions


def to_sample(question: Question, variant: str, table: Path) -> Sample:
    """The sample asking ``question`` of ``table`` (the variant's: the whole table or the sample)."""
    return Sample(
        id=f"{question.dataset}/{question.row}",
        benchmark="databench",
        variant=variant,
        task=question.semantic,
        question=str(question.fields["question"]),
        gold=TextGold(text=question.answers[variant]),
        meta={"dataset": question.dataset},
        extra={"table": str(table), **{k: question.fields[k] for k in KEPT if k in question.fields}},
    )
