"""``compare``: system B against system A on the samples both runs share, overall and per breakdown group.

Samples pair up by (benchmark, variant, sweep cell, strategy, id) where they asked the same (prompt and gold, as
``report`` pairs them; a sample left out either way is named in a warning); ``strategy_a``/``strategy_b`` pair two
different strategies instead (e.g. ``cot`` against ``direct`` of one run), whose samples agree by their gold. Each
pair of outcome lists gets a paired bootstrap and an approximate randomization test on the benchmark's headline
metric, both by the benchmark's clusters (the questions of one table are resampled and swapped together; ``sample``
resamples questions on their own), each system's epochs averaged as its headline averages them.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from structbench.analysis.paired import Pair, RecordPair, StatsOptions, paired_records_test, scored_pairs
from structbench.contract.benchmark import Benchmark
from structbench.core.errors import UsageError
from structbench.core.mdtext import md_inline
from structbench.report.crosstab import group_value
from structbench.report.entries import signature
from structbench.report.runs import BenchmarkCache, isolation_how, isolation_of
from structbench.report.tables import fmt, group_order
from structbench.runfiles.cells import cell_text
from structbench.runfiles.records import RecordSummary
from structbench.runfiles.results import plural
from structbench.runfiles.rundir import RunFiles
from structbench.stats import PairedTest
from structbench.stats.design import SAMPLE_UNIT
from structbench.stats.metric import metric_statistic
from structbench.stats.paired import MIN_CLUSTERS

OVERALL = "overall"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Comparison:
    """One paired test: a benchmark variant and strategy pair, overall or one breakdown group."""

    benchmark: str
    variant: str
    strategy_a: str
    strategy_b: str
    metric: str
    method: str
    breakdown: str
    """``overall`` or a breakdown key."""
    group: str
    test: PairedTest
    cell: str = ""
    """The sweep cell both entries were run in (``""`` without a sweep)."""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update({k: None if isinstance(v, float) and not math.isfinite(v) else v  # undefined: JSON's null
                    for k, v in out.pop("test").items()})
        out["small"] = self.test.small  # too few units for the bootstrap p to be shown (it is kept here)
        return out


Key = tuple[str, str, str, str]
"""(benchmark, variant, strategy, sweep cell)."""


def _by_entry(run: RunFiles, strategy: str | None, prompts: bool = True
              ) -> tuple[dict[Key, dict[str, list[RecordSummary]]], dict[Key, dict[str, str]]]:
    """(benchmark, variant, strategy, cell) -> id -> its records (one per epoch), ids in sorted order, and -> id ->
    what the sample asked (``entries.signature``: its prompt's digest, unless ``prompts`` is false, and its gold); a run
    holding one sample and epoch twice (two models) is refused. Harness errors were never scored and take no part."""
    out: dict[Key, dict[str, list[RecordSummary]]] = defaultdict(dict)
    asked: dict[Key, dict[str, str]] = defaultdict(dict)
    seen: set[tuple[str, str, str, str, str, int]] = set()
    for (bench, variant, strat, _, cell), records in run.entries.items():
        if strategy is not None and strat != strategy:
            continue
        by_id = out[(bench, variant, strat, cell)]
        signatures = asked[(bench, variant, strat, cell)]
        merged = bool(by_id)  # a second model's entry of the same key
        digests = records.digests()
        for i, r in zip(records.counted_rows().tolist(), records.counted(), strict=True):  # in (id, epoch) order
            key = (bench, variant, strat, cell, r.id, r.epoch)
            if key in seen:
                raise UsageError(f"{run.path}: sample {bench}:{variant}/{strat}/{r.id} appears twice"
                                 + (f" in epoch {r.epoch}" if r.epoch else ""))
            seen.add(key)
            by_id.setdefault(r.id, []).append(r)
            signatures.setdefault(r.id, signature(digests[i] if prompts else b"", r.gold))
        if merged:
            out[(bench, variant, strat, cell)] = dict(sorted(by_id.items()))
    return out, asked


def _headline(run: RunFiles, key: Key, bench: Benchmark | None) -> tuple[str, list[str]]:
    """The headline metric and breakdown keys of an entry, from metrics.json (or the benchmark class)."""
    for e in run.metrics.results:
        if (e.benchmark, e.variant, e.strategy, e.cell) == key:
            return e.headline.name, list(e.breakdowns)
    if bench is not None:
        return bench.headline, list(bench.breakdown_keys)
    raise UsageError(f"{run.path}: no metrics for {key[0]}:{key[1]}/{key[2]}" + (f" [{key[3]}]" if key[3] else ""))


def _compare_entry(
    key: Key,
    strategy_b: str,
    pairs: list[RecordPair],
    bench: Benchmark,
    metric: str,
    breakdowns: list[str],
    stats: StatsOptions,
) -> list[Comparison]:
    """The overall test of one entry's pairs, then one test per breakdown group (each pair's outcomes made once,
    for all of them)."""
    scored = scored_pairs(pairs)
    pool = [r for x, _ in scored for r in x] + [r for _, y in scored for r in y]
    _, method = metric_statistic(pool, bench, metric)
    del pool

    def test(breakdown: str, group: str, subset: list[Pair]) -> Comparison:
        t = paired_records_test(subset, bench, metric, stats, method, key[1])
        return Comparison(key[0], key[1], key[2], strategy_b, metric, method, breakdown, group, t, key[3])

    out = [test(OVERALL, "", scored)]
    for bd in breakdowns:
        groups: dict[str, list[Pair]] = defaultdict(list)
        for (x, _), outcomes in zip(pairs, scored, strict=True):
            g = group_value(x[0], bd)
            if g is not None:
                groups[g].append(outcomes)
        out += [test(bd, g, groups[g]) for g in sorted(groups, key=group_order)]
    return out


def compare_runs(
    a: RunFiles,
    b: RunFiles,
    *,
    stats: StatsOptions,
    benches: BenchmarkCache,
    strategy_a: str | None = None,
    strategy_b: str | None = None,
) -> list[Comparison]:
    """Paired tests for every entry the two runs share, overall and per breakdown group. Entries of a benchmark
    that cannot be loaded are left out (``benches.notes`` says why): without it the headline cannot be
    recomputed on resamples, and the mean score must not stand in for it."""
    if (strategy_a is None) != (strategy_b is None):
        raise UsageError("give both --strategy-a and --strategy-b, or neither")
    prompts = strategy_a == strategy_b  # two strategies ask in their own words: their samples agree by gold
    (left, asked_a), (right, asked_b) = _by_entry(a, strategy_a, prompts), _by_entry(b, strategy_b, prompts)
    out: list[Comparison] = []
    for key, recs_a in left.items():
        key_b = (key[0], key[1], strategy_b, key[3]) if strategy_b is not None else key
        recs_b = right.get(key_b, {})
        sig_a, sig_b = asked_a[key], asked_b.get(key_b, {})
        pairs: list[RecordPair] = [(recs_a[i], recs_b[i]) for i in recs_a if i in recs_b and sig_a[i] == sig_b[i]]
        if recs_b:
            _note_unshared(key, a, b, len(recs_a), len(recs_b), len(pairs),
                           sum(i in recs_b and sig_a[i] != sig_b[i] for i in recs_a))
        if pairs:
            bench = benches.get(key[0], a.cell_options(key[0], key[3]))
            if bench is None:  # left out (``benches.notes`` says why): its headline cannot be recomputed
                continue
            metric, breakdowns = _headline(a, key, bench)
            out += _compare_entry(key, key_b[2], pairs, bench, metric, breakdowns, stats)
    if not out and benches.notes:
        raise UsageError("nothing to compare: " + "; ".join(f"{k} {why}" for k, why in benches.notes.items()))
    if not out:
        raise UsageError(
            f"{a.path} and {b.path} share no samples (pairs need the same benchmark, variant, strategy and id, and "
            "the same prompt and gold)"
        )
    return out


def _note_unshared(key: Key, a: RunFiles, b: RunFiles, n_a: int, n_b: int, shared: int, differing: int) -> None:
    """A warning where the comparison leaves samples of either run out: it is over the ``shared`` samples only."""
    if shared == n_a == n_b:
        return
    label = f"{key[0]}:{key[1]} / {key[2]}" + (f" [{cell_text(key[3])}]" if key[3] else "")
    why = (f"; {differing} share an id but not their prompt or gold (another --seed, --limit or options)"
           if differing else "")
    log.warning("warning: %s: %s holds %d samples and %s %d; compared on the %d they share%s", label, a.path, n_a,
                b.path, n_b, shared, why)


def isolation_difference(a: RunFiles, b: RunFiles) -> str | None:
    """A line saying that the runs' model-written code (tool calls, programs of thought) ran under different sandbox
    isolation (their manifests' ``sandbox.isolation``): a program one sandbox allowed the other may have refused, so
    part of Δ may be the sandbox's. None when the levels agree, or either run does not name one (it ran no such code,
    or its manifest predates the field)."""
    level_a, level_b = isolation_of(a), isolation_of(b)
    if level_a is None or level_b is None or level_a == level_b:
        return None
    return (f"the runs' model-written code ran under different sandbox isolation: A ({a.path}) {isolation_how(level_a)}"
            f", B ({b.path}) {isolation_how(level_b)}; part of Δ may be the sandbox's")


def _p(p: float, resamples: int) -> str:
    """A p-value; 0 (no resample as extreme) shows as below the test's resolution."""
    return f"<{1 / resamples:.4f}" if p == 0 else fmt(p)


def p_bootstrap_text(t: PairedTest) -> str:
    """The bootstrap p-value as shown: ``n/a`` with fewer than ``MIN_CLUSTERS`` units, where a tail probability
    of a handful of distinct resamples means nothing (``<0.001`` at n = 3 would mislead)."""
    return "n/a" if t.small else _p(t.p_bootstrap, t.resamples)


def units_text(t: PairedTest) -> str:
    """``n`` with the resampled units where those are clusters: ``1199 (208 tables)``."""
    if t.unit == SAMPLE_UNIT or not t.clusters:
        return str(t.n)
    return f"{t.n} ({t.clusters} {t.unit}{'s' if t.clusters != 1 else ''})"


def small_notes(rows: Sequence[Comparison]) -> list[str]:
    """Warnings for the comparisons resting on too few units for their p-values to mean much: each overall one,
    then the breakdown groups together."""
    notes = []
    for c in rows:
        t = c.test
        if c.breakdown == OVERALL and t.small:
            strategy = c.strategy_a if c.strategy_a == c.strategy_b else f"{c.strategy_a} vs {c.strategy_b}"
            notes.append(f"{c.benchmark}:{c.variant} {strategy}: only {t.clusters} {plural(t.unit, t.clusters)} "
                         f"(fewer than {MIN_CLUSTERS}): no p-value can go below {t.min_p:.3g}, and the bootstrap p is "
                         "not shown (n/a); read the interval of Δ")
    groups = [c for c in rows if c.breakdown != OVERALL and c.test.small]
    if groups:
        notes.append(f"{len(groups)} breakdown group comparison(s) rest on fewer than {MIN_CLUSTERS} resampled units: "
                     "their bootstrap p is n/a and their randomization p coarse")
    return notes


def comparison_markdown(rows: Sequence[Comparison], label_a: str, label_b: str, *, notes: bool = True) -> str:
    """The comparison as a Markdown table, with a warning under it where some comparisons rest on few units (unless
    ``notes`` is False: the command prints them once, on stderr). Every name in it (the runs' paths, benchmark,
    variant, sweep cell, strategy, metric, breakdown, group) is text (``core.mdtext``), never Markdown or HTML."""
    first = rows[0].test if rows else None
    conf = first.confidence if first else 0.95
    unit = "" if first is None or first.unit == SAMPLE_UNIT else f", resampling and swapping whole {first.unit}s"
    lines = [
        f"A = {md_inline(label_a)}, B = {md_inline(label_b)}; Δ = B − A; p-values: paired bootstrap and approximate "
        f"randomization ({first.resamples if first else 0} resamples, seed {first.seed if first else 0}"
        f"{md_inline(unit)})." + (" Entries of a sweep pair cell by cell." if any(c.cell for c in rows) else ""),
        "",
        f"| benchmark | strategy | metric | breakdown | group | n | A | B | Δ | {conf:.0%} CI of Δ | p boot | p rand |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in rows:
        t = c.test
        strategy = c.strategy_a if c.strategy_a == c.strategy_b else f"{c.strategy_a} vs {c.strategy_b}"
        entry = f"{c.benchmark}:{c.variant}" + (f" [{cell_text(c.cell)}]" if c.cell else "")
        cells = [entry, strategy, c.metric, c.breakdown, c.group, units_text(t)]
        lines.append(
            "| " + " | ".join(map(md_inline, cells)) + " | "
            f"{fmt(t.a)} | {fmt(t.b)} | {t.delta:+.4f} | [{fmt(t.ci_low)}, {fmt(t.ci_high)}] | "
            f"{p_bootstrap_text(t)} | {_p(t.p_randomization, t.resamples)} |"
        )
    lines += ["", *(f"Note: {md_inline(note)}." for note in small_notes(rows))] if notes and small_notes(rows) else []
    return "\n".join(lines)
