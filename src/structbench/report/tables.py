"""Paper-style tables built from result entries: models x strategies, all metrics, per breakdown group."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from structbench.backends.usage import totals_cell
from structbench.report.document import TableBlock
from structbench.report.entries import EntryView
from structbench.report.markdown import CUT_OFF, TOKENS, TURN_LIMIT, any_cut_off, any_usage
from structbench.runfiles.results import (
    EXCLUDED,
    TOO_LONG_MEANING,
    at_turn_limit,
    plural,
    turn_limit_cell,
)
from structbench.stats import Interval
from structbench.stats.confusion import ConfusionMatrix

MAX_GROUP_COLUMNS = 10
"""Breakdowns with more groups than this are laid out with groups as rows."""
MAX_LABELS = 15
"""Parsed answers with more distinct values than this are not treated as labels."""
NONE_LABEL = "(none)"


_NUM = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\s*[kKmM]?"
_NUMBER = re.compile(rf"^\s*({_NUM})\s*$")
_RANGE = re.compile(rf"^\s*({_NUM})\s*(?:-|–|\.\.|to)\s*{_NUM}\s*$")
_ABOVE = re.compile(rf"^\s*(?:>=?\s*({_NUM})|({_NUM})\s*\+)\s*$")
_BELOW = re.compile(rf"^\s*<=?\s*({_NUM})\s*$")
_SCALE = {"k": 1e3, "m": 1e6}


def _number(text: str) -> float:
    text = text.strip()
    scale = _SCALE.get(text[-1].lower(), 1.0)
    return float(text.rstrip("kKmM").strip()) * scale


def numeric_value(value: str) -> float | None:
    """A group value as a number: ``"3"``, ``"0.5"``, and token budgets like ``"4k"`` (4000); else None."""
    m = _NUMBER.match(value)
    if m is None:
        return None
    number = _number(m.group(1))
    return number if math.isfinite(number) else None


def _bin_position(value: str) -> float | None:
    """Where a bin label sits on the number line: ``"2-10"`` at 2, ``">500"`` and ``"4+"`` just past the
    bound, ``"<5"`` just before it."""
    if m := _RANGE.match(value):
        return _number(m.group(1))
    if m := _ABOVE.match(value):
        return _number(m.group(1) or m.group(2)) + 0.5
    if m := _BELOW.match(value):
        return _number(m.group(1)) - 0.5
    return None


def group_order(value: str) -> tuple[int, float, str]:
    """Numbers (``4k`` included) and numeric bins (``2-10``, ``>500``) in numeric order, then the rest
    alphabetically."""
    number = numeric_value(value)
    if number is None:
        number = _bin_position(value)
    return (1, 0.0, value) if number is None or not math.isfinite(number) else (0, number, value)


def fmt(value: float | None) -> str:
    """Four decimals, or a dash for a missing or undefined value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.4f}"


def fmt_headline(view: EntryView) -> str:
    """``value [low, high]`` for the headline metric; ``value (no CI)`` where there is no interval (the notes
    say why), ``–`` where nothing was scored."""
    value = fmt(view.result.headline.value)
    if view.result.headline.value is None:
        return value
    if view.interval is None:
        return f"{value} (no CI)"
    return f"{value} [{fmt(view.interval.low)}, {fmt(view.interval.high)}]"


def unique(items: Iterable[str]) -> list[str]:
    """Distinct items in order of first appearance."""
    return list(dict.fromkeys(items))


def _best_per_column(values: list[list[float | None]]) -> set[tuple[int, int]]:
    """Cells holding the maximum of their column, when the column has at least two values."""
    bold: set[tuple[int, int]] = set()
    for j in range(len(values[0]) if values else 0):
        col = [(i, x) for i, row in enumerate(values) if (x := row[j]) is not None and not math.isnan(x)]
        if len(col) < 2:
            continue
        top = max(v for _, v in col)
        bold |= {(i, j) for i, v in col if v == top}
    return bold


def headline_pivot(views: Sequence[EntryView]) -> TableBlock:
    """Rows = models, columns = strategies (a sweep's cells among them); cells = headline with its bootstrap CI (best
    per column bold). With more than ``MAX_GROUP_COLUMNS`` strategies (a sweep's grid), they are the rows."""
    models = unique(v.label for v in views)
    strategies = unique(v.strategy for v in views)
    cell = {(v.label, v.strategy): v for v in views}
    across = len(strategies) <= MAX_GROUP_COLUMNS
    outer, inner = (models, strategies) if across else (strategies, models)
    rows, values = [], []
    for o in outer:
        hits = [cell.get((o, i) if across else (i, o)) for i in inner]
        rows.append([o, *(fmt_headline(v) if v else "–" for v in hits)])
        values.append([v.result.headline.value if v else None for v in hits])
    bold = {(i, j + 1) for i, j in _best_per_column(values)}  # across: the best model; down: the best strategy
    h = views[0].result.headline.name
    conf = next((v.interval.confidence for v in views if v.interval), 0.95)
    units = unique(resampled_unit(v.interval) for v in views if v.interval)
    over = f" (resampling {', '.join(units)})" if units else ""
    return TableBlock(
        columns=["model", *strategies] if across else ["strategy", *models],
        rows=rows,
        caption=f"{h} by model and strategy, with {conf:.0%} bootstrap confidence intervals{over}",
        bold=bold,
    )


def resampled_unit(interval: Interval) -> str:
    """What an interval resampled, in words: ``whole tables`` (the questions of one together) or ``samples``."""
    return "samples" if interval.unit == "sample" else f"whole {plural(interval.unit, 2)}"


def resampled_text(interval: Interval | None) -> str:
    """``208 tables`` (``, 3 epochs`` with repeats): the units an interval resampled and how many."""
    if interval is None:
        return "–"
    text = f"{interval.clusters} {plural(interval.unit, interval.clusters)}"
    return text + (f", {interval.epochs} epochs" if interval.epochs > 1 else "")


def metrics_table(views: Sequence[EntryView]) -> TableBlock:
    """Rows = (model, strategy); columns = n, errors of both kinds and every metric, headline statistics last."""
    names = unique(name for v in views for name in v.result.metrics)
    cut = any_cut_off([v.result for v in views])
    rows = [
        [v.label, v.strategy, str(v.result.n), str(v.result.errors), str(v.result.harness_errors),
         *([str(v.result.reasoning_cut_off)] if cut else []), *(fmt(v.result.metrics.get(n)) for n in names)]
        for v in views
    ]
    methods = unique(v.interval.method for v in views if v.interval)
    notes = [METHOD_NOTES[m] for m in methods]
    notes += [f"{v.label} / {v.strategy}: resampling {resampled_text(v.interval)}" for v in views
              if v.interval is not None and v.interval.unit != "sample"]
    missing = [f"{v.label} / {v.strategy}: {v.no_interval}" for v in views if v.no_interval and v.result.n > 0]
    if missing:
        notes.append("no interval for " + "; ".join(missing))
    note = "Headline statistics: " + "; ".join(notes) if notes else ""
    note += (". n counts the scored samples (model errors count as wrong); harness errors are not scored"
             if any(v.result.harness_errors for v in views) else "")
    note += (f". {CUT_OFF}: samples whose replies ran out of tokens inside the model's thought (no answer; counted "
             "as wrong)" if cut else "")
    return TableBlock(columns=["model", "strategy", "n", "errors", "harness errors", *([CUT_OFF] if cut else []),
                               *names], rows=rows, caption="All metrics", note=note)


METHOD_NOTES = {
    "mean": "mean of per-sample scores, percentile bootstrap CI (SE: analytic over independent questions, else the "
            "bootstrap std)",
    "aggregate": "the metric re-computed on each bootstrap resample, percentile CI (SE = bootstrap std)",
}


def breakdown_pivot(views: Sequence[EntryView], key: str, metric: str | None = None) -> TableBlock | None:
    """The headline (or ``metric``) per group of ``key``: (model, strategy) rows, or group rows if many. When no
    group has the headline (a breakdown over samples it does not apply to), the first of the entry's metrics
    that the groups have."""
    having = [v for v in views if key in v.result.breakdowns]
    if not having:
        return None
    if metric is None:
        present = {m for v in having for group in v.result.breakdowns[key].values() for m in group.metrics}
        metric = having[0].result.headline.name
        if metric not in present:
            metric = next((m for m in having[0].result.metrics if m in present), metric)
    groups = sorted(unique(g for v in having for g in v.result.breakdowns[key]), key=group_order)
    sizes = {g: {v.result.breakdowns[key][g].n for v in having if g in v.result.breakdowns[key]} for g in groups}

    def value(v: EntryView, g: str) -> float | None:
        group = v.result.breakdowns[key].get(g)
        return None if group is None else group.metrics.get(metric)

    caption = f"{metric} by {key}"
    if len(groups) > MAX_GROUP_COLUMNS:
        cols = [f"{v.label} / {v.strategy}" for v in having]
        values = [[value(v, g) for v in having] for g in groups]
        rows = [
            [g, "/".join(str(n) for n in sorted(sizes[g])), *map(fmt, vals)]
            for g, vals in zip(groups, values, strict=True)
        ]
        best = {(i, j + 2) for i, j in _best_per_row(values)}
        return TableBlock(columns=[key, "n", *cols], rows=rows, caption=caption, bold=best)
    header = [g if len(sizes[g]) != 1 else f"{g} (n={next(iter(sizes[g]))})" for g in groups]
    values = [[value(v, g) for g in groups] for v in having]
    rows = [[v.label, v.strategy, *map(fmt, vals)] for v, vals in zip(having, values, strict=True)]
    bold = {(i, j + 2) for i, j in _best_per_column(values)}
    return TableBlock(columns=["model", "strategy", *header], rows=rows, caption=caption, bold=bold)


def _best_per_row(values: list[list[float | None]]) -> set[tuple[int, int]]:
    transposed = [list(col) for col in zip(*values, strict=True)] if values else []
    return {(i, j) for j, i in _best_per_column(transposed)}


def confusions(view: EntryView) -> list[tuple[str, ConfusionMatrix]]:
    """The entry's confusion matrices (name, matrix) in the order the benchmark gave them."""
    return list(view.result.confusion_matrices.items())


def confusion_caption(view: EntryView, name: str, cm: ConfusionMatrix) -> str:
    title = cm.title or name
    return f"Confusion matrix ({title}): {view.label} / {view.strategy}, {cm.total} samples"


def confusion_table(view: EntryView, name: str, cm: ConfusionMatrix) -> TableBlock:
    """A confusion matrix as a table: gold labels as rows, predicted labels as columns (matches in bold)."""
    rows = [[f"gold: {g}", *(str(x) for x in row)] for g, row in zip(cm.gold, cm.counts, strict=True)]
    bold = {(i, cm.predicted.index(g) + 1) for i, g in enumerate(cm.gold) if g in cm.predicted}
    return TableBlock(
        columns=["", *(f"pred: {p}" for p in cm.predicted)],
        rows=rows,
        caption=confusion_caption(view, name, cm),
        bold=bold,
    )


def exclusion_table(views: Sequence[EntryView]) -> TableBlock | None:
    """What each entry's benchmark left out (``extra["excluded"]``), with counts and reasons."""
    rows = [
        [v.label, v.strategy, str(e.get("count", "")), str(e.get("reason", ""))]
        for v in views
        for e in v.result.extra.get(EXCLUDED, [])
        if isinstance(e, dict)
    ]
    if not rows:
        return None
    return TableBlock(columns=["model", "strategy", "count", "reason"], rows=rows,
                      caption="Samples the benchmark left out, and why")


def label_of(value: Any) -> str | None:
    """A parsed answer as a label (None parses as ``(none)``); None when not a scalar (lists, tables ...)."""
    if value is None:
        return NONE_LABEL
    if isinstance(value, str | bool | int):
        return str(value)
    return None


def label_counts(views: Sequence[EntryView]) -> tuple[list[str], Counter[str], list[Counter[str]]] | None:
    """Labels, gold counts and per-entry counts of parsed answers, when the benchmark's answers are labels (it
    declares ``answer_labels``; free-text answers such as StrucText-Eval's are no distribution to chart)."""
    per_view: list[Counter[str]] = []
    if not views or not all(v.bench and v.bench.answer_labels([r.scored() for r in v.scored_records]) for v in views):
        return None
    for v in views:
        parsed = [label_of(r.parsed) for r in v.scored_records]
        if not parsed or any(lab is None for lab in parsed):
            return None
        per_view.append(Counter(lab for lab in parsed if lab is not None))
    gold: Counter[str] = Counter()
    for r in views[0].scored_records:
        g = label_of(r.gold)
        if g is None:
            return None
        gold[g] += 1
    labels = sorted(set(gold).union(*per_view), key=lambda x: (x == NONE_LABEL, x))
    if len(labels) > MAX_LABELS or not any(set(c) - {NONE_LABEL} for c in per_view):
        return None
    return labels, gold, per_view


def label_table(views: Sequence[EntryView]) -> TableBlock | None:
    """Counts of each predicted label per (model, strategy), beside the gold distribution."""
    counted = label_counts(views)
    if counted is None:
        return None
    labels, gold, per_view = counted
    rows = [[lab, str(gold[lab]), *(str(c[lab]) for c in per_view)] for lab in labels]
    return TableBlock(
        columns=["label", "gold", *(f"{v.label} / {v.strategy}" for v in views)],
        rows=rows,
        caption="Distribution of predicted labels (parsed answers)",
    )


def baselines_text(baselines: dict[str, float]) -> str:
    """``chance 0.3333, majority 0.4000``; ``–`` where the benchmark defines none (free-text answers)."""
    return ", ".join(f"{name} {fmt(value)}" for name, value in baselines.items()) or "–"


def overview_table(views: Sequence[EntryView]) -> TableBlock:
    """One row per entry: benchmark, variant, strategy, model, headline with SE and CI, n, errors of both kinds
    (prompts too long for the model and samples cut off inside the model's thought, when there are any), and the
    baselines to read the headline against; the calls' tokens and cost, where the runs kept them."""
    too_long = any(v.result.too_long for v in views)
    turns = any(at_turn_limit(v.result) for v in views)
    cut = any_cut_off([v.result for v in views])
    usage = any_usage([v.result for v in views])
    rows = []
    for v in views:
        r, iv = v.result, v.interval
        rows.append(
            [
                r.benchmark,
                r.variant,
                v.strategy,  # with the sweep cell's options in a sweep
                v.label,
                r.headline.name,
                fmt(r.headline.value),
                fmt(iv.se if iv else None),
                f"[{fmt(iv.low)}, {fmt(iv.high)}]" if iv else "–",
                resampled_text(iv),
                str(r.n),
                str(r.errors),
                str(r.harness_errors),
                *([str(r.too_long)] if too_long else []),
                *([turn_limit_cell(r)] if turns else []),
                *([str(r.reasoning_cut_off)] if cut else []),
                baselines_text(r.baselines),
                *([totals_cell(r.usage)] if usage else []),
            ]
        )
    conf = next((v.interval.confidence for v in views if v.interval), 0.95)
    return TableBlock(
        columns=["benchmark", "variant", "strategy", "model", "metric", "value", "SE", f"{conf:.0%} CI", "resampled",
                 "n", "errors", "harness errors", *(["too long"] if too_long else []),
                 *([TURN_LIMIT] if turns else []), *([CUT_OFF] if cut else []),
                 "baselines", *([TOKENS] if usage else [])],
        rows=rows,
        caption="Headline metric of every run entry",
        note="The interval resamples the benchmark's clusters (the questions of one table, database, instance or "
             "document together), then epochs; resampled: how many there were. Baselines: the headline on the same "
             "samples when every answer is drawn uniformly from the options (chance, mean of 200 seeded draws) or is "
             "the most frequent gold answer (majority); – where the answers are free text"
             + (f"; too long: samples that {TOO_LONG_MEANING}" if too_long else "")
             + (f"; {TURN_LIMIT}: samples whose tool loop reached its turn limit (--max-turns) still calling tools, "
                "in n (scored as replies without an answer) or apart (not scored, out of n: --turn-limit apart)"
                if turns else "")
             + ("; tokens, cost: prompt (in) and completion (out) tokens of the calls the run made, their cost at the "
                "run's prices (--prices), and the tokens answered from the response cache (reused, not paid again)"
                if usage else ""),
    )
