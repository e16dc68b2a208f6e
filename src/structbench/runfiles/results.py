"""The results schema shared by ``metrics.json`` (runs) and ``score --out``, and how it is computed."""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from structbench.backends.usage import UsageTotals
from structbench.contract.benchmark import Benchmark, Exclusion, Scored
from structbench.core.errors import DataError
from structbench.core.regular import read_regular
from structbench.runfiles.outcomes import Outcomes
from structbench.runfiles.runformat import FORMAT_VERSION, check_format, newer_minor
from structbench.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval
from structbench.stats.confusion import ConfusionMatrix

log = logging.getLogger(__name__)

EXCLUDED = "excluded"
"""The key of ``extra`` that lists what a benchmark left out (``Benchmark.exclusions``)."""
BUILT_TOGETHER = 20_000
"""Up to this many outcomes, ``compute_result`` builds each one's ``Scored`` once, for the whole result's ``aggregate``
and every breakdown group's (about a kilobyte each, held while the entry is computed); a larger result builds them
anew for each read (``Outcomes``), holding none."""
CORRECTED = "corrected"
"""``extra`` key of an entry scored the paper's way (bug-compatible options): structbench's corrected scoring of
the same samples, ``{"options": the options it resets, "metrics": ...}``."""
MISSING_LEFT_OUT = "samples without a prediction, left out of n and of every metric (score --missing skip)"
"""The ``excluded`` reason of ``score``'s missing predictions when they are left out rather than scored as wrong."""
TOO_LONG_MEANING = ("do not fit the model's context (the server or backend refused the prompt as too long): not "
                    "scored, left out of n and of every metric, and not sent again when the run resumes")
"""What ``ResultEntry.too_long`` counts, as reports and notes say it."""
TURN_LIMIT_MEANING = ("reached the tool loop's turn limit (--max-turns) still calling tools, with no final answer: "
                      "counted apart (--turn-limit apart, or a run of format 1.3 or earlier), not scored, left out of "
                      "n and of every metric, their traces in samples.jsonl")
"""What ``ResultEntry.turn_limit`` counts, as reports and notes say it."""
TURN_LIMIT_SCORED_MEANING = ("reached the tool loop's turn limit (--max-turns) still calling tools, with no final "
                             "answer: scored as replies without an answer, in n (--turn-limit apart leaves them out), "
                             "their traces in samples.jsonl")
"""What ``ResultEntry.turn_limit_scored`` counts, as reports and notes say it."""


def at_turn_limit(entry: ResultEntry) -> int:
    """Samples whose tool loop reached its turn limit, scored or counted apart."""
    return entry.turn_limit + entry.turn_limit_scored


def turn_limit_cell(entry: ResultEntry) -> str:
    """The report's ``at turn limit`` cell: how many, and whether they are in ``n`` (``3 in n``, ``2 apart``; ``0``)."""
    parts = [f"{entry.turn_limit_scored} in n"] if entry.turn_limit_scored else []
    if entry.turn_limit:
        parts.append(f"{entry.turn_limit} apart")
    return ", ".join(parts) or "0"


class Headline(BaseModel):
    """The benchmark's headline metric, with its bootstrap interval where one was computed: the one computation
    that ``run``, ``report`` and ``compare`` all show."""

    name: str
    value: float | None
    """None when no sample was scored (n = 0) or the metric applies to none of them: never an invented 0. With
    several epochs, the mean of the epochs' values."""
    ci_low: float | None = None
    ci_high: float | None = None
    """A percentile bootstrap interval of this metric itself (``confidence``, ``resamples`` resamples of
    ``unit``, ``seed``); absent when none could be computed (no value, or ``aggregate`` failed on a resample)."""
    confidence: float | None = None
    se: float | None = None
    """Standard error: the bootstrap std (analytic for a mean over independent questions answered once)."""
    unit: str | None = None
    """What the bootstrap resampled: the benchmark's cluster (``table``, ``database``, ``instance``, ``document``:
    the questions of one are resampled together, as they are not independent), or ``sample``."""
    clusters: int | None = None
    """How many units were resampled (e.g. 208 tables for 1,199 SciTab claims)."""
    resamples: int | None = None
    seed: int | None = None
    method: str | None = None
    """``mean`` (a mean of per-sample scores) or ``aggregate`` (the metric re-computed on every resample)."""

    def resampled(self, epochs: int = 1) -> str:
        """What the interval resampled, for tables: ``208 tables`` (``, 3 epochs`` with repeats); ``–`` for none."""
        if self.unit is None or self.clusters is None:
            return "–"
        text = f"{self.clusters} {plural(self.unit, self.clusters)}"
        return text + (f", {epochs} epochs" if epochs > 1 else "")

    def interval(self) -> Interval | None:
        """The stored interval (None when there is none)."""
        if self.value is None or self.ci_low is None or self.ci_high is None or self.unit is None:
            return None
        return Interval(self.value, self.se, self.ci_low, self.ci_high, 0, self.confidence or 0.0,
                        self.resamples or 0, self.seed or 0, self.method or "aggregate", self.unit,
                        self.clusters or 0)


class Epochs(BaseModel):
    """How the repeats of a run (``--epochs``) went."""

    count: int
    """Epochs: every sample was answered this many times, with different seeds."""
    values: list[float | None]
    """The headline of each epoch (the headline is their mean)."""
    agreement: float | None = None
    """Share of samples whose parsed answer was the same in every epoch (None: no sample has two epochs)."""
    pairwise_agreement: float | None = None
    """Mean, over samples, of the share of epoch pairs that gave the same parsed answer."""
    outcomes: int = 0
    """Sample answers scored, over all epochs."""


class Group(BaseModel):
    """Metrics over one group of a breakdown."""

    n: int
    metrics: dict[str, float]


class ResultEntry(BaseModel):
    """Metrics of one (benchmark, variant, strategy, model), in one cell of a sweep."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    variant: str
    strategy: str
    model: str
    cell: str = ""
    """The sweep's cell the entry was run in: its options, ``key=value`` pairs joined by ``;``
    (``runner.sweep``); ``""`` for a run without a sweep."""
    headline: Headline
    metrics: dict[str, float]
    """Every corpus-level metric, the headline included."""
    n: int
    """Number of samples scored: model errors and missing predictions included (counted as wrong), harness
    errors not (they were not scored). With several epochs, distinct samples (``epochs.outcomes`` counts answers)."""
    breakdowns: dict[str, dict[str, Group]] = Field(default_factory=dict)
    """Breakdown key (task, depth, budget ...) -> group value -> metrics over that group; a metric that does
    not apply to a group (rejection rate among answerable questions, say) is absent from it."""
    errors: int = 0
    """Samples whose model call failed for good (after retries); scored as wrong, counted in ``n`` (with several
    epochs: sample answers)."""
    harness_errors: int = 0
    """Samples that a bug in a strategy, parser or scorer kept from being scored; in no metric and not in ``n``
    (with several epochs: sample answers)."""
    too_long: int = 0
    """Samples whose prompt does not fit the model's context (the server refused it as too long, or the backend
    checked): not scored, in no metric and not in ``n``, and never sent again when the run resumes."""
    turn_limit: int = 0
    """Samples whose tool loop reached its turn limit (``--max-turns``) still calling tools, counted apart
    (``--turn-limit apart``, and every such sample of a run of format 1.3 or earlier): no final answer; not scored, in
    no metric and not in ``n``."""
    turn_limit_scored: int = 0
    """Samples whose tool loop reached its turn limit still calling tools, scored as replies without an answer
    (``--turn-limit wrong``, the default since format 1.4): counted in ``n``, like any reply without an answer."""
    reasoning_cut_off: int = 0
    """Samples left without an answer because the model's replies ran out of tokens inside their thoughts
    (reasoning models); scored as replies without an answer (wrong), counted in ``n``."""
    replies_cut_off: int = 0
    """Replies that ended inside their thought, over all samples (each self-consistency draw counts)."""
    replies_unclosed: int = 0
    """Of ``replies_cut_off``, those the model ended itself (``finish_reason`` ``stop``) without closing the thought:
    no budget ran out, so more ``--reasoning-budget`` would not help (format 1.4; 0 before)."""
    missing: list[str] = Field(default_factory=list)
    """Ids without a prediction (``score`` only): scored as wrong (empty replies, counted in ``n``), or left out of
    ``n`` and the metrics where ``extra.excluded`` lists them (``score --missing skip``, ``missing_left_out``)."""
    confusion_matrices: dict[str, ConfusionMatrix] = Field(default_factory=dict)
    """The benchmark's confusion matrices by name (gold rows, predicted columns; rectangular allowed)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific results (per-class scores, label counts ...); ``excluded`` lists what the
    benchmark left out, as ``{"reason", "count"}`` objects."""
    baselines: dict[str, float] = Field(default_factory=dict)
    """The headline under trivial predictors on the same samples: ``chance`` (uniform random answers among the
    benchmark's options, mean of 200 seeded draws) and ``majority`` (always the most frequent gold answer);
    empty where the benchmark defines none (free-text answers)."""
    epochs: Epochs | None = None
    """Present when samples were answered in several epochs (``--epochs``)."""
    usage: UsageTotals | None = None
    """Tokens (and cost, at the run's prices) of the entry's model calls, every sample's and epoch's, failed ones
    included; None for ``score`` and in files written before usage was kept."""

    @model_validator(mode="after")
    def _no_invented_metric(self) -> ResultEntry:
        if self.n == 0 and (self.headline.value is not None or self.metrics):
            raise ValueError("a result over no scored sample has no metric values")
        return self


class CellComparison(BaseModel):
    """One cell of a sweep: its headline with its interval, and its paired difference from the reference cell."""

    model_config = ConfigDict(extra="forbid")

    cell: str
    options: dict[str, str]
    """The cell's option values, by key."""
    n: int
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    reference: bool = False
    """The cell the others are compared with (the options' values without the sweep: the paper's)."""
    pairs: int = 0
    """Samples this cell shares with the reference cell (same id), the pairs of the test."""
    delta: float | None = None
    """This cell's headline minus the reference cell's, on the shared samples."""
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    p_bootstrap: float | None = None
    """None where fewer than ``stats.paired.MIN_CLUSTERS`` units were resampled (too coarse to report)."""
    p_randomization: float | None = None
    p_adjusted: float | None = None
    """``p_randomization`` corrected for the sweep's number of tests (``Robustness.correction``)."""
    significant: bool | None = None
    """``p_adjusted < alpha``: the cell's score differs from the reference cell's beyond chance."""


class Robustness(BaseModel):
    """How one (benchmark, variant, strategy, model) fared across the cells of a sweep (``docs/usage/robustness.md``).

    The robustness score is the worst cell's headline: what the model can be relied on to reach whichever way the
    data is written. Beside it: the spread (best minus worst) and the mean absolute deviation of the cells' headlines
    from their mean, as HELM's ToRR study reports the variability of a model across table formats. The worst of many
    noisy cells lies below their common level even for a model the cells do not affect: every figure has an interval
    from the grid resampled as a whole, and the drop from the reference cell a test against that chance."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    variant: str
    strategy: str
    model: str
    metric: str
    axes: dict[str, list[str]]
    """The swept keys, in the sweep's order, with their values: the grid's rows, columns ..."""
    reference: str
    cells: list[CellComparison]
    score: float | None
    """The worst cell's headline on the samples every cell answered (``shared``), as every figure of the summary is
    (each cell's on all of its own samples: ``cells``)."""
    worst: str | None = None
    best: str | None = None
    best_value: float | None = None
    mean: float | None = None
    spread: float | None = None
    """Best minus worst cell headline."""
    mad: float | None = None
    """Mean absolute deviation of the cells' headlines from their mean."""
    drop: float | None = None
    """The reference cell's headline minus the worst cell's."""
    intervals: dict[str, list[float]] = Field(default_factory=dict)
    """``[low, high]`` of each figure (``score``, ``best_value``, ``mean``, ``spread``, ``mad``, ``drop``): the basic
    bootstrap interval over the whole grid resampled by cluster, each figure taken in every resample (the worst
    cell's minimum over the cells), so the interval accounts for picking the worst cell (``stats.grid``), clipped to
    the figure's range and holding the figure; computed on the samples every cell answered (``shared``)."""
    p_drop: float | None = None
    """Randomization p-value of ``drop`` under the null hypothesis that the cell does not matter (the cells'
    outcomes shuffled within each cluster): how often picking the worst of these cells drops as far by chance."""
    drop_significant: bool | None = None
    """``p_drop < alpha``: the model's worst cell is worse than its reference cell beyond what picking the worst of
    so many cells explains."""
    shared: int | None = None
    """Samples every cell answered (what the figures, ``intervals`` and ``p_drop`` rest on)."""
    significant: int = 0
    """Cells whose difference from the reference is significant after the correction."""
    correction: str = "holm"
    alpha: float = 0.05
    resamples: int = 0
    seed: int = 0
    confidence: float = 0.95
    unit: str | None = None
    """What the paired tests resampled and swapped (the benchmark's cluster, or ``sample``)."""

    @property
    def fewer_shared(self) -> bool:
        """The figures rest on fewer samples than a cell holds (a cell lost some, or a sweep is not finished)."""
        return self.shared is not None and any(c.n > self.shared for c in self.cells)

    def shown(self, cell: str | None) -> str:
        """A cell's options as readers see them, in the sweep's order: ``serialization=csv, perturbation=none``."""
        from structbench.runfiles.cells import cell_text

        return cell_text(cell or "", list(self.axes))


class MetricsFile(BaseModel):
    """The whole of ``metrics.json``."""

    format_version: str = FORMAT_VERSION
    """The run files' format (``structbench.runfiles.runformat``); absent in files written before versions existed."""
    results: list[ResultEntry]
    usage: UsageTotals | None = None
    """Tokens and cost of the whole run (every entry's calls); None for ``score``."""
    prices: str | None = None
    """The prices file (or suite) the costs were computed at; None: no prices were given, costs are unknown."""
    robustness: list[Robustness] = Field(default_factory=list)
    """A sweep's cells compared, per (benchmark, variant, strategy, model) swept over two cells or more; empty
    without a sweep."""


def read_metrics(path: Path) -> MetricsFile:
    """A ``metrics.json`` (or ``score --out``) file; a damaged one, or one of a newer major format version, is a
    ``DataError`` naming the file."""
    try:
        data = json.loads(read_regular(path))  # a FIFO is refused (a DataError), not waited on
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a metrics file: {err}") from None
    found = check_format(data.get("format_version"), path)
    try:
        return MetricsFile.model_validate(data)
    except ValidationError as err:
        problem = err.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "metrics"
        newer = (f" (written in run format {data.get('format_version')}, newer than the {FORMAT_VERSION} this "
                 "structbench reads: upgrading structbench may read it)") if newer_minor(found) else ""
        raise DataError(f"{path}: not a metrics file ({where}: {problem['msg']}){newer}") from None


MASS_NOUNS = {"evidence": "evidence sets"}
"""Units whose plural is not the noun plus ``s``."""


def plural(unit: str, count: int) -> str:
    """``table`` -> ``tables``, ``evidence`` -> ``evidence sets``."""
    return unit if count == 1 else MASS_NOUNS.get(unit, unit + "s")


def _defined(metrics: dict[str, float]) -> dict[str, float]:
    """Drop metrics that do not apply to a group (NaN), so ``metrics.json`` stays strict JSON."""
    return {k: v for k, v in metrics.items() if not math.isnan(v)}


def by_epoch(scored: Sequence[Scored]) -> list[Sequence[Scored]]:
    """The outcomes of each epoch, in epoch order (one group when there is one epoch)."""
    if isinstance(scored, Outcomes):
        return list(scored.by_epoch())
    groups: dict[int, list[Scored]] = defaultdict(list)
    for s in scored:
        groups[s.epoch].append(s)
    return [groups[e] for e in sorted(groups)]


def epoch_metrics(bench: Benchmark, scored: Sequence[Scored]) -> dict[str, float]:
    """``aggregate`` over ``scored``; with several epochs, each metric's mean over the epochs where it is
    defined (undefined ones, NaN, dropped)."""
    runs = [_defined(bench.aggregate(group)) for group in by_epoch(scored)]
    if len(runs) == 1:
        return runs[0]
    names = list(dict.fromkeys(k for run in runs for k in run))
    return {k: sum(vals) / len(vals) for k in names if (vals := [run[k] for run in runs if k in run])}


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
    turn_limit: int = 0,
    turn_limit_scored: int = 0,
    reasoning_cut_off: int = 0,
    replies_cut_off: int = 0,
    replies_unclosed: int = 0,
    missing: Sequence[str] = (),
    left_out: Sequence[Exclusion] = (),
    interval: bool = True,
    cell: str = "",
) -> ResultEntry:
    """Aggregate ``scored`` overall and per breakdown group (with several epochs: each metric's mean over the
    epochs); with nothing scored, no metric at all. Confusion matrices and extra results count every answer.

    ``scored`` is read as columns (``Outcomes``: a list of ``Scored`` is turned into one), so breakdowns, epochs
    and the interval are index arrays over them; each ``aggregate`` reads its group as a sequence of ``Scored``."""
    outcomes = Outcomes.of(scored)
    built = list(outcomes) if len(outcomes) <= BUILT_TOGETHER else None
    metrics = epoch_metrics(bench, built if built is not None else outcomes) if len(outcomes) else {}
    breakdowns: dict[str, dict[str, Group]] = {}
    for key in bench.breakdown_keys:
        groups = outcomes.groups(key)
        if groups:
            breakdowns[key] = {}
            for value, rows in sorted(groups, key=lambda kv: _sort_key(kv[0])):
                items = [built[i] for i in rows.tolist()] if built is not None else outcomes.take(rows)
                n = len(np.unique(outcomes.ids[rows]))
                breakdowns[key][value] = Group(n=n, metrics=epoch_metrics(bench, items))
    extra = bench.extra_results(outcomes) if len(outcomes) else {}
    excluded = [*bench.exclusions(built if built is not None else outcomes), *left_out]  # rows built once
    if excluded:
        extra[EXCLUDED] = [e.model_dump() for e in excluded]
    twins = outcomes.corrected()
    corrected = bench.corrected()
    if corrected is not None and twins is not None:
        reset = {k: str(getattr(corrected.options, k)) for k in bench.paper.scoring}
        extra[CORRECTED] = {"options": reset, "metrics": _defined(corrected.aggregate(twins))}
    headline = _headline(bench, metrics)
    if interval and headline.value is not None:
        headline = with_interval(headline, bench, variant, outcomes)
    first = by_epoch(outcomes)[0] if len(outcomes) else []
    return ResultEntry(
        benchmark=bench.name,
        variant=variant,
        strategy=strategy,
        model=model,
        cell=cell,
        headline=headline,
        metrics=metrics,
        n=outcomes.samples(),
        breakdowns=breakdowns,
        errors=errors,
        harness_errors=harness_errors,
        too_long=too_long,
        turn_limit=turn_limit,
        turn_limit_scored=turn_limit_scored,
        reasoning_cut_off=reasoning_cut_off,
        replies_cut_off=replies_cut_off,
        replies_unclosed=replies_unclosed,
        missing=list(missing),
        confusion_matrices=bench.confusion_matrices(outcomes) if len(outcomes) else {},
        extra=extra,
        baselines=_defined(bench.baselines(first)) if first else {},
        epochs=epochs_of(bench, outcomes, headline.name),
    )


def missing_left_out(entry: ResultEntry) -> bool:
    """Whether ``entry``'s missing predictions were left out (``score --missing skip``) rather than scored as wrong."""
    return any(e.get("reason") == MISSING_LEFT_OUT for e in entry.extra.get(EXCLUDED, ()))


def epochs_of(bench: Benchmark, scored: Sequence[Scored], metric: str) -> Epochs | None:
    """Each epoch's headline and how often a sample's epochs agreed; None for a run of one epoch."""
    outcomes = Outcomes.of(scored)
    groups = outcomes.by_epoch()
    if len(groups) < 2:
        return None
    values = [_defined(bench.aggregate(g)).get(metric) for g in groups]
    _, sample = np.unique(outcomes.ids, return_inverse=True)
    order = np.lexsort((outcomes.epoch, sample.reshape(-1)))
    answers: dict[int, list[int]] = defaultdict(list)  # a sample's parsed answers as codes: equal JSON, equal code
    for k, code in zip(sample.reshape(-1)[order].tolist(), outcomes.parsed[order].tolist(), strict=True):
        answers[k].append(code)
    repeated = [a for a in answers.values() if len(a) > 1]
    same = [len(set(a)) == 1 for a in repeated]
    pairwise = [sum(x == y for x, y in combinations(a, 2)) / math.comb(len(a), 2) for a in repeated]
    return Epochs(
        count=len(groups),
        values=values,
        agreement=sum(same) / len(same) if same else None,
        pairwise_agreement=sum(pairwise) / len(pairwise) if pairwise else None,
        outcomes=len(outcomes),
    )


def _headline(bench: Benchmark, metrics: dict[str, float]) -> Headline:
    """The benchmark's headline metric; where it does not apply (rejection-only runs, say), the first metric
    of ``metric_names`` that does; where none does (nothing scored), no value."""
    for name in (bench.headline, *bench.metric_names):
        if name in metrics:
            return Headline(name=name, value=metrics[name])
    return Headline(name=bench.headline, value=None)


def with_interval(
    headline: Headline, bench: Benchmark, variant: str, scored: Sequence[Scored], *,
    confidence: float = DEFAULT_CONFIDENCE, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
) -> Headline:
    """``headline`` with the percentile bootstrap interval of its own metric, resampling the benchmark's
    clusters; unchanged (no interval, never a substitute) when the metric is undefined on every resample, or when
    the benchmark's ``aggregate`` fails on a resample: a benchmark bug that is logged as a warning naming the error,
    since the metric itself was computed and must not be lost."""
    from structbench.stats.metric import metric_interval

    options: dict[str, Any] = {"variant": variant, "confidence": confidence, "resamples": resamples, "seed": seed}
    try:
        ci = metric_interval(scored, bench, headline.name, **options)
    except Exception as err:  # the benchmark's own code on a resample: any error it raises
        log.warning("%s:%s %s: no interval: aggregate() failed on a bootstrap resample (%s: %s)",
                    bench.name, variant, headline.name, type(err).__name__, err)
        return headline
    if math.isnan(ci.low) or math.isnan(ci.high):
        return headline
    update: dict[str, Any] = {
        "ci_low": ci.low, "ci_high": ci.high, "confidence": ci.confidence, "se": ci.se, "unit": ci.unit,
        "clusters": ci.clusters, "resamples": ci.resamples, "seed": ci.seed, "method": ci.method,
    }
    return headline.model_copy(update=update)


def _sort_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
