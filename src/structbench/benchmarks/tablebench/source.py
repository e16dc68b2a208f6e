"""Where TableBench comes from and how its JSON-lines files are read.

The Hub repository ``Multilingual-Multimodal-NLP/TableBench`` holds ``TableBench.jsonl`` (the questions, with
their table, answer and, for charts, ``chart_type``) and one file per instruction type, ``TableBench_DP.jsonl``,
``_TCoT``, ``_SCoT`` and ``_PoT``: the same questions, each with the ``instruction`` that prompts for it. The files
are read a line at a time; a line that is not a question names the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from structbench.benchmarks.tablebench.taxonomy import INSTRUCTION_TYPES, InstructionType
from structbench.core.errors import DataError
from structbench.data.datasets import DatasetSource, RemoteFile

REPO = "Multilingual-Multimodal-NLP/TableBench"
REVISION = "main"
"""The Hub revision read: the cleaned release of 2025-04-18 and the fixes after it. The paper's numbers were
computed on the release of 2024-08-29 (revision ``PAPER_REVISION``), laid out differently."""
PAPER_REVISION = "90593ad8af90f027f6f478b8c4c1981d9f073a83"
QUESTIONS_FILE = "TableBench.jsonl"
INSTRUCTION_FILES: dict[InstructionType, str] = {t: f"TableBench_{t}.jsonl" for t in INSTRUCTION_TYPES}
HOMEPAGE = f"https://huggingface.co/datasets/{REPO}"

SOURCE = DatasetSource(
    name="tablebench",
    homepage=HOMEPAGE,
    files=tuple(
        RemoteFile(path=path, url=f"{HOMEPAGE}/resolve/{REVISION}/{path}")
        for path in (QUESTIONS_FILE, *INSTRUCTION_FILES.values())
    ),
    license="Apache-2.0",
)


class TableData(BaseModel):
    """A table as the release stores it: column names and rows of JSON values (numbers, strings, null)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    columns: list[Any]
    data: list[list[Any]]


class Question(BaseModel):
    """One question of ``TableBench.jsonl`` (``TableBench_*.jsonl`` add ``instruction`` and its type)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    qtype: str
    qsubtype: str
    table: TableData
    question: str
    answer: str
    """The reference: a short answer, a sentence, or (charts) ``y_references = [[...]]``, Python code."""
    chart_type: str | None = None

    @field_validator("table", mode="before")
    @classmethod
    def _json_table(cls, value: Any) -> Any:
        """Early releases stored the table as a JSON string."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as err:
                raise ValueError(f"not a JSON table ({err})") from None
        return value

    @field_validator("answer", mode="before")
    @classmethod
    def _text_answer(cls, value: Any) -> Any:
        """A number stored as a number is read as its JSON text."""
        return json.dumps(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class Instructed(Question):
    """One line of ``TableBench_<type>.jsonl``: a question with the instruction that prompts for it."""

    instruction: str
    instruction_type: str


def _problem(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def iter_lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text) of every non-blank line of ``path``; bytes that are not UTF-8 are a
    ``DataError`` naming the line."""
    try:
        handle = path.open("rb")
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err.strerror or err}") from err
    with handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataError(f"{path}:{number}: not UTF-8 text ({err.reason})") from None
            if text.strip():
                yield number, start, text


def parse_line(path: Path, number: int, text: str, model: type[Question]) -> Question:
    """The question on line ``number`` of ``path``; a malformed one is a ``DataError`` naming the field."""
    try:
        data = json.loads(text)
    except ValueError as err:
        raise DataError(f"{path}:{number}: not JSON ({err})") from None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise DataError(f"{path}:{number}: {_problem(err)}") from None


def read_questions(path: Path) -> Iterator[Question]:
    """The questions of ``TableBench.jsonl``, in file order."""
    for number, _, text in iter_lines(path):
        yield parse_line(path, number, text, Question)


def index_instructions(path: Path) -> dict[str, int]:
    """Byte offset of each question's line in an instruction file (read once, validated; the instructions
    themselves are read again when their question is prompted, so a run never holds them all)."""
    offsets: dict[str, int] = {}
    for number, start, text in iter_lines(path):
        record = parse_line(path, number, text, Instructed)
        if record.id in offsets:
            raise DataError(f"{path}:{number}: duplicate question id {record.id!r}")
        offsets[record.id] = start
    if not offsets:
        raise DataError(f"{path}: no questions")
    return offsets


def read_instruction(path: Path, offset: int) -> Instructed:
    """The instruction file's question at byte ``offset`` (from ``index_instructions``)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    record = parse_line(path, 0, raw.decode("utf-8"), Instructed)
    assert isinstance(record, Instructed)
    return record
