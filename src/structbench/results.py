"""The results schema shared by ``metrics.json`` (runs) and ``score --out``, and how it is computed."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from structbench.benchmark import Benchmark, Scored, corrected_scored
from structbench.confusion import ConfusionMatrix

EXCLUDED = "excluded"
CORRECTED = "corrected"
"""``extra`` key of an entry scored the paper's way (bug-compatible options): structbench's corrected scoring of
the same samples, ``{"options": the options it resets, "metrics": ...}``."""
"""The key of ``extra`` that lists what a benchmark left out (``Benchmark.exclusions``)."""
TOO_LONG_MEANING = ("do not fit the model's context (the server or backend refused the prompt as too long): not "
                    "scored, left out of n and of every metric, and not sent again when the run resumes")
"""What ``ResultEntry.too_long`` counts, as reports and notes say it."""


class Headline(BaseModel):
    """The benchmark's headline metric, with its bootstrap interval where one was computed."""

    name: str
    value: float | None
    """None when no sample was scored (n = 0) or the metric applies to none of them: never an invented 0."""
    ci_low: float | None = None
    ci_high: float | None = None
    """A percentile bootstrap interval of this metric itself (``confidence``, 1,000 resamples over the
    samples, seed 0); absent when none could be computed (no value, or ``aggregate`` failed on a resample)."""
    confidence: float | None = None


class Group(BaseModel):
    """Metrics over one group of a breakdown."""

    n: int
    metrics: dict[str, float]


class ResultEntry(BaseModel):
    """Metrics of one (benchmark, variant, strategy, model)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    variant: str
    strategy: str
    model: str
    headline: Headline
    metrics: dict[str, float]
    """Every corpus-level metric, the headline included."""
    n: int
    """Number of samples scored: model errors and missing predictions included (counted as wrong), harness
    errors not (they were not scored)."""
    breakdowns: dict[str, dict[str, Group]] = Field(default_factory=dict)
    """Breakdown key (task, depth, budget ...) -> group value -> metrics over that group; a metric that does
    not apply to a group (rejection rate among answerable questions, say) is absent from it."""
    errors: int = 0
    """Samples whose model call failed for good (after retries); scored as wrong, counted in ``n``."""
    harness_errors: int = 0
    """Samples that a bug in a strategy, parser or scorer kept from being scored; in no metric and not in ``n``."""
    too_long: int = 0
    """Samples whose prompt does not fit the model's context (the server refused it as too long, or the backend
    checked): not scored, in no metric and not in ``n``, and never sent again when the run resumes."""
    reasoning_cut_off: int = 0
    """Samples left without an answer because the model's replies ran out of tokens inside their thoughts
    (reasoning models); scored as replies without an answer (wrong), counted in ``n``."""
    replies_cut_off: int = 0
    """Replies that ended inside their thought, over all samples (each self-consistency draw counts)."""
    missing: list[str] = Field(default_factory=list)
    """Ids without a prediction (``score`` only); scored as wrong."""
    confusion_matrices: dict[str, ConfusionMatrix] = Field(default_factory=dict)
    """The benchmark's confusion matrices by name (gold rows, predicted columns; rectangular allowed)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific results (per-class scores, label counts ...); ``excluded`` lists what the
    benchmark left out, as ``{"reason", "count"}`` objects."""
    baselines: dict[str, float] = Field(default_factory=dict)
    """The headline under trivial predictors on the same samples: ``chance`` (uniform random answers among the
    benchmark's options, mean of 200 seeded draws) and ``majority`` (always the most frequent gold answer);
    empty where the benchmark defines none (free-text answers)."""

    @model_validator(mode="after")
    def _no_invented_metric(self) -> ResultEntry:
        if self.n == 0 and (self.headline.value is not None or self.metrics):
            raise ValueError("a result over no scored sample has no metric values")
        return self


class MetricsFile(BaseModel):
    """The whole of ``metrics.json``."""

    results: list[ResultEntry]


def _defined(metrics: dict[str, float]) -> dict[str, float]:
    """Drop metrics that do not apply to a group (NaN), so ``metrics.json`` stays strict JSON."""
    return {k: v for k, v in metrics.items() if not math.isnan(v)}


def _group_value(s: Scored, key: str) -> str | None:
    value = s.task if key == "task" else s.meta.get(key)
    return None if value is None else str(value)


def compute_result(
    bench: Benchmark,
    variant: str,
    strategy: str,
    model: str,
    scored: Sequence[Scored],
    *,
    errors: int = 0,
    harness_errors: int = 0,
    too_long: int = 0,
    reasoning_cut_off: int = 0,
    replies_cut_off: int = 0,
    missing: Sequence[str] = (),
    interval: bool = True,
) -> ResultEntry:
    """Aggregate ``scored`` overall and per breakdown group; with nothing scored, no metric at all."""
    metrics = _defined(bench.aggregate(scored)) if scored else {}
    breakdowns: dict[str, dict[str, Group]] = {}
    for key in bench.breakdown_keys:
        groups: dict[str, list[Scored]] = defaultdict(list)
        for s in scored:
            value = _group_value(s, key)
            if value is not None:
                groups[value].append(s)
        if groups:
            breakdowns[key] = {
                value: Group(n=len(items), metrics=_defined(bench.aggregate(items)))
                for value, items in sorted(groups.items(), key=lambda kv: _sort_key(kv[0]))
            }
    extra = bench.extra_results(scored) if scored else {}
    excluded = bench.exclusions(scored)
    if excluded:
        extra[EXCLUDED] = [e.model_dump() for e in excluded]
    twins = [corrected_scored(s) for s in scored]
    corrected = bench.corrected()
    if corrected is not None and twins and all(t is not None for t in twins):
        reset = {k: str(getattr(corrected.options, k)) for k in bench.paper_scoring}
        extra[CORRECTED] = {"options": reset, "metrics": _defined(corrected.aggregate([t for t in twins if t]))}
    headline = _headline(bench, metrics)
    if interval and headline.value is not None:
        headline = _with_interval(headline, bench, scored)
    return ResultEntry(
        benchmark=bench.name,
        variant=variant,
        strategy=strategy,
        model=model,
        headline=headline,
        metrics=metrics,
        n=len(scored),
        breakdowns=breakdowns,
        errors=errors,
        harness_errors=harness_errors,
        too_long=too_long,
        reasoning_cut_off=reasoning_cut_off,
        replies_cut_off=replies_cut_off,
        missing=list(missing),
        confusion_matrices=bench.confusion_matrices(scored) if scored else {},
        extra=extra,
        baselines=_defined(bench.baselines(scored)) if scored else {},
    )


def _headline(bench: Benchmark, metrics: dict[str, float]) -> Headline:
    """The benchmark's headline metric; where it does not apply (rejection-only runs, say), the first metric
    of ``metric_names`` that does; where none does (nothing scored), no value."""
    for name in (bench.headline, *bench.metric_names):
        if name in metrics:
            return Headline(name=name, value=metrics[name])
    return Headline(name=bench.headline, value=None)


def _with_interval(headline: Headline, bench: Benchmark, scored: Sequence[Scored]) -> Headline:
    """``headline`` with the percentile bootstrap interval of its own metric; unchanged (no interval, never a
    substitute) when the benchmark's ``aggregate`` fails on a resample."""
    from structbench.stats.metric import metric_interval

    try:
        ci = metric_interval(scored, bench, headline.name)
    except Exception:
        return headline
    return headline.model_copy(update={"ci_low": ci.low, "ci_high": ci.high, "confidence": ci.confidence})


def _sort_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
