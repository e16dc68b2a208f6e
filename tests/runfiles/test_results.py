"""``results``: a headline's interval, and what happens when it cannot be computed."""

from __future__ import annotations

import logging

import pytest

from structbench.benchmarks.scitab import SciTab
from structbench.contract.benchmark import Scored
from structbench.runfiles.results import Headline, with_interval


def _scored(n: int) -> list[Scored]:
    return [Scored(id=f"q{i}", task="t", parsed="supports", gold="supports" if i % 2 else "refutes",
                   score=float(i % 2)) for i in range(n)]


def test_a_headline_gets_its_bootstrap_interval() -> None:
    bench = SciTab()
    headline = with_interval(Headline(name="accuracy", value=0.5), bench, bench.variants[0], _scored(40),
                             resamples=200)
    assert headline.ci_low is not None and headline.ci_high is not None
    assert headline.ci_low <= 0.5 <= headline.ci_high and headline.resamples == 200


def test_an_aggregate_that_fails_on_a_resample_leaves_no_interval_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import structbench.stats.metric

    def failing(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(structbench.stats.metric, "metric_interval", failing)
    headline = Headline(name="accuracy", value=0.5)
    with caplog.at_level(logging.WARNING):
        assert with_interval(headline, SciTab(), "v", _scored(10)) == headline
    assert caplog.messages == ["scitab:v accuracy: no interval: aggregate() failed on a bootstrap resample "
                               "(ZeroDivisionError: division by zero)"]
