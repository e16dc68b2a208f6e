"""Contexts already laid out (the ``contexts`` variant): evaluated as they are, never re-drawn or re-shuffled.

Use it for testbed files someone else built (the paper's released testbeds, converted to this format):
each line is one testbed sample with its knowledge units in the order the model sees them.

    {"id": "kg-17/noise/4k", "testbed": "noise", "knowledge_type": "kg",
     "question": "...", "answers": ["..."],
     "units": [["Guatemala", "location.location.containedby", "North America"], ...],
     "budget": "4k", "position": "random", "positive_units": 3}

- ``testbed``: ``noise``, ``order``, ``integration``, ``negative`` or the full names; ``answers`` is
  required except for negative rejection (whose gold is the rejection "no").
- ``units``: the knowledge base in display order, in the instance format's unit forms (``[s, r, o]`` or
  a triple object, ``{"cells": [...]}`` rows under ``header``, ``{"text": ...}`` or a bare string for a
  paragraph). Structured units are shown first and texts after them, each in the given order, as the
  paper's prompts lay them out.
- ``budget`` (``4k`` or a token count), ``position`` (default: the testbed's usual arrangement) and
  ``positive_units`` (the number of units needed; required for information integration, which is
  bucketed by it) only label the sample for the breakdowns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from structbench.benchmarks.skabench.jsonl import read_models
from structbench.benchmarks.skabench.testbeds import INTEGRATION, NEGATIVE, POSITIONS, parse_budget, resolve_testbed
from structbench.benchmarks.skabench.units import STRUCTURED, KnowledgeType, Passage, Row, Triple, Unit, is_hybrid
from structbench.core.errors import UsageError


class LaidOutContext(BaseModel):
    """One testbed sample whose knowledge base is given unit by unit, in display order."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    testbed: str
    knowledge_type: KnowledgeType
    question: str = Field(min_length=1)
    answers: list[str] = Field(default_factory=list)
    header: list[str] | None = None
    units: list[Unit] = Field(min_length=1)
    budget: int | None = None
    """Token budget the context was built for (labels only)."""
    position: str | None = None
    positive_units: int | None = Field(None, ge=1)
    """How many units the question needs (the information integration bucket)."""
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("testbed")
    @classmethod
    def _testbed(cls, value: str) -> str:
        try:
            return resolve_testbed(value)
        except UsageError as err:
            raise ValueError(str(err)) from None

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return parse_budget(value)
            except UsageError as err:
                raise ValueError(str(err)) from None
        return value

    @field_validator("answers", mode="before")
    @classmethod
    def _answers(cls, value: Any) -> Any:
        if isinstance(value, str | int | float):
            return [str(value)]
        return [str(v) for v in value] if isinstance(value, list) else value

    @field_validator("position")
    @classmethod
    def _position(cls, value: str | None) -> str | None:
        if value is not None and value not in POSITIONS:
            raise ValueError(f"unknown position {value!r}; known: {', '.join(POSITIONS)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> LaidOutContext:
        structured = STRUCTURED[self.knowledge_type]
        allowed = {structured, "text"} if is_hybrid(self.knowledge_type) else {structured}
        for i, unit in enumerate(self.units):
            if unit.kind not in allowed:
                raise ValueError(f"units[{i}]: a {unit.kind} unit cannot be part of a {self.knowledge_type} context")
            if isinstance(unit, Row) and (self.header is None or len(unit.cells) != len(self.header)):
                raise ValueError(f"units[{i}]: a row needs a header of the same width")
        if structured == "row" and self.header is None:
            raise ValueError("table contexts need a 'header'")
        if self.testbed != NEGATIVE and not self.answers:
            raise ValueError(f"answers: required for the {self.testbed} testbed")
        if self.testbed == INTEGRATION and self.positive_units is None:
            raise ValueError("positive_units: required for information integration (its bucket)")
        return self

    @property
    def structured(self) -> list[Triple | Row]:
        return [u for u in self.units if not isinstance(u, Passage)]

    @property
    def texts(self) -> list[Passage]:
        return [u for u in self.units if isinstance(u, Passage)]


def read_contexts(path: Path) -> list[LaidOutContext]:
    """All contexts in ``path``; a malformed line raises ``DataError`` naming the file, line and field."""
    return read_models(path, LaidOutContext, "context", key=lambda c: c.id)
