"""What each SciTab variant leaves out of its claims is counted, never dropped silently."""

from __future__ import annotations

from structbench.benchmarks.scitab.benchmark import SciTab
from structbench.data.datasets import DataContext


def test_left_out_claims_are_counted_with_their_reasons(shared_data: DataContext) -> None:
    counts = {}
    for variant, options in (("all", {}), ("2class", {}), ("all", {"keep_pool": "true"})):
        bench = SciTab(options)
        samples = bench.load(variant, shared_data, seed=0, limit=None)
        excluded = {e.reason.split(" (")[0]: e.count for e in bench.exclusions([])}
        counts[(variant, bool(options))] = excluded
        assert len(samples) + sum(excluded.values()) == 1224  # every released claim is either in or counted
    assert counts[("all", False)] == {"claims on the 5 tables held out for demonstrations": 25}
    assert counts[("2class", False)] == {"claims on the 5 tables held out for demonstrations": 25,
                                         "not-enough-info claims": 346}
    assert counts[("all", True)] == {}
