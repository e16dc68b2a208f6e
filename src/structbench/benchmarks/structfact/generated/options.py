"""Run options of the ``generated`` variant, added to StructFact's own."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from structbench.benchmarks.structfact.options import StructFactOptions

MAX_PER_TASK = 1_000_000
"""The most questions per task (five tasks): 50 times the 20,000 of the 100,000-question scale runs."""
GENERATION_OPTIONS = ("tables", "per_task", "label_mix", "questions_file")
"""The options that only ``structfact:generated`` reads."""


class GeneratedOptions(StructFactOptions):
    """StructFact's options plus those of ``structfact:generated``."""

    tables: str = "rfqa"
    """``generated``: where the tables come from, comma-separated: ``rfqa`` (or ``rfqa/<dataset>[/<db>]``),
    ``scitab``, or a CSV file or folder of CSV files."""
    per_task: int = Field(200, ge=1, le=MAX_PER_TASK)
    """``generated``: questions per task (at most ``MAX_PER_TASK``)."""
    label_mix: Literal["paper", "balanced"] = "paper"
    """``generated``: the Fact./Non-fact./NEI shares of the paper's Table 2 per task, or a third each."""
    questions_file: str | None = None
    """``generated``: a saved set (the release's JSON, written by ``python -m
    structbench.benchmarks.structfact.generated``) to run instead; every label is re-derived on loading."""
