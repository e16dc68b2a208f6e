"""Published results as data: one JSON file per paper table, every number with its model, setting,
metric, scale and source.

A file lists the table's columns (each with its metric and setting) and its rows (each a model, with
the numbers in column order, ``null`` where the paper prints a dash). ``PublishedTable.numbers()``
expands it into one ``PublishedNumber`` per printed number, its setting merged from the table's, the
column's and the row's.
"""

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from structbench.core.errors import DataError

Scale = Literal["percent", "fraction"]
"""How a number is printed: ``percent`` (63.62) or ``fraction`` (0.636)."""
RowKind = Literal["model", "human", "aggregate"]
"""A row of a model's results, of human performance, or computed over other rows (an Overall row)."""


class PublishedColumn(BaseModel):
    """One column of a paper table."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    key: str
    """Identifier the benchmark's mapping refers to (``zs_direct_acc``)."""
    label: str
    """The column's header as printed (``Zero-shot w/o CoT Acc.``)."""
    metric: str
    """The paper's name of the metric (a key of the table's ``metrics``)."""
    setting: dict[str, str] = Field(default_factory=dict)
    """What distinguishes the column (prompt, task, budget, ...)."""
    scale: Scale | None = None
    """Overrides the table's scale (a relative difference printed in percent in a table of fractions)."""
    decimals: int | None = None
    """Overrides the table's decimals."""


class PublishedRow(BaseModel):
    """One row of a paper table: a model's (or the humans') numbers in column order."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str
    """The model's name as the paper prints it."""
    label: str | None = None
    """The row's label when it is more than the model (``InstructGPT+CoT``, ``Qwen2-7B, Self-CoT``)."""
    group: str | None = None
    """The section of the table the row sits in (``Open Source LLMs``)."""
    params: str | None = None
    """Parameter count, where the table prints it."""
    setting: dict[str, str] = Field(default_factory=dict)
    """What distinguishes the row beyond the model (prompting method ...)."""
    kind: RowKind = "model"
    values: list[float | None]
    """The numbers in column order as printed (on the table's scale); None where the paper prints a dash."""

    @property
    def name(self) -> str:
        return self.label or self.model


class PublishedTable(BaseModel):
    """A paper's result table, transcribed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    benchmark: str
    """The structbench benchmark the table belongs to."""
    title: str
    """The benchmark's name in the paper (``StructFact``)."""
    paper: str
    """Authors and title of the paper."""
    table: str
    """The table's (or figure's) number in the paper: ``Table 1``."""
    caption: str
    scale: Scale
    decimals: int
    """Decimals the paper prints."""
    metrics: dict[str, str]
    """The paper's metric names -> what they measure."""
    setting: dict[str, str] = Field(default_factory=dict)
    """What holds for every number of the table (data, protocol, sampling ...)."""
    columns: list[PublishedColumn]
    rows: list[PublishedRow]
    notes: list[str] = Field(default_factory=list)
    """Transcription notes: reconstructions, inconsistencies of the paper, what is not marked."""

    @model_validator(mode="after")
    def _consistent(self) -> "PublishedTable":
        keys = [c.key for c in self.columns]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate column keys: {sorted(k for k in set(keys) if keys.count(k) > 1)}")
        for c in self.columns:
            if c.metric not in self.metrics:
                raise ValueError(f"column {c.key!r}: metric {c.metric!r} is not described in 'metrics'")
        names = [r.name for r in self.rows]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate rows: {sorted(n for n in set(names) if names.count(n) > 1)}")
        for i, r in enumerate(self.rows):
            if len(r.values) != len(self.columns):
                raise ValueError(f"rows[{i}] ({r.name}): {len(r.values)} values for {len(self.columns)} columns")
        return self

    @property
    def source(self) -> str:
        """``StructFact Table 1``."""
        return f"{self.title} {self.table}"

    def column(self, key: str) -> PublishedColumn:
        for c in self.columns:
            if c.key == key:
                return c
        raise KeyError(key)

    def scale_of(self, column: PublishedColumn) -> Scale:
        return column.scale or self.scale

    def decimals_of(self, column: PublishedColumn) -> int:
        return self.decimals if column.decimals is None else column.decimals

    def numbers(self) -> list["PublishedNumber"]:
        """Every printed number, with its model, setting, metric, scale and source."""
        out = []
        for row in self.rows:
            for column, value in zip(self.columns, row.values, strict=True):
                if value is None:
                    continue
                out.append(
                    PublishedNumber(
                        model=row.model,
                        row=row.name,
                        column=column.key,
                        setting={**self.setting, **row.setting, **column.setting},
                        metric=column.metric,
                        value=value,
                        scale=self.scale_of(column),
                        source=f"{self.source} ({column.label})",
                    )
                )
        return out


@dataclass(frozen=True)
class PublishedNumber:
    """One number of a paper table."""

    model: str
    row: str
    column: str
    setting: dict[str, str]
    metric: str
    value: float
    scale: Scale
    source: str


@cache
def load_published(path: Path) -> PublishedTable:
    """Read and validate a published-table file; a malformed one is a ``DataError`` naming the file and field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not JSON: {err.msg}") from err
    try:
        return PublishedTable.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'table'}: {e['msg']}" for e in err.errors())
        raise DataError(f"{path}: {problems}") from None
