"""TableBench's question types (four ``qtype``, eighteen ``qsubtype``), the metric each is scored by, and the
instruction types (the four prompting methods whose instructions the release ships)."""

from __future__ import annotations

from typing import Literal

FACT_CHECKING = "FactChecking"
NUMERICAL_REASONING = "NumericalReasoning"
DATA_ANALYSIS = "DataAnalysis"
VISUALIZATION = "Visualization"

SUBTYPES: dict[str, tuple[str, ...]] = {
    FACT_CHECKING: ("MatchBased", "Multi-hop FactChecking"),
    NUMERICAL_REASONING: (
        "Aggregation", "ArithmeticCalculation", "Comparison", "Counting", "Domain-Specific",
        "Multi-hop NumericalReasoing", "Ranking", "Time-basedCalculation",
    ),
    DATA_ANALYSIS: (
        "AnomalyDetection", "CausalAnalysis", "CorrelationAnalysis", "DescriptiveAnalysis", "ImpactAnalysis",
        "StatisticalAnalysis", "TrendForecasting",
    ),
    VISUALIZATION: ("ChartGeneration",),
}
"""The release's spelling, typos included (``Multi-hop NumericalReasoing``)."""
QTYPES: tuple[str, ...] = tuple(SUBTYPES)

METRIC_KEYS: dict[str, str] = {
    FACT_CHECKING: "fact_checking",
    NUMERICAL_REASONING: "numerical_reasoning",
    DATA_ANALYSIS: "data_analysis",
    VISUALIZATION: "visualization",
}
"""Each question type's metric name in ``aggregate`` (its score over the type's samples)."""

Metric = Literal["EM", "EM_with_error_10", "ROUGE-L", "Pass@1"]
TOLERANT_SUBTYPES = frozenset({"CorrelationAnalysis", "TrendForecasting", "StatisticalAnalysis"})
"""Data-analysis subtypes scored by EM within 10% (the repository's refined metrics of April 2025)."""
EXACT_SUBTYPES = frozenset({"ImpactAnalysis"})
"""The data-analysis subtype scored by exact match; the others (description, causes, anomalies) by ROUGE-L."""

CHART_TYPES = ("line", "bar", "hbar", "pie", "area", "radar", "scatter", "waterfall")
"""The ``chart_type`` values the released chart test reads (any other draws nothing and fails)."""

InstructionType = Literal["DP", "TCoT", "SCoT", "PoT"]
INSTRUCTION_TYPES: tuple[InstructionType, ...] = ("DP", "TCoT", "SCoT", "PoT")
"""Direct prompting, textual and symbolic chain of thought, program of thought (the paper's Section 4)."""


def refined_metric(qtype: str, qsubtype: str) -> Metric:
    """The metric a question is scored by under the refined metrics (the repository's README, April 2025): EM for
    fact checking, numerical reasoning and impact analysis, EM within 10% for correlation, trend and statistical
    analysis, ROUGE-L for the other data analysis, Pass@1 for charts."""
    if qtype == VISUALIZATION:
        return "Pass@1"
    if qtype == DATA_ANALYSIS:
        if qsubtype in TOLERANT_SUBTYPES:
            return "EM_with_error_10"
        return "EM" if qsubtype in EXACT_SUBTYPES else "ROUGE-L"
    return "EM"


def original_metric(qtype: str) -> Metric:
    """The metric of the paper's table (the code of August 2024): ROUGE-L for every question but charts."""
    return "Pass@1" if qtype == VISUALIZATION else "ROUGE-L"
