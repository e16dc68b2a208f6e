"""Stopping a run: the circuit breaker, records that cannot be written, unusable replies; through ``Run.execute``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from structbench.backends.base import Backend, BackendError, Choice, Request, Response
from structbench.backends.mock import MockBackend
from structbench.core.errors import RunStoppedError, StorageError
from structbench.data.datasets import DataContext
from structbench.runfiles.results import MetricsFile
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.cache import ResponseCache
from structbench.runner.control import RunControl
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.runner.store import RunStore, read_records
from toybench import ToyBench


def _run(tmp_path: Path, backend: Backend, control: RunControl | None = None, cache: ResponseCache | None = None,
         limit: int = 40, bench: ToyBench | None = None) -> MetricsFile:
    config = RunConfig(model="mock", benches=["toy:small"], limit=limit)
    selections = prepare(config, DataContext())
    if bench is not None:
        selections[0].bench = bench
    return Run(tmp_path / "run", config).execute(backend, selections, cache=cache, concurrency=4, progress=False,
                                                 control=control)


def _failing(*causes: str) -> MockBackend:
    """A backend whose calls fail with ``causes`` in turn (a cause of "" answers "yes")."""
    count = {"n": 0}

    def reply(request: Request) -> str:
        cause = causes[count["n"] % len(causes)]
        count["n"] += 1
        if cause:
            raise BackendError(f"it failed: {cause}", cause=cause)
        return "yes"

    return MockBackend(reply=reply)


def _manifest(tmp_path: Path) -> dict[str, object]:
    return dict(json.loads((tmp_path / "run" / "manifest.json").read_text()))


def test_nothing_answering_before_any_reply_stops_the_run_at_once(tmp_path: Path) -> None:
    backend = _failing("cannot connect")
    with pytest.raises(RunStoppedError, match=r"^stopped at once: nothing answers there \(it failed: cannot connect\)"):
        _run(tmp_path, backend)
    assert len(backend.calls) <= 4  # the calls in flight (concurrency 4), not the breaker's 10
    assert _manifest(tmp_path)["status"] == "stopped" and not (tmp_path / "run" / "metrics.json").exists()


def test_a_refused_connection_after_a_reply_counts_towards_the_breaker(tmp_path: Path) -> None:
    backend = _failing("", *["cannot connect"] * 3)  # answered once, then gone: retried by the streak
    metrics = _run(tmp_path, backend, limit=8)
    assert metrics.results[0].errors == 6  # 2 answered, 6 failed: no stop, the failures are the samples'
    control = RunControl(max_consecutive_failures=0)
    off = _failing("cannot connect")
    assert _run(tmp_path / "off", off, control=control, limit=5).results[0].errors == 5  # breaker off: never stops


def test_the_breaker_stops_a_run_where_every_call_fails_the_same_way(tmp_path: Path) -> None:
    backend = _failing("HTTP 401")
    with pytest.raises(RunStoppedError, match=r"the last 10 model calls all failed \(HTTP 401\); the last one: it"):
        _run(tmp_path, backend)
    assert 10 <= len(backend.calls) < 14  # the calls in flight when it tripped, no more
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "stopped" and str(manifest["stop_reason"]).startswith("stopped early")
    assert not (tmp_path / "run" / "metrics.json").exists()
    # The same command against a backend that works: the failed samples are tried again, the rest run.
    metrics = _run(tmp_path, MockBackend(default="yes"))
    assert metrics.results[0].n == 40 and metrics.results[0].errors == 0
    assert _manifest(tmp_path)["status"] == "complete" and "stop_reason" not in _manifest(tmp_path)


@pytest.mark.parametrize(
    ("causes", "limit"),
    [(("HTTP 500", "timeout"), 10), (("HTTP 500",) * 9 + ("",), 10), (("HTTP 401",), 0)],
    ids=["mixed causes", "a success between", "breaker off"],
)
def test_the_breaker_needs_an_unbroken_streak_of_one_cause(
    tmp_path: Path, causes: tuple[str, ...], limit: int
) -> None:
    metrics = _run(tmp_path, _failing(*causes), RunControl(max_consecutive_failures=limit))
    assert metrics.results[0].n == 40 and metrics.results[0].errors > 0
    assert _manifest(tmp_path)["status"] == "complete"


def test_timeouts_stop_a_run_sooner_with_advice(tmp_path: Path) -> None:
    backend = _failing("timeout")
    with pytest.raises(RunStoppedError, match=r"the last 3 model calls timed out .* slower than --timeout") as info:
        _run(tmp_path, backend)
    assert 3 <= len(backend.calls) < 7 and "--concurrency may change" in str(info.value)
    # the threshold is the lower of the two: a breaker set lower, or off, wins
    with pytest.raises(RunStoppedError, match="the last 2 model calls timed out"):
        _run(tmp_path / "two", _failing("timeout"), RunControl(max_consecutive_failures=2))
    assert _run(tmp_path / "off", _failing("timeout"), RunControl(max_consecutive_failures=0)).results[0].errors == 40


def test_prompts_too_long_are_counted_apart_and_never_sent_again(tmp_path: Path) -> None:
    none_fits = _run(tmp_path / "none", _failing("prompt too long")).results[0]  # not the server's fault: no breaker
    assert (none_fits.too_long, none_fits.n, none_fits.headline.value) == (40, 0, None)
    backend = _failing("prompt too long", "")  # every other sample does not fit
    entry = _run(tmp_path, backend).results[0]
    assert (entry.too_long, entry.n, entry.errors) == (20, 20, 0)
    records = list(read_records(tmp_path / "run" / "samples.jsonl"))
    assert sum(r.error_kind == "context" for r in records) == 20
    again = _failing("")
    metrics = _run(tmp_path, again)
    assert again.calls == [] and metrics.results[0].too_long == 20  # nothing sent: they would not fit again


class _Unusable(Backend):
    backend, model = "unusable", "u"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        return Response(choices=(Choice(text=["not", "text"]),))  # type: ignore[arg-type]


def test_an_unusable_reply_is_a_model_error_and_never_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = _Unusable()
    metrics = _run(tmp_path, backend, RunControl(max_consecutive_failures=0), cache, limit=5)
    assert metrics.results[0].errors == 5 and backend.calls == 5 and cache.count() == 0
    errors = [r.error for r in read_records(tmp_path / "run" / "samples.jsonl")]
    assert all("unusable reply: a choice's text is a list, not a string" in (e or "") for e in errors)


def test_a_record_that_does_not_validate_is_written_as_a_failure(tmp_path: Path) -> None:
    class Odd(ToyBench):
        def score(self, sample, attempt, strategy):  # type: ignore[no-untyped-def]
            scored = super().score(sample, attempt, strategy)
            if sample.id == "toy-1":
                attempt.output = 42  # a strategy bug: the record's output is no longer text
            return scored

    metrics = _run(tmp_path, MockBackend(default="yes"), bench=Odd(), limit=3)
    assert metrics.results[0].n == 3 and metrics.results[0].errors == 1
    odd = [r for r in read_records(tmp_path / "run" / "samples.jsonl") if r.id == "toy-1"]
    assert len(odd) == 1
    assert (odd[0].error or "").startswith("the record could not be written: output: Input should be a valid string")
    assert odd[0].prompt is not None and odd[0].output == ""


def test_a_write_that_fails_leaves_no_line_and_nothing_after_it(tmp_path: Path) -> None:
    from structbench.runfiles.records import SampleRecord

    store = RunStore(tmp_path)
    record = SampleRecord(benchmark="b", variant="v", strategy="s", model="m", id="1", task="t", prompt="p",
                          output="yes")
    store.append(record)
    good = (tmp_path / "samples.jsonl").read_bytes()
    os.close(store._fd)
    store._fd = os.open("/dev/full", os.O_WRONLY)  # every write fails with ENOSPC, as on a full disk
    with pytest.raises(StorageError, match="samples.jsonl: cannot be written: No space left on device"):
        store.append(record.model_copy(update={"id": "2"}))
    with pytest.raises(StorageError):  # nothing more is appended after a failed write
        store.append(record.model_copy(update={"id": "3"}))
    store.close()
    assert (tmp_path / "samples.jsonl").read_bytes() == good


def test_the_manifest_names_an_empty_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert cache.count() == 0
    _run(tmp_path, MockBackend(default="yes"), cache=cache, limit=2)
    assert _manifest(tmp_path)["cache"] == str(tmp_path / "cache.sqlite")
