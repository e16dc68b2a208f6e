"""The runner end to end on the toy benchmark: records, metrics, resume, errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from faults import spy_folder_syncs
from structbench.backends.base import BackendError, Request, Response
from structbench.backends.mock import MockBackend
from structbench.backends.oracle import OracleBackend
from structbench.core.errors import ExitCode, MachineError, StorageError, UsageError
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.cache import ResponseCache
from structbench.runner.run import Run
from structbench.runner.selection import StrategyName, check_qualified, prepare, strategies_for
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
    half = [s.__class__(s.bench, s.variant, list(s.samples)[:10], s.strategies) for s in selections]
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
    assert len(list(sel[0].samples)) == 3
    assert isinstance(sel[0].bench, ToyBench)


def test_max_tokens_caps_every_request(tmp_path: Path) -> None:
    backend = MockBackend(default="yes")
    _run(tmp_path, backend, _config(strategies=["refine"], max_tokens=2, limit=3))
    assert len(backend.calls) == 6
    assert {c.params.max_tokens for c in backend.calls} == {2}


def test_metrics_that_do_not_apply_are_left_out(tmp_path: Path) -> None:
    from structbench.contract.benchmark import Scored
    from structbench.runfiles.results import compute_result

    class Rejecting(ToyBench):
        def aggregate(self, scored):  # type: ignore[no-untyped-def]
            return {"accuracy": float("nan"), "yes_rate": 0.5}

    entry = compute_result(Rejecting(), "small", "direct", "m", [Scored(id="a", task="t", parsed=None, gold="no",
                                                                       score=0.0, meta={"rows": 2})])
    assert entry.headline.name == "yes_rate" and entry.metrics == {"yes_rate": 0.5}
    assert entry.breakdowns["rows"]["2"].metrics == {"yes_rate": 0.5}
    text = entry.model_dump_json()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=_no_constants)  # strict JSON: json.loads alone accepts NaN


def _no_constants(name: str) -> float:
    raise AssertionError(f"{name} in strict JSON")


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
    from structbench.core.errors import DataError

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match="not a structbench run manifest"):
        Run(tmp_path / "run", _config())


def test_repeated_benchmarks_and_strategies_run_once() -> None:
    selections = prepare(_config(benches=["toy", "toy"], strategies=["direct", "direct", ""]), DataContext())
    assert len(selections) == 1 and [s.name for s in selections[0].strategies] == ["direct"]


def test_unserializable_artifacts_do_not_abort_the_run(tmp_path: Path) -> None:
    class Odd(ToyBench):
        def score(self, sample, attempt, strategy):  # type: ignore[no-untyped-def]
            attempt.artifacts["odd"] = object()
            return super().score(sample, attempt, strategy)

    config = _config(limit=3)
    sel = prepare(config, DataContext())
    sel[0].bench = Odd()
    metrics = Run(tmp_path / "run", config).execute(MockBackend(default="yes"), sel, cache=None, concurrency=2,
                                                   progress=False)
    assert metrics.results[0].n == 3 and metrics.results[0].harness_errors == 0
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    assert [r.artifacts["odd"].startswith("<object object at") for r in records] == [True] * 3


class Buggy(ToyBench):
    """A toy whose scorer raises on every third sample, and whose ``aggregate`` reads a per-sample value (as
    StrucText-Eval's does): a record without it would crash the aggregation."""

    def score(self, sample, attempt, strategy):  # type: ignore[no-untyped-def]
        if int(sample.id.split("-")[1]) % 3 == 0:
            raise ZeroDivisionError("scorer bug")
        scored = super().score(sample, attempt, strategy)
        return scored.model_copy(update={"values": {"hit": scored.score}})

    def aggregate(self, scored):  # type: ignore[no-untyped-def]
        return {"accuracy": sum(s.values["hit"] for s in scored) / len(scored), "yes_rate": 0.0}


def _run_with(tmp_path: Path, bench: ToyBench, backend: object, **kw: object) -> tuple[Run, object]:
    config = _config(**kw)
    selections = prepare(config, DataContext())
    for sel in selections:
        sel.bench = bench
    run = Run(tmp_path / "run", config)
    metrics = run.execute(backend, selections, cache=None, concurrency=3, progress=False)  # type: ignore[arg-type]
    return run, metrics


def test_a_scorer_bug_is_a_harness_error_and_metrics_cover_the_scored_samples(tmp_path: Path) -> None:
    run, metrics = _run_with(tmp_path, Buggy(), OracleBackend(), model="oracle", limit=12)
    entry = metrics.results[0]  # type: ignore[attr-defined]
    # toy-0, toy-3, toy-6, toy-9 failed in the scorer: not scored, counted apart, out of every metric.
    assert (entry.n, entry.errors, entry.harness_errors) == (8, 0, 4)
    assert entry.headline.value == 1.0 and sum(g.n for g in entry.breakdowns["task"].values()) == 8
    records = {r.id: r for r in read_records(tmp_path / "run" / "samples.jsonl")}
    bad = records["toy-3"]
    assert bad.error_kind == "harness" and bad.error is not None
    assert bad.error.startswith("scoring failed: ZeroDivisionError: scorer bug") and "Traceback" in bad.error
    assert records["toy-4"].error is None and records["toy-4"].error_kind is None
    assert [f.where for f in run.failures] == [f"toy:small/direct/toy-{i}" for i in (0, 3, 6, 9)]
    assert {f.kind for f in run.failures} == {"harness"} and run.samples == 12
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    assert (on_disk["n"], on_disk["errors"], on_disk["harness_errors"]) == (8, 0, 4)


def test_a_strategy_bug_is_a_harness_error_never_a_wrong_answer(tmp_path: Path) -> None:
    def reply(request: Request) -> str:
        if "Does the number 1" in str(request.messages):
            raise KeyError("strategy bug")  # not a BackendError: a bug in the code around the model call
        return "yes"

    _, metrics = _run_with(tmp_path, ToyBench(), MockBackend(reply=reply))
    entry = metrics.results[0]  # type: ignore[attr-defined]
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    harness = [r for r in records if r.error_kind == "harness"]
    assert harness and all("KeyError" in (r.error or "") and r.parsed is None for r in harness)
    assert entry.harness_errors == len(harness) and entry.n == 20 - len(harness) and entry.errors == 0
    scored = [r for r in records if r.error is None]
    assert entry.metrics["accuracy"] == pytest.approx(sum(r.score for r in scored) / len(scored))


def test_a_machine_that_cannot_run_a_strategy_stops_the_run_with_no_harness_error(tmp_path: Path) -> None:
    """A ``MachineError`` (a sandbox that cannot start programs) is the same for every sample: the run stops at the
    first, which is not recorded (nor any after it), and the same run continues once the machine is fixed."""
    calls: list[str] = []

    def broken(request: Request) -> str:
        calls.append(str(request.messages))
        if len(calls) > 5:
            raise MachineError("sandbox: cannot start the interpreter /x/python: Permission denied")
        return "yes"

    with pytest.raises(MachineError, match="cannot start the interpreter") as stopped:
        _run(tmp_path, MockBackend(reply=broken), _config())
    assert stopped.value.exit_code == ExitCode.USAGE
    assert len(calls) < 12  # stopped at the first failing sample, with the slots in flight
    run_dir = tmp_path / "run"
    records = list(read_records(run_dir / "samples.jsonl"))
    assert len(records) == 5 and all(r.error is None for r in records)  # completed samples kept; none a harness error
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "cannot start the interpreter" in manifest["stop_reason"]
    metrics = _run(tmp_path, MockBackend(default="yes"), _config())
    assert metrics.results[0].n == 20 and metrics.results[0].harness_errors == 0
    assert len(list(read_records(run_dir / "samples.jsonl"))) == 20


def test_model_and_harness_errors_are_counted_apart_and_both_retried(tmp_path: Path) -> None:
    def reply(request: Request) -> str:
        text = str(request.messages)
        if "number 2" in text:
            raise BackendError("HTTP 503 after 6 retries")
        if "number 3" in text:
            raise RuntimeError("bug")
        return "yes"

    _, metrics = _run_with(tmp_path, ToyBench(), MockBackend(reply=reply))
    entry = metrics.results[0]  # type: ignore[attr-defined]
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    model = [r for r in records if r.error_kind == "model"]
    harness = [r for r in records if r.error_kind == "harness"]
    assert model and harness
    assert all(r.error == "HTTP 503 after 6 retries" and r.score == 0.0 and r.gold is not None for r in model)
    assert (entry.errors, entry.harness_errors, entry.n) == (len(model), len(harness), 20 - len(harness))
    # A model error is scored as wrong and stays in n; a harness error is in no metric.
    counted = [r for r in records if r.error_kind != "harness"]
    assert entry.metrics["accuracy"] == pytest.approx(sum(r.score for r in counted) / len(counted))
    fixed = MockBackend(default="yes")
    _, metrics = _run_with(tmp_path, ToyBench(), fixed)
    assert len(fixed.calls) == len(model) + len(harness)  # exactly the failed samples are retried
    assert metrics.results[0].errors == metrics.results[0].harness_errors == 0  # type: ignore[attr-defined]
    assert metrics.results[0].n == 20  # type: ignore[attr-defined]


def test_nothing_scored_is_no_metric_not_zero(tmp_path: Path) -> None:
    class Broken(ToyBench):
        def score(self, sample, attempt, strategy):  # type: ignore[no-untyped-def]
            raise ValueError("nothing works")

    _, metrics = _run_with(tmp_path, Broken(), MockBackend(default="yes"), limit=4)
    entry = metrics.results[0]  # type: ignore[attr-defined]
    assert entry.n == 0 and entry.harness_errors == 4
    assert entry.headline.value is None and entry.metrics == {} and entry.breakdowns == {}
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"][0]
    headline = on_disk["headline"]
    assert headline.pop("name") == "accuracy" and {"value", "ci_low", "ci_high", "unit", "clusters"} <= set(headline)
    assert all(v is None for v in headline.values())  # no value, no interval, nothing resampled


def test_a_result_over_no_sample_cannot_carry_a_metric() -> None:
    from pydantic import ValidationError

    from structbench.runfiles.results import Headline, ResultEntry

    fields = {"benchmark": "toy", "variant": "small", "strategy": "direct", "model": "m", "n": 0}
    with pytest.raises(ValidationError, match="no metric values"):
        ResultEntry(headline=Headline(name="accuracy", value=0.0), metrics={}, **fields)  # type: ignore[arg-type]
    assert ResultEntry(headline=Headline(name="accuracy", value=None), metrics={}, **fields).n == 0  # type: ignore[arg-type]


def test_limit_below_one_is_refused() -> None:
    from pydantic import ValidationError

    from structbench.runner.selection import load_samples

    for limit in (0, -3):
        with pytest.raises(UsageError, match=f"^limit={limit}: give a number of samples of at least 1"):
            load_samples(ToyBench(), "small", DataContext(), seed=0, limit=limit)
        with pytest.raises(ValidationError):  # a manifest cannot hold one either
            _config(limit=limit)


def test_a_benchmark_that_loads_no_sample_is_a_usage_error() -> None:
    from structbench.contract.benchmark import Exclusion

    class Empty(ToyBench):
        def load(self, variant, data, *, seed, limit):  # type: ignore[no-untyped-def]
            return []

        def exclusions(self, scored):  # type: ignore[no-untyped-def]
            return [Exclusion(reason="tables too small", count=7)]

    from structbench.runner.selection import load_samples

    with pytest.raises(UsageError, match=r"toy:small: no samples to evaluate \(left out: 7 tables too small\)"):
        load_samples(Empty(), "small", DataContext(), seed=0, limit=None)


def test_legacy_records_without_a_kind_read_as_model_errors() -> None:
    from structbench.runfiles.records import SampleRecord

    line = {"benchmark": "toy", "variant": "small", "strategy": "direct", "model": "m", "id": "a", "task": "t",
            "prompt": None, "output": "", "error": "timeout"}
    assert SampleRecord.model_validate(line).error_kind == "model"
    with pytest.raises(ValueError, match="error_kind is set but error is not"):
        SampleRecord.model_validate({**line, "error": None, "error_kind": "harness"})


def test_a_qualified_strategy_applies_to_its_benchmark_and_variant_only() -> None:
    names = ["cot", "skabench/zero", "structfact:generated/few", "structfact:tables/self-refine"]
    assert strategies_for("structfact", "generated", names) == ["cot", "few"]
    assert strategies_for("skabench", "kg", names) == ["cot", "zero"]
    assert StrategyName.parse("a:b/c/d") == StrategyName("d", "a", "b/c")  # the strategy follows the last slash
    check_qualified(names, [("structfact", "generated"), ("structfact", "tables"), ("skabench", "kg")])
    with pytest.raises(UsageError, match=r"^--strategy structfact:tables/self-refine: structfact:tables is not "
                                         r"part of this run \(structfact:generated, skabench:kg\)$"):
        check_qualified(names, [("structfact", "generated"), ("skabench", "kg")])


def test_a_stray_cancelled_error_is_a_harness_error_not_a_lost_sample(tmp_path: Path) -> None:
    def reply(request: Request) -> str:
        if "Does the number 1" in str(request.messages):
            raise asyncio.CancelledError()  # nobody cancelled the task: a bug below the strategy
        return "yes"

    _, metrics = _run_with(tmp_path, ToyBench(), MockBackend(reply=reply))
    entry = metrics.results[0]  # type: ignore[attr-defined]
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    harness = [r for r in records if r.error_kind == "harness"]
    assert len(records) == 20 and harness and all("CancelledError" in (r.error or "") for r in harness)
    assert entry.harness_errors == len(harness) and entry.n == 20 - len(harness)


def test_workers_that_cannot_fork_are_a_note_on_the_runs_notify(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the run's ``Notify`` (into ``evaluate``'s notes), never straight to stderr."""
    import structbench.runner.run as run_module

    monkeypatch.setattr(run_module, "can_fork", lambda: False)
    notes: list[str] = []
    assert run_module.Spread(4, None, 0).processes(10, 8, notes.append) == 1
    assert notes == ["note: workers=4: worker processes cannot be forked here (another thread is running, or not "
                     "on Linux); running in one process"]
    assert run_module.Spread(1, None, 0).processes(10, 8, notes.append) == 1 and len(notes) == 1


def test_a_session_begins_and_ends_in_the_manifest() -> None:
    from structbench.runfiles.manifest import Manifest, Session
    from structbench.runfiles.runformat import FORMAT_VERSION

    config = RunConfig(model="oracle", benches=["toy"], seed=7)
    m = Manifest(config=config, format_version="1.0", status="interrupted", stop_reason="killed")
    m.begin(Session(started="t0", jobs=3), config=config, structbench="9", backend={"backend": "oracle"},
            concurrency=2, workers=1, cache=None, platform="p", git_revision=None, model_context=None)
    assert (m.format_version, m.status, m.stop_reason, m.seed) == (FORMAT_VERSION, "running", None, 7)
    assert len(m.sessions) == 1
    m.account(None, 1.5, None, True)
    assert m.budget == {"max_cost_usd": 1.5, "max_tokens_total": None}
    m.sessions[0].end("t1", 2.5, model_calls=3, cache_hits=0, spent={"tokens": 9.0}, lost=1)
    assert m.sessions[0].model_dump(exclude_none=True) == {
        "started": "t0", "jobs": 3, "finished": "t1", "seconds": 2.5, "model_calls": 3, "cache_hits": 0,
        "lost_responses": 1, "spent": {"tokens": 9.0}}  # no answer left unsaved, no batch: left out
    m.end("complete", None, {"numpy": "2"})
    assert (m.status, m.stop_reason, m.packages) == ("complete", None, {"numpy": "2"})
    assert "budget" in m.to_json() and "stop_reason" not in m.to_json()


def test_what_a_session_adds_to_the_manifest_goes_through_its_methods() -> None:
    """Modified data, a Ray cluster, batches and usage: ``Manifest`` methods, never fields set one by one."""
    from pydantic import BaseModel

    from structbench.backends.usage import Usage, UsageTotals
    from structbench.data.datasets import ModifiedFile
    from structbench.runfiles.manifest import Manifest

    class Batch(BaseModel):
        tag: str
        id: str | None
        provider: str  # the ledger's own: not the manifest's

    m = Manifest(config=RunConfig(model="oracle", benches=["toy"]))
    assert not {"modified_data", "batches", "usage"} & set(m.to_json())
    m.uses_modified([ModifiedFile("scitab", "claims.json", "a" * 64, "b" * 64)])
    m.runs_on({"executor": "ray", "address": "local", "actors": []})
    m.batched([Batch(tag="t1", id=None, provider="openai")])
    m.spent(UsageTotals(usage=Usage(calls=2, prompt_tokens=10)))
    data = m.to_json()
    assert data["modified_data"] == [{"dataset": "scitab", "path": "claims.json", "sha256": "a" * 64,
                                      "release_sha256": "b" * 64}]
    assert data["workers"]["executor"] == "ray" and data["batches"] == [{"tag": "t1", "id": None}]
    assert data["usage"]["usage"]["calls"] == 2 and data["usage"]["usage"]["prompt_tokens"] == 10
def test_the_collector_runs_less_often_while_requests_run_and_is_restored(tmp_path: Path) -> None:
    import gc

    from structbench.core.collector import YOUNG_COLLECTION

    seen: list[tuple[int, int, int]] = []

    class Watching(MockBackend):
        async def generate(self, request: Request) -> Response:
            seen.append(gc.get_threshold())
            return await super().generate(request)

    before = gc.get_threshold()
    _run(tmp_path, Watching(default="yes"), _config(limit=3))
    assert seen and all(t[0] >= YOUNG_COLLECTION and t[1:] == before[1:] for t in seen)
    assert gc.get_threshold() == before

    class Failing(MockBackend):
        async def generate(self, request: Request) -> Response:
            raise StorageError("the cache's disk is full")  # stops the run

    with pytest.raises(StorageError):
        _run(tmp_path / "other", Failing(), _config(limit=3))
    assert gc.get_threshold() == before


def test_a_new_run_directory_s_entry_is_synced_once_and_an_existing_one_s_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unsynced, the entry of a new run directory (and of each folder made above it) could vanish in a power cut with
    every record synced into it."""
    synced = spy_folder_syncs(monkeypatch)
    config = _config()
    run_dir = tmp_path / "runs" / "first"
    for session in range(2):
        synced.clear()
        Run(run_dir, config).execute(MockBackend(default="yes"), prepare(config, DataContext()), cache=None,
                                     concurrency=2, progress=False)
        made = [path for path in synced if path in (tmp_path, tmp_path / "runs")]
        assert made == ([tmp_path, tmp_path / "runs"] if session == 0 else [])  # the parents of the folders made
        assert run_dir in synced  # (the run's own files' entries, after their renames)
