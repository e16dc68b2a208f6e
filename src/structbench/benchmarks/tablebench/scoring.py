"""One reply's scores: its answer read as the scorer says, then every metric TableBench reports for it.

Each sample records EM, EM within 10% and ROUGE-L of its answer (a chart: whether it passed), whether an answer
was read (Parse@1) and, where a program ran, whether it ran through (ECR@1). Its ``score`` is the refined metric
of its subtype (``taxonomy.refined_metric``); ``original`` is the paper's (ROUGE-L, a chart's pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from structbench.benchmarks.tablebench.metrics import exact_match, rouge_l, tolerant_match
from structbench.benchmarks.tablebench.parse import final_answer
from structbench.benchmarks.tablebench.program import ProgramOutcome, chart_references, chart_verdict
from structbench.benchmarks.tablebench.taxonomy import Metric, refined_metric

Scorer = Literal["structbench", "released", "paper"]


@dataclass(frozen=True)
class Reading:
    """How a scorer reads and scores replies."""

    first_answer: bool
    """The first ``Final Answer:`` line counts (the released parser), not the last."""
    released_em: bool
    """EM and EM within 10% on normalized texts, as the released ``QAMetric`` computes them."""
    output_fallback: Literal["none", "whole", "last_line"]
    """A program's printed output without ``Final Answer:``: no answer (August 2024), the whole output (the
    repository since April 2025), or its last non-empty line (structbench)."""
    fraction_pass: bool
    """The released overall Mix adds the charts' Pass@1 as a fraction to percentages (a chart counts 1/100)."""
    as_written: bool
    """The reply is read as the model wrote it, a reasoning model's inline thought included (the released parser
    read whole replies); structbench reads the answer alone."""


READINGS: dict[Scorer, Reading] = {
    "structbench": Reading(first_answer=False, released_em=False, output_fallback="last_line", fraction_pass=False,
                           as_written=False),
    "released": Reading(first_answer=True, released_em=True, output_fallback="whole", fraction_pass=True,
                        as_written=True),
    "paper": Reading(first_answer=True, released_em=True, output_fallback="none", fraction_pass=False,
                     as_written=True),
}


def program_answer(output: str, reading: Reading) -> str:
    """The answer a program printed ("" when none)."""
    if not output:
        return ""
    answer = final_answer(output, first=reading.first_answer)
    if answer or reading.output_fallback == "none":
        return answer
    if reading.output_fallback == "whole":
        return output.strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@dataclass(frozen=True)
class AnswerScores:
    """A text answer's scores."""

    score: float
    metric: Metric
    values: dict[str, float]


def text_scores(gold: str, answer: str, qtype: str, qsubtype: str, reading: Reading) -> AnswerScores:
    em = exact_match(gold, answer, released=reading.released_em)
    em10 = tolerant_match(gold, answer, error=10.0, released=reading.released_em)
    rouge = rouge_l(gold, answer)
    metric = refined_metric(qtype, qsubtype)
    score = {"EM": em, "EM_with_error_10": em10, "ROUGE-L": rouge}[metric]
    return AnswerScores(score, metric, {"em": em, "em_10": em10, "rouge_l": rouge, "original": rouge,
                                        "parsed": float(bool(answer))})


def chart_scores(gold: str, outcome: ProgramOutcome, chart_type: str | None) -> tuple[bool | None, dict[str, Any]]:
    """A chart's verdict (None: the chart test printed nothing) and its values."""
    verdict = chart_verdict(chart_references(gold), outcome.values, chart_type) if outcome.values is not None else None
    passed = float(verdict is True)
    return verdict, {"pass": passed, "original": passed, "parsed": float(verdict is not None),
                     "executed": float(outcome.ran)}
