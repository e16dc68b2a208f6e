"""The paragraph printed after a run's table: what ran, and how to read each score against its baselines.

A bare table leaves a newcomer with ``llamacpp`` for a model and 0.40 beside baselines of 0.40 and 0.33. The
paragraph names the model and the suite, says whether each headline is above its baselines (its interval, not its
value, decides), and, when the answers are nearly all one label, says so: a score that equals a baseline because
the model always gives one answer is read differently from one that is simply low. Whatever makes an interval a
poor guide is said of every headline, with baselines or without: fewer than ``MIN_CLUSTERS`` units resampled, or an
interval of no width (every sample scored the same).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from structbench.runfiles.cells import cell_text
from structbench.runfiles.results import Headline, MetricsFile, ResultEntry, Robustness, plural
from structbench.stats.paired import MIN_CLUSTERS

DEGENERATE = 0.8
"""Share of the answers that one label must reach to be called out (with at least ``MIN_ANSWERS`` answers), when it
is also given that much more often than it is the gold (by ``1 - DEGENERATE`` of the answers): a model that answers
as the gold is distributed (the oracle, on a test set whose gold is mostly one label) is not answering one label."""
MIN_ANSWERS = 5

AnswerKey = tuple[str, str, str, str]
"""(benchmark, variant, strategy, sweep cell)."""


def answer_counts(records: Iterable[Any]) -> dict[AnswerKey, tuple[Counter[str], Counter[str]]]:
    """Per entry, how often each label was answered and is the gold, over the scored records whose gold is a label
    (``RecordSummary`` or ``SampleRecord``); an unparsed answer counts as ``(none)``."""
    out: dict[AnswerKey, tuple[Counter[str], Counter[str]]] = {}
    for r in records:
        if not r.counted or not isinstance(r.gold, str):
            continue
        parsed, gold = out.setdefault((r.benchmark, r.variant, r.strategy, r.cell), (Counter(), Counter()))
        parsed[r.parsed if isinstance(r.parsed, str) else "(none)"] += 1
        gold[r.gold] += 1
    return out


def _num(value: float) -> str:
    return f"{value:.4f}"


def reading(r: ResultEntry, answers: tuple[Counter[str], Counter[str]] | None) -> str:
    """How to read one entry's headline, in a sentence or two ('' when nothing applies): against its baselines, and
    whatever makes its interval a poor guide (too few units, no width), with or without baselines."""
    h = r.headline
    if h.value is None:
        return ""
    notes = [n for n in (_few_units(h), _no_width(h)) if n]
    if not r.baselines:
        return " ".join([f"{h.name} {_num(h.value)}{_interval(h)}.", *notes]) if notes else ""
    return " ".join([_against(r), *notes, _one_answer(answers)]).strip()


def _interval(h: Headline) -> str:
    return f" [{_num(h.ci_low)}, {_num(h.ci_high)}]" if h.ci_low is not None and h.ci_high is not None else ""


def _against(r: ResultEntry) -> str:
    """The headline against the best of its baselines: its interval, not its value, decides."""
    h = r.headline
    assert h.value is not None
    name, best = max(r.baselines.items(), key=lambda kv: kv[1])
    value = f"{h.name} {_num(h.value)}{_interval(h)}"
    if h.ci_low is None or h.ci_high is None:
        side = "above" if h.value > best else "not above"
        return f"{value} is {side} the {name} baseline ({_num(best)}); there is no interval to judge it by."
    if h.ci_low > best:
        return f"{value} is above every baseline (the {name} baseline is {_num(best)})."
    inside = [f"{n} {_num(b)}" for n, b in r.baselines.items() if h.ci_low <= b <= h.ci_high]
    if inside:
        several = len(inside) > 1
        return (f"{value} cannot be told apart from the {' and '.join(inside)} baseline{'s' if several else ''}: "
                f"the interval contains {'them' if several else 'it'}.")
    return f"{value} is below the {name} baseline ({_num(best)})."


def _few_units(h: Headline) -> str:
    """The interval resamples fewer than ``MIN_CLUSTERS`` units (clusters, or samples where there are none)."""
    if h.ci_low is None or h.clusters is None or h.unit is None or h.clusters >= MIN_CLUSTERS:
        return ""
    return (f"The interval resamples only {h.clusters} {plural(h.unit, h.clusters)} (fewer than {MIN_CLUSTERS}): "
            "too few for a bootstrap to be trusted, so read it as a rough guide.")


def _no_width(h: Headline) -> str:
    """The interval is a point: every resample scored the same (every sample right, or every one wrong), which says
    nothing about how far the score could move (``docs/usage/statistics.md``: near 0 or 1)."""
    if h.ci_low is None or h.ci_high is None or h.ci_low != h.ci_high:
        return ""
    return ("The interval has no width: every resample scored the same (as when every sample is right, or every one "
            "wrong), so the bootstrap cannot say how far the score could move.")


def _one_answer(answers: tuple[Counter[str], Counter[str]] | None) -> str:
    """Said when the model gave one label for nearly every sample, far more often than it is the gold."""
    if answers is None:
        return ""
    parsed, gold = answers
    total = sum(parsed.values())
    label, count = parsed.most_common(1)[0] if parsed else ("", 0)
    if total >= MIN_ANSWERS and count >= DEGENERATE * total and count - gold[label] >= (1 - DEGENERATE) * total:
        golds = ", ".join(f"{g} {c}" for g, c in gold.most_common())
        return (f"The model answered {label} in {count} of {total} samples (gold: {golds}), so the score mostly "
                "reflects that one answer.")
    return ""


def run_summary(model: str, suite: str, metrics: MetricsFile,
                answers: dict[AnswerKey, tuple[Counter[str], Counter[str]]], width: int = 100) -> str:
    """The paragraph: ``What ran: MODEL on SUITE.`` then one reading per entry that has something to say (of a
    sweep, the reference cell's), and a sentence on each sweep's cells."""
    parts = [f"What ran: {model}, on {suite}."]
    references = {(s.benchmark, s.variant, s.strategy, s.model): s.reference for s in metrics.robustness}
    shown = [r for r in metrics.results if references.get((r.benchmark, r.variant, r.strategy, r.model), r.cell)
             == r.cell]
    many = len(shown) > 1
    for r in shown:
        text = reading(r, answers.get((r.benchmark, r.variant, r.strategy, r.cell)))
        if text:
            where = f" [{cell_text(r.cell)}]" if r.cell else ""
            parts.append(f"{r.benchmark}:{r.variant}/{r.strategy}{where}: {text}" if many or r.cell else text)
    parts += [sweep_reading(s) for s in metrics.robustness]
    return textwrap.fill(" ".join(parts), width=width, break_long_words=False, break_on_hyphens=False)


def sweep_reading(s: Robustness) -> str:
    """A sweep in a sentence: the range of the headline over its cells, and how many differ from the reference."""
    if s.score is None:
        return f"{s.benchmark}:{s.variant}/{s.strategy}: no cell of the sweep has a {s.metric}."
    tested = sum(c.p_adjusted is not None for c in s.cells)
    score = s.intervals.get("score")
    interval = f", interval {_num(score[0])} to {_num(score[1])} for picking the worst of them" if score else ""
    drop = ""
    if s.drop is not None and s.drop_significant is not None:
        drop = (f" The drop from the reference to the worst cell ({_num(s.drop)}) is "
                f"{'more' if s.drop_significant else 'no more'} than picking the worst cell explains "
                f"(p = {_num(s.p_drop or 0.0)}).")
    shared = f" on the {s.shared} samples every cell answered" if s.fewer_shared else ""
    return (f"Across the {len(s.cells)} cells of the sweep, {s.benchmark}:{s.variant}/{s.strategy} {s.metric}{shared} "
            f"ranges from {_num(s.score)} ({s.shown(s.worst)}: the robustness score{interval}) to "
            f"{_num(s.best_value or 0.0)} ({s.shown(s.best)}); {s.significant} of {tested} cells differ from the "
            f"reference ({s.shown(s.reference)}) after the {'Holm' if s.correction == 'holm' else 'Benjamini-Hochberg'}"
            f" correction at {s.alpha:g}.{drop}")


def suite_text(entries: Sequence[tuple[str, str, str, Sequence[str], int]]) -> str:
    """``StructFact (structfact:generated, strategy few_shot, 30 samples); ...`` from (title, bench, variant,
    strategies, samples) per selected benchmark variant."""
    return "; ".join(
        f"{title} ({bench}:{variant}, {'strategy' if len(strategies) == 1 else 'strategies'} {', '.join(strategies)}, "
        f"{n} samples)"
        for title, bench, variant, strategies, n in entries
    )
