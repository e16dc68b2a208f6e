"""Reading against querying: a tool loop (``-s tools``) and the strategies that read the same samples, paired.

Where a run answered one benchmark variant both ways (``-s zero_shot,tools``), each reading strategy is compared
with ``tools`` on the samples both scored: the paired cluster bootstrap and randomization test of the headline
(``paired.paired_records_test``, the questions of one table resampled and swapped together), how many clusters
querying did better, as well or worse on, and what the loop did (model calls and tool calls per sample, tool errors,
samples stopped at the turn limit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from structbench.analysis.paired import Pair, StatsOptions, paired_records_test
from structbench.report.document import Section, TableBlock
from structbench.report.entries import EntryView
from structbench.report.tables import fmt
from structbench.runfiles.records import AnyRecord
from structbench.runfiles.results import turn_limit_cell

TOOLS = "tools"
"""The tool loop's strategy name in every benchmark that has one."""


def querying_section(name: str, views: Sequence[EntryView], stats: StatsOptions | None = None) -> Section | None:
    """The section for one benchmark variant; None where no run answered it both by reading and with tools."""
    stats = stats or StatsOptions()
    rows = []
    groups: dict[tuple[str, str, str], list[EntryView]] = defaultdict(list)
    for v in views:
        groups[(str(v.run), v.label, v.result.cell)].append(v)
    for group in groups.values():
        querying = next((v for v in group if v.result.strategy == TOOLS), None)
        if querying is None or querying.bench is None:
            continue
        for reading in (v for v in group if v.result.strategy != TOOLS):
            row = _row(reading, querying, stats)
            if row is not None:
                rows.append(row)
    if not rows:
        return None
    conf = f"{stats.confidence:.0%}"
    table = TableBlock(
        columns=["model", "reading", "pairs", "metric", "reading value", "querying value", "Δ", f"{conf} CI of Δ",
                 "p rand", "clusters better / same / worse", "model calls / sample", "tool calls / sample",
                 "tool errors", "at turn limit"],
        rows=rows,
        caption="Reading the data in the prompt against querying it with tools, on the same samples",
        note="Δ = querying − reading on the samples both scored; the interval and the randomization test resample "
             "and swap whole clusters (the questions of one table or database). Clusters better / same / worse: "
             "the clusters whose mean score querying raised, kept or lowered. Samples at the turn limit have no "
             "answer and are in neither column.",
    )
    return Section(f"{name} reading and querying", [table])


def _row(reading: EntryView, querying: EntryView, stats: StatsOptions) -> list[str] | None:
    a = _by_key(reading.scored_records)
    b = _by_key(querying.scored_records)
    pairs: list[Pair] = [(a[k], b[k]) for k in sorted(a) if k in b]
    bench = querying.bench
    if not pairs or bench is None:
        return None
    metric = querying.result.headline.name
    test = paired_records_test(pairs, bench, metric, stats, variant=querying.result.variant)
    better = same = worse = 0
    for x, y in _clusters(pairs).values():
        better, same, worse = better + (y > x), same + (y == x), worse + (y < x)
    model_calls = calls = errors = 0
    for r in querying.records.full():  # one full record at a time: the loop's trace is in its artifacts
        loop = r.artifacts.get("tools") or {}
        model_calls, calls, errors = model_calls + r.calls, calls + int(loop.get("calls", 0)), errors + int(
            loop.get("errors", 0))
    count = max(1, len(querying.records))
    return [
        querying.label, reading.strategy, str(len(pairs)), metric, fmt(test.a), fmt(test.b), f"{test.delta:+.4f}",
        f"[{fmt(test.ci_low)}, {fmt(test.ci_high)}]", fmt(test.p_randomization), f"{better} / {same} / {worse}",
        f"{model_calls / count:.2f}", f"{calls / count:.2f}",
        f"{errors} of {calls}" if calls else "0", turn_limit_cell(querying.result),
    ]


def _by_key(records: Sequence[AnyRecord]) -> dict[str, list[AnyRecord]]:
    """A sample's records (one per epoch) by its id."""
    out: dict[str, list[AnyRecord]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r.epoch):
        out[r.id].append(r)
    return out


def _clusters(pairs: Sequence[Pair]) -> dict[str, tuple[float, float]]:
    """Each cluster's mean score by reading and by querying (a sample without a cluster is its own)."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for x, y in pairs:
        key = next((r.cluster for r in (*x, *y) if r.cluster is not None), None) or f"sample:{x[0].id}"
        s = sums[key]
        s[0] += sum(r.score for r in x) / len(x)
        s[1] += sum(r.score for r in y) / len(y)
        s[2] += 1
    return {k: (round(s[0] / s[2], 9), round(s[1] / s[2], 9)) for k, s in sums.items()}
