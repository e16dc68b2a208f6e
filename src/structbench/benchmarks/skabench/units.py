"""SKA-Bench instances: a question, its answers, positive and noisy knowledge units (paper section 3.2).

A knowledge unit is one KG triple, one table row (the header is kept apart and always shown) or one
text paragraph. An instance has one knowledge type: ``kg``, ``table``, ``kg+text`` or ``table+text``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

KnowledgeType = Literal["kg", "table", "kg+text", "table+text"]
KNOWLEDGE_TYPES: tuple[KnowledgeType, ...] = ("kg", "table", "kg+text", "table+text")


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


# Units are plain slotted dataclasses, not pydantic models: a knowledge base holds up to ~10^5 of them
# and the builder makes millions, so construction must be cheap. Pydantic still validates them when an
# instance is read from JSON (dataclass fields, ``kind`` as the discriminator).


@dataclass(frozen=True, slots=True)
class Triple:
    """A KG unit: (subject, relation, object)."""

    subject: str
    relation: str
    object: str
    group: str | None = None
    """Units sharing a group are drawn together as noise (a row's triples for the columns a question
    references, a row with its paragraph), so a partially shown entity never makes the answer ambiguous."""
    kind: Literal["triple"] = "triple"

    def line(self) -> str:
        return f"({self.subject}, {self.relation}, {self.object})"


@dataclass(frozen=True, slots=True)
class Row:
    """A table unit: one row's cells, aligned with the instance's header."""

    cells: tuple[str, ...]
    order: int | None = None
    """The row's position in the original table (tables keep this order); None = its listed position."""
    group: str | None = None
    kind: Literal["row"] = "row"

    def line(self) -> str:
        return "|" + "|".join(c.replace("\n", " ") for c in self.cells) + "|"


@dataclass(frozen=True, slots=True)
class Passage:
    """A text unit: one paragraph."""

    text: str
    group: str | None = None
    kind: Literal["text"] = "text"

    def line(self) -> str:
        return self.text


def _coerce_unit(value: Any) -> Any:
    """Short JSONL forms: ``[s, r, o]`` is a triple, a bare string a paragraph, and objects without
    ``kind`` are told apart by their fields (``cells``, ``text``, ``subject``); cells become text."""
    if isinstance(value, Triple | Row | Passage):
        return value
    if isinstance(value, list | tuple) and len(value) == 3:
        return {"kind": "triple", "subject": _cell(value[0]), "relation": _cell(value[1]), "object": _cell(value[2])}
    if isinstance(value, str):
        return {"kind": "text", "text": value}
    if isinstance(value, dict):
        if "kind" not in value:
            for key, kind in (("cells", "row"), ("text", "text"), ("subject", "triple")):
                if key in value:
                    value = {"kind": kind, **value}
                    break
        if value.get("kind") == "row" and isinstance(value.get("cells"), list):
            value = {**value, "cells": [_cell(c) for c in value["cells"]]}
    return value


Unit = Annotated[Triple | Row | Passage, Field(discriminator="kind"), BeforeValidator(_coerce_unit)]
"""Any knowledge unit; ``kind`` tells which."""

STRUCTURED = {"kg": "triple", "table": "row", "kg+text": "triple", "table+text": "row"}
"""The structured unit kind of each knowledge type."""


def is_hybrid(knowledge_type: str) -> bool:
    return knowledge_type.endswith("+text")


class Instance(BaseModel):
    """One SKA-Bench instance (paper Fig. 3): question, answers, positive units, noisy units."""

    model_config = ConfigDict(extra="forbid")

    id: str
    knowledge_type: KnowledgeType
    question: str
    answers: list[str] = Field(min_length=1)
    """Gold answers; scored as a set."""
    header: list[str] | None = None
    """Column names (table types only); always shown above the rows."""
    positive_units: list[Unit] = Field(min_length=1)
    """The units needed to derive the answers; all of them are in every context but negative rejection's,
    and no unit outside them may let the question be answered (a negative rejection context is made of
    noisy units only)."""
    noisy_units: list[Unit] = Field(default_factory=list)
    """Every other unit of the knowledge base."""
    negative_rejection: bool = True
    """Whether the instance enters the negative rejection testbed: False when the question stays
    answerable from noisy units alone (a count, whose honest answer is then 0)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Provenance (source database, SQL, template); copied to the sample's ``extra``."""

    @field_validator("answers", mode="before")
    @classmethod
    def _answers_as_text(cls, value: Any) -> Any:
        if isinstance(value, str | int | float):
            return [_cell(value)]
        return [_cell(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _consistent(self) -> Instance:
        structured = STRUCTURED[self.knowledge_type]
        allowed = {structured, "text"} if is_hybrid(self.knowledge_type) else {structured}
        for field in ("positive_units", "noisy_units"):
            for i, unit in enumerate(getattr(self, field)):
                if unit.kind not in allowed:
                    raise ValueError(
                        f"{field}[{i}]: a {unit.kind} unit cannot be part of a {self.knowledge_type} instance"
                    )
                if isinstance(unit, Row):
                    if self.header is None:
                        raise ValueError("table instances need a 'header'")
                    if len(unit.cells) != len(self.header):
                        raise ValueError(
                            f"{field}[{i}]: {len(unit.cells)} cells for a header of {len(self.header)} columns"
                        )
        if structured == "row" and self.header is None:
            raise ValueError("table instances need a 'header'")
        self._fill_row_order()
        return self

    def _fill_row_order(self) -> None:
        """Rows without ``order`` take their place in the positive-then-noisy listing."""
        position = 0
        for field in ("positive_units", "noisy_units"):
            units = getattr(self, field)
            if any(isinstance(u, Row) and u.order is None for u in units):
                filled: list[Triple | Row | Passage] = []
                for u in units:
                    if isinstance(u, Row) and u.order is None:
                        u = replace(u, order=position)
                    filled.append(u)
                    position += isinstance(u, Row)
                setattr(self, field, filled)
            else:
                position += sum(isinstance(u, Row) for u in units)
