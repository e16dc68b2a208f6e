"""The runner end to end on the toy benchmark: records, metrics, resume, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.backends.base import BackendError, Request
from structbench.backends.mock import MockBackend
from structbench.backends.oracle import OracleBackend
from structbench.datasets import DataContext
from structbench.errors import UsageError
from structbench.runner.cache import ResponseCache
from structbench.runner.config import RunConfig
from structbench.runner.run import Run, prepare
from structbench.runner.store import read_records
from toybench import ToyBench


def _config(**kw: object) -> RunConfig:
    base: dict[str, object] = {"model": "mock", "benches": ["toy:small"], "limit": 20}
    base.update(kw)
    return RunConfig.model_validate(base)


def _run(tmp_path: Path, backend: object, config: RunConfig, cache: ResponseCache | None = None):
    selections = prepare(config, DataContext())
    return Run(tmp_path / "run", config).execute(
        backend, selections, cache=cache, concurrency=4, progress=False  # type: ignore[arg-type]
    )


def test_oracle_reaches_maximum_on_every_strategy(tmp_path: Path) -> None:
    metrics = _run(tmp_path, OracleBackend(), _config(model="oracle", strategies=["all"]))
    assert [r.strategy for r in metrics.results] == ["direct", "vote", "refine"]
    for r in metrics.results:
        assert r.headline.name == "accuracy"
        assert r.headline.value == 1.0
        assert r.n == 20
        assert set(r.breakdowns) == {"task", "rows"}
        assert sum(g.n for g in r.breakdowns["task"].values()) == 20


def test_run_directory_contents(tmp_path: Path) -> None:
    backend = MockBackend(default="yes")
    metrics = _run(tmp_path, backend, _config())
    run_dir = tmp_path / "run"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["config"]["benches"] == ["toy:small"]
    assert "pydantic" in manifest["packages"] and manifest["seed"] == 0
    records = list(read_records(run_dir / "samples.jsonl"))
    assert len(records) == 20
    r = records[0]
    assert r.prompt is not None and r.prompt[0]["role"] == "user"  # type: ignore[index]
    assert r.output == "yes" and r.parsed == "yes"
    on_disk = json.loads((run_dir / "metrics.json").read_text())
    assert on_disk == json.loads(metrics.model_dump_json())
    yes = sum(rec.gold == "yes" for rec in records) / 20
    assert metrics.results[0].metrics["accuracy"] == pytest.approx(yes)


def test_resume_repeats_no_completed_call(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    config = _config(strategies=["refine"])
    first = MockBackend(default="no")
    selections = prepare(config, DataContext())
    run = Run(tmp_path / "run", config)
    # A partial first session: only half of the samples.
    half = [s.__class__(s.bench, s.variant, s.samples[:10], s.strategies) for s in selections]
    run.execute(first, half, cache=cache, concurrency=3, progress=False)
    assert len(first.calls) == 20  # two turns per sample
    second = MockBackend(default="no")
    metrics = Run(tmp_path / "run", config).execute(second, selections, cache=cache, concurrency=3, progress=False)
    assert len(second.calls) == 20  # only the ten new samples
    assert metrics.results[0].n == 20
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert len(manifest["sessions"]) == 2


def test_cache_answers_repeats_across_runs(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    b1 = MockBackend(default="yes")
    _run(tmp_path / "a", b1, _config(), cache)
    b2 = MockBackend(default="yes")
    m = _run(tmp_path / "b", b2, _config(), cache)
    assert len(b1.calls) == 20 and b2.calls == []
    assert m.results[0].n == 20


def test_different_config_in_same_dir_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, MockBackend(default="yes"), _config())
    with pytest.raises(UsageError, match="different configuration"):
        Run(tmp_path / "run", _config(limit=5))


def test_backend_failure_is_recorded_and_retried_on_resume(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(request: Request) -> str:
        calls["n"] += 1
        if calls["n"] % 4 == 0:
            raise BackendError("server said no")
        return "yes"

    backend = MockBackend(reply=flaky)
    metrics = _run(tmp_path, backend, _config())
    assert metrics.results[0].errors == 5
    errored = [r for r in read_records(tmp_path / "run" / "samples.jsonl") if r.error]
    assert len(errored) == 5 and "server said no" in (errored[0].error or "")
    fixed = MockBackend(default="yes")
    metrics = _run(tmp_path, fixed, _config())
    assert len(fixed.calls) == 5
    assert metrics.results[0].errors == 0


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    _run(tmp_path, MockBackend(default="yes"), _config())
    path = tmp_path / "run" / "samples.jsonl"
    data = path.read_bytes()
    path.write_bytes(data + data.splitlines(keepends=True)[0][:40])
    backend = MockBackend(default="yes")
    metrics = _run(tmp_path, backend, _config())
    assert backend.calls == [] and metrics.results[0].n == 20
    assert path.read_bytes().endswith(b"\n")


def test_unknown_option_and_strategy_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="no selected benchmark has this option"):
        prepare(_config(options={"colour": "red"}), DataContext())
    with pytest.raises(UsageError, match="bad --option"):
        prepare(_config(options={"size": "many"}), DataContext())
    with pytest.raises(UsageError, match="no strategy"):
        prepare(_config(strategies=["telepathy"]), DataContext())
    with pytest.raises(UsageError, match="no variant"):
        prepare(_config(benches=["toy:huge"]), DataContext())
    with pytest.raises(UsageError, match="Did you mean: toy"):
        prepare(_config(benches=["tooy"]), DataContext())


def test_options_reach_only_their_benchmark() -> None:
    sel = prepare(_config(options={"toy.size": "3"}, limit=None), DataContext())
    assert len(sel[0].samples) == 3
    assert isinstance(sel[0].bench, ToyBench)


def test_max_tokens_caps_every_request(tmp_path: Path) -> None:
    backend = MockBackend(default="yes")
    _run(tmp_path, backend, _config(strategies=["refine"], max_tokens=2, limit=3))
    assert len(backend.calls) == 6
    assert {c.params.max_tokens for c in backend.calls} == {2}


def test_metrics_that_do_not_apply_are_left_out(tmp_path: Path) -> None:
    from structbench.benchmark import Scored
    from structbench.results import compute_result

    class Rejecting(ToyBench):
        def aggregate(self, scored):  # type: ignore[no-untyped-def]
            return {"accuracy": float("nan"), "yes_rate": 0.5}

    entry = compute_result(Rejecting(), "small", "direct", "m", [Scored(id="a", task="t", parsed=None, gold="no",
                                                                       score=0.0, meta={"rows": 2})])
    assert entry.headline.name == "yes_rate" and entry.metrics == {"yes_rate": 0.5}
    assert entry.breakdowns["rows"]["2"].metrics == {"yes_rate": 0.5}
    json.loads(entry.model_dump_json())  # strict JSON: no NaN


def test_one_process_at_a_time_per_run_directory(tmp_path: Path) -> None:
    import os

    from structbench.runner.run import _lock

    config = _config()
    held = _lock(tmp_path / "run")  # as another process filling the directory would
    with pytest.raises(UsageError, match="another structbench process"):
        _run(tmp_path, MockBackend(default="yes"), config)
    os.close(held)
    assert _run(tmp_path, MockBackend(default="yes"), config).results[0].n == 20


def test_resume_against_another_server_is_refused(tmp_path: Path) -> None:
    from structbench.backends.openai_compat import OpenAIBackend

    config = _config(model="openai:m")
    _run(tmp_path, MockBackend(default="yes"), config)
    other = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(UsageError, match="was run against"):
        Run(tmp_path / "run", config).execute(other, prepare(config, DataContext()), cache=None, concurrency=2,
                                              progress=False)


def test_damaged_manifest_is_a_data_error(tmp_path: Path) -> None:
    from structbench.errors import DataError

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match="not a structbench run manifest"):
        Run(tmp_path / "run", _config())


def test_repeated_benchmarks_and_strategies_run_once() -> None:
    selections = prepare(_config(benches=["toy", "toy"], strategies=["direct", "direct", ""]), DataContext())
    assert len(selections) == 1 and [s.name for s in selections[0].strategies] == ["direct"]


def test_unserializable_artifacts_do_not_abort_the_run(tmp_path: Path) -> None:
    from structbench.benchmark import Attempt

    class Odd(ToyBench):
        def score(self, sample, attempt, strategy):  # type: ignore[no-untyped-def]
            attempt.artifacts["odd"] = object()
            return super().score(sample, attempt, strategy)

    config = _config(limit=3)
    sel = prepare(config, DataContext())
    sel[0].bench = Odd()
    metrics = Run(tmp_path / "run", config).execute(MockBackend(default="yes"), sel, cache=None, concurrency=2,
                                                   progress=False)
    assert metrics.results[0].n == 3
    assert Attempt  # imported for the type only
