"""Accuracy, the share of failed programs, and the majority baseline."""

from __future__ import annotations

from structbench.benchmarks.databench import DataBench
from structbench.contract.benchmark import Scored


def _scored(i: int, task: str, gold: str, score: float, **values: float) -> Scored:
    return Scored(id=str(i), task=task, parsed=None, gold=gold, score=score, values=values)


def test_accuracy_and_program_errors() -> None:
    scored = [_scored(0, "number", "3", 1.0, program_ok=1.0), _scored(1, "number", "4", 0.0, program_ok=0.0),
              _scored(2, "boolean", "True", 1.0, program_ok=1.0), _scored(3, "boolean", "False", 0.0, program_ok=1.0)]
    assert DataBench().aggregate(scored) == {"accuracy": 0.5, "program_error_rate": 0.25}
    assert DataBench().aggregate([*scored[:1], _scored(9, "number", "3", 1.0)])["accuracy"] == 1.0


def test_the_majority_baseline_answers_each_type_with_its_most_frequent_gold() -> None:
    scored = [_scored(0, "boolean", "True", 0), _scored(1, "boolean", "True", 0), _scored(2, "boolean", "False", 0),
              _scored(3, "number", "12.5", 0), _scored(4, "number", "12.509", 0), _scored(5, "number", "7", 0),
              _scored(6, "category", "North", 0), _scored(7, "category", "South", 0)]
    # True answers 2 of 3 booleans; 12.5 answers both 12.5 and 12.509 (two decimals, truncated); North 1 of 2
    assert DataBench().baselines(scored) == {"majority": 5 / 8}
    assert DataBench().baselines([]) == {}
