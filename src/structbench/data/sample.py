"""A benchmark sample: what is asked, over which evidence, and the gold answer."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from structbench.data.evidence import Evidence


class _Gold(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class LabelGold(_Gold):
    """A class label (Yes/No/Not sure enough, supports/refutes/not enough info, True/False)."""

    kind: Literal["label"] = "label"
    label: str


class AnswerListGold(_Gold):
    """A list of acceptable answers, scored as a set (SKA-Bench)."""

    kind: Literal["answers"] = "answers"
    answers: list[str]


class TableGold(_Gold):
    """An expected relation: column names and rows (RelationalFactQA)."""

    kind: Literal["table"] = "table"
    columns: list[str]
    rows: list[list[Any]]


class TextGold(_Gold):
    """A free-form reference string (StrucText-Eval)."""

    kind: Literal["text"] = "text"
    text: str


Gold = Annotated[LabelGold | AnswerListGold | TableGold | TextGold, Field(discriminator="kind")]
"""Any gold answer; ``kind`` tells which."""


class Sample(BaseModel):
    """One evaluation item, independent of how it is prompted."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique within (benchmark, variant)."""
    benchmark: str
    variant: str
    task: str
    """The benchmark's task or challenge name, used in per-task breakdowns."""
    question: str
    """The question or claim."""
    evidence: list[Evidence] = Field(default_factory=list)
    gold: Gold
    meta: dict[str, Any] = Field(default_factory=dict)
    """Breakdown keys (difficulty, hops, depth, width, token budget, query type ...)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific payload that prompts or scorers need (SQL, few-shot examples, rule hints ...)."""
