"""A sweep's summary (``analysis.robustness``): its figures and their intervals rest on the same samples."""

from __future__ import annotations

from structbench.analysis.paired import StatsOptions
from structbench.analysis.robustness import CellRun, robustness_of
from structbench.report.markdown import robustness_grid
from structbench.report.robustness import summary_text
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import compute_result
from toybench import ToyBench


def cell_run(cell: str, right: set[int], ids: range | list[int]) -> CellRun:
    """A toy cell that answered the samples ``ids``, right on those in ``right``."""
    bench = ToyBench()
    records = [SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id=f"toy-{i}", task="t",
                            prompt="p", output="yes", parsed="yes", gold="yes" if i in right else "no",
                            score=float(i in right), cell=cell) for i in ids]
    result = compute_result(bench, "small", "direct", "m", [r.scored() for r in records], cell=cell)
    return CellRun(cell, bench, result, records)


def test_the_figures_and_their_intervals_rest_on_the_samples_every_cell_answered() -> None:
    """The reference cell is right on 20 of 40 samples; the CSV cell lost the 16 it got wrong but one (a partly
    finished cell) and is wrong on one more: 19 of its 24. On all of their samples the reference would be the worst
    cell (0.50), beside a worst-cell interval taken on the 24 shared samples, where both read about 0.8: the
    interval would exclude its own figure. On the shared samples the worst cell is the CSV one, at 19/24, inside its
    interval; each cell's row keeps its own headline."""
    right = set(range(20))
    runs = [cell_run("serialization=markdown", right, range(40)),
            cell_run("serialization=csv", right - {0}, [*range(20), *range(36, 40)])]
    s = robustness_of(runs, StatsOptions(resamples=300))
    assert s is not None and s.shared == 24
    assert s.worst == "serialization=csv" and s.score == 19 / 24 and s.best_value == 20 / 24
    for name, (low, high) in s.intervals.items():
        value = getattr(s, name)
        assert low <= value <= high, (name, value, low, high)
    assert [c.value for c in s.cells] == [0.5, 19 / 24] and [c.n for c in s.cells] == [40, 24]
    text = summary_text(s)
    assert s.fewer_shared and "These figures are on the 24 samples every cell answered (a cell holds up to 40)" in text
    assert "on 24 shared samples" in robustness_grid([s]).rows[0][6]
