"""``--epochs``: every sample answered K times with its own seed and cache entry, records keyed by epoch, metrics
averaged over epochs, and resuming that repeats nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.backends.base import Request, cache_fields
from structbench.backends.mock import MockBackend
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import Generation, RunConfig
from structbench.runner.cache import ResponseCache
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.runner.settings import RequestSettings
from structbench.runner.store import read_records
from toybench import ToyBench

assert ToyBench.name == "toy"  # importing it registers the toy benchmark


def _config(**kw: object) -> RunConfig:
    base: dict[str, object] = {"model": "mock", "benches": ["toy:small"], "limit": 12, "epochs": 3}
    base.update(kw)
    return RunConfig.model_validate(base)


def by_seed(request: Request) -> str:
    """A sampling model: its answer depends on the seed (yes on even seeds)."""
    return "yes" if (request.params.seed or 0) % 2 == 0 else "no"


def test_each_epoch_sends_its_own_seed() -> None:
    settings = RequestSettings.of(_config(seed=10))
    request = Request.chat("q", temperature=0.6)
    assert [settings.apply(request, e).params.seed for e in range(3)] == [10, 11, 12]
    pinned = RequestSettings.of(_config(generation=Generation(seed=100)))
    assert pinned.apply(request, 2).params.seed == 102  # the run's request seed is epoch 0's
    assert RequestSettings.of(_config(epochs=1)).apply(request, 0).params.seed is None  # one epoch: unchanged


def test_the_epoch_is_part_of_the_cache_key() -> None:
    backend, request = MockBackend(), Request.chat("q")
    assert cache_fields(backend, request) == cache_fields(backend, request, epoch=0)  # one-epoch keys unchanged
    assert cache_fields(backend, request, epoch=1) != cache_fields(backend, request)
    assert b'"epoch":2' in cache_fields(backend, request, epoch=2)


def test_epochs_are_records_and_metrics_average_them(tmp_path: Path) -> None:
    config = _config()
    backend = MockBackend(reply=by_seed)
    metrics = Run(tmp_path / "run", config).execute(backend, prepare(config, DataContext()), cache=None,
                                                    concurrency=4, progress=False)
    assert len(backend.calls) == 36
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    assert sorted({(r.id, r.epoch) for r in records}) == sorted({(r.id, e) for r in records for e in range(3)})
    entry = metrics.results[0]
    assert entry.n == 12 and entry.epochs is not None and entry.epochs.count == 3 and entry.epochs.outcomes == 36
    per_epoch = [sum(r.score for r in records if r.epoch == e) / 12 for e in range(3)]
    assert entry.epochs.values == pytest.approx(per_epoch)
    assert entry.headline.value == pytest.approx(sum(per_epoch) / 3)
    assert entry.epochs.agreement == 0.0  # yes, no, yes: no sample answered alike in every epoch
    assert entry.epochs.pairwise_agreement == pytest.approx(1 / 3)
    assert entry.headline.unit == "sample" and entry.headline.clusters == 12  # the toy has no clusters


def test_a_resumed_run_answers_only_missing_epochs(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    two = _config(epochs=2)
    first = MockBackend(reply=by_seed)
    Run(tmp_path / "a", two).execute(first, prepare(two, DataContext()), cache=cache, concurrency=4, progress=False)
    assert len(first.calls) == 24
    again = MockBackend(reply=by_seed)  # the same run again: every epoch is done
    Run(tmp_path / "a", two).execute(again, prepare(two, DataContext()), cache=cache, concurrency=4, progress=False)
    assert again.calls == []
    three = _config(epochs=3)  # another run: epochs 0 and 1 come from the cache, epoch 2 is new calls
    third = MockBackend(reply=by_seed)
    Run(tmp_path / "b", three).execute(third, prepare(three, DataContext()), cache=cache, concurrency=4,
                                       progress=False)
    assert len(third.calls) == 12 and {r.params.seed for r in third.calls} == {2}
