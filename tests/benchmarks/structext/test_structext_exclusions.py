"""Under ``empty=drop`` the empty answers the averages leave out are counted in ``extra.excluded``."""

from __future__ import annotations

from structbench.backends.base import Request
from structbench.benchmarks.structext.benchmark import StrucTextEval
from structbench.contract.benchmark import Attempt
from structbench.data.datasets import DataContext
from structbench.runfiles.results import compute_result


def test_dropped_empty_answers_are_counted() -> None:
    for empty, expected in (("drop", [{"reason": "empty answers left out of the averages (--option empty=drop)",
                                       "count": 2}]), ("zero", None)):
        bench = StrucTextEval({"empty": empty})
        samples = list(bench.load("test", DataContext(), seed=0, limit=5))
        outputs = ["", "### Answer:\n", *(bench.oracle(s, Request.chat("q")) for s in samples[2:])]
        naive = bench.strategy("naive")
        scored = [bench.score(s, Attempt(output=o), naive) for s, o in zip(samples, outputs, strict=True)]
        entry = compute_result(bench, "test", "naive", "m", scored)
        assert entry.extra.get("excluded") == expected
        assert "n_scored" not in entry.metrics  # a count, not a metric: the exclusion says it
        assert entry.metrics["rougeL"] == (1.0 if empty == "drop" else 0.6)
