"""``--batch`` through the runner: one batch per step, answers and scores as direct calls give them, failed lines
sent again, foreign ids ignored, and a restart taking up the batches of the run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runner.batch.conftest import Served
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.prices import Price, Prices
from structbench.core.errors import RunStoppedError
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.batch.collector import BatchSettings
from structbench.runner.batch.ledger import Ledger
from structbench.runner.cache import ResponseCache
from structbench.runner.control import RunControl
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.runner.store import read_records

if TYPE_CHECKING:
    from structbench.testing.batch_server import BatchServer

FAST = BatchSettings(poll=0.05)


def run(tmp_path: Path, served: Served, name: str, *, strategy: str = "refine", limit: int = 6,
        batch: BatchSettings | None = FAST, model: str = "openai:mock", cache: str = "cache.sqlite",
        notes: list[str] | None = None, prices: Prices | None = None) -> tuple[Run, object]:
    url = served.url + "/v1" if model.startswith("openai") else served.url
    config = RunConfig(model=model, base_url=url, benches=["toy:small"], strategies=[strategy], limit=limit)
    backend = make_backend(BackendSpec.parse(model, base_url=url))
    the_run = Run(tmp_path / name, config)
    cache_file = ResponseCache(tmp_path / cache)
    try:
        metrics = the_run.execute(backend, prepare(config, DataContext()), cache=cache_file, concurrency=8,
                                  progress=False, batch=batch, prices=prices,
                                  control=RunControl(notify=(notes if notes is not None else []).append))
    finally:
        cache_file.close()
    return the_run, metrics


def scores(run_dir: Path) -> dict[str, float]:
    return {r.id: r.score for r in read_records(run_dir / "samples.jsonl")}


def test_anthropic_draws_n_replies_as_n_lines(tmp_path: Path, batch_api: Served) -> None:
    run(tmp_path, batch_api, "batched", model="anthropic:mock", strategy="vote")
    assert (batch_api.server.stats.batches, batch_api.server.stats.batch_lines) == (1, 18)  # 6 samples, 3 draws
    run(tmp_path, batch_api, "direct", model="anthropic:mock", strategy="vote", batch=None, cache="fresh.sqlite")
    assert batch_api.server.stats.direct == 18
    outputs = {r.id: r.outputs for r in read_records(tmp_path / "batched" / "samples.jsonl")}
    assert outputs == {r.id: r.outputs for r in read_records(tmp_path / "direct" / "samples.jsonl")}
    assert all(len(o or []) == 3 for o in outputs.values())


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_one_batch_per_step_scored_as_direct_calls(tmp_path: Path, batch_api: Served, model: str) -> None:
    notes: list[str] = []
    _, batched = run(tmp_path, batch_api, "batched", model=model, notes=notes)
    assert batch_api.server.stats.batches == 2  # refine: the answers, then the checks of every sample
    assert batch_api.server.stats.direct == 0 and batch_api.server.stats.batch_lines == 12
    assert sum("submitted" in n for n in notes) == 2
    _, direct = run(tmp_path, batch_api, "direct", model=model, batch=None, cache="fresh.sqlite")
    assert batch_api.server.stats.direct == 12 and batch_api.server.stats.batches == 2
    batched_scores = scores(tmp_path / "batched")
    assert batched_scores == scores(tmp_path / "direct")
    assert 0 < sum(batched_scores.values()) < len(batched_scores)  # right and wrong answers: a real comparison
    assert batched.results[0].headline == direct.results[0].headline  # type: ignore[attr-defined]
    records = list(read_records(tmp_path / "batched" / "samples.jsonl"))
    assert all(c.batch and not c.reused for r in records for c in r.call_usage)
    ledger = Ledger(tmp_path / "batched")
    assert [(e.step, e.state, e.requests) for e in ledger.entries] == [(1, "ended", 6), (2, "ended", 6)]


def test_a_call_two_strategies_share_waits_for_the_one_line_of_it(tmp_path: Path, batch_api: Served) -> None:
    # direct and refine ask the same first question: one line for both, and neither sample waits for ever
    url = batch_api.url + "/v1"
    config = RunConfig(model="openai:mock", base_url=url, benches=["toy:small"], strategies=["direct", "refine"],
                       limit=6)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        metrics = Run(tmp_path / "r", config).execute(
            make_backend(BackendSpec.parse("openai:mock", base_url=url)), prepare(config, DataContext()),
            cache=cache, concurrency=8, progress=False, batch=FAST, control=RunControl(notify=lambda _: None))
    finally:
        cache.close()
    assert [e.requests for e in Ledger(tmp_path / "r").entries] == [6, 6]  # the shared answers, then the checks
    assert [r.n for r in metrics.results] == [6, 6]
    records = list(read_records(tmp_path / "r" / "samples.jsonl"))
    assert sum(c.reused for r in records for c in r.call_usage) == 6  # the second asker's answer is not paid twice


def test_a_reused_answer_is_priced_as_it_was_paid(tmp_path: Path, batch_api: Served) -> None:
    """An answer a batch paid for, reused by a later run (batched or not), was priced at the direct rate: twice what it
    cost."""
    prices = Prices({"openai:mock": Price(input=2.0, output=10.0)}, "test")  # a batch: half of each
    per_call = (100 * 2.0 + 42 * 10.0) / 1e6 / 2  # USAGE, at the batch price
    _, paid = run(tmp_path, batch_api, "batched", prices=prices)
    assert paid.usage.cost_usd == pytest.approx(12 * per_call)  # type: ignore[attr-defined]
    for name, batch in (("again", FAST), ("direct", None)):
        _, again = run(tmp_path, batch_api, name, batch=batch, prices=prices)
        assert again.usage.usage.calls == 0 and again.usage.reused.calls == 12  # type: ignore[attr-defined]
        assert again.usage.reused_cost_usd == pytest.approx(12 * per_call), name  # type: ignore[attr-defined]
        calls = [c for r in read_records(tmp_path / name / "samples.jsonl") for c in r.call_usage]
        assert len(calls) == 12 and all(c.reused and c.batch for c in calls)
    _, direct = run(tmp_path, batch_api, "paid-direct", batch=None, prices=prices, cache="fresh.sqlite", limit=3)
    _, reused = run(tmp_path, batch_api, "reused-in-batch", prices=prices, cache="fresh.sqlite", limit=3)
    assert reused.usage.reused_cost_usd == pytest.approx(6 * 2 * per_call)  # type: ignore[attr-defined]
    assert direct.usage.cost_usd == reused.usage.reused_cost_usd  # type: ignore[attr-defined]


def test_usage_totals_are_what_the_server_reported(tmp_path: Path, batch_api: Served) -> None:
    _, metrics = run(tmp_path, batch_api, "batched")
    usage = metrics.usage.usage  # type: ignore[attr-defined]
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens) == (12, 1200, 504, 480)
    assert usage.cached_tokens is None and usage.unknown == 0  # the server sent no cached count: unknown, not 0
    saved = json.loads((tmp_path / "batched" / "metrics.json").read_text())
    assert saved["usage"]["usage"]["prompt_tokens"] == 1200 == saved["results"][0]["usage"]["usage"]["prompt_tokens"]
    manifest = json.loads((tmp_path / "batched" / "manifest.json").read_text())
    assert manifest["usage"]["usage"]["completion_tokens"] == 504
    assert manifest["sessions"][0]["spent"] == {"calls": 12, "tokens": 1704}
    assert [b["state"] for b in manifest["batches"]] == ["ended", "ended"]


@pytest.mark.parametrize("fault", ["drop-lines", "fail-lines", "expire"])
def test_failed_and_missing_lines_are_sent_again_alone(tmp_path: Path, batch_api: Served, fault: str) -> None:
    batch_api.server.fault, batch_api.server.fault_times = fault, 1
    notes: list[str] = []
    the_run, _ = run(tmp_path, batch_api, "r", strategy="direct", notes=notes)
    assert the_run.failures == []
    ledger = Ledger(tmp_path / "r")
    first, again = ledger.entries
    resent = {"drop-lines": 1, "fail-lines": 1, "expire": 3}[fault]
    assert (first.requests, again.requests, again.round) == (6, resent, 1)
    # answers the model gave: each request once, but the one the server ran and then left out of its output
    assert batch_api.server.stats.batch_lines == {"drop-lines": 7, "fail-lines": 6, "expire": 6}[fault]
    assert scores(tmp_path / "r") == scores_of_direct(tmp_path, batch_api)
    if fault != "fail-lines":
        assert any("sent again" in n for n in notes)


def scores_of_direct(tmp_path: Path, served: Served) -> dict[str, float]:
    run(tmp_path, served, "direct", strategy="direct", batch=None, cache="direct.sqlite")
    return scores(tmp_path / "direct")


def test_foreign_ids_are_ignored_and_said(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.fault = "foreign-ids"
    notes: list[str] = []
    the_run, _ = run(tmp_path, batch_api, "r", strategy="direct", notes=notes)
    assert the_run.failures == [] and batch_api.server.stats.batches == 1
    assert any("2 line(s) of its results have ids this run never sent" in n for n in notes)
    assert "ids it was never sent" in Ledger(tmp_path / "r").entries[0].notes[0]


@pytest.mark.parametrize(("fault", "said", "noted"), [
    ("conflicting-lines", "1 id(s) have a second result line that differs from the first",
     "1 id(s) answered twice, differently (the first answer kept)"),
    ("malformed-lines", "2 line(s) of its results are not JSON objects", "2 result line(s) not JSON objects"),
])
def test_odd_result_lines_are_said_and_noted(tmp_path: Path, batch_api: Served, fault: str, said: str,
                                             noted: str) -> None:
    batch_api.server.fault = fault
    notes: list[str] = []
    the_run, _ = run(tmp_path, batch_api, "r", strategy="direct", notes=notes)
    assert the_run.failures == [] and batch_api.server.stats.batches == 1
    assert any(said in n for n in notes), notes
    assert any(noted in n for n in Ledger(tmp_path / "r").entries[0].notes)


def test_a_refused_batch_fails_its_samples_as_model_errors(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.fault = "reject"
    the_run, metrics = run(tmp_path, batch_api, "r", strategy="direct")
    assert len(the_run.failures) == 6 and metrics.results[0].errors == 6  # type: ignore[attr-defined]
    record = next(iter(read_records(tmp_path / "r" / "samples.jsonl")))
    assert "the batch failed: invalid_request: the input file was refused" in (record.error or "")


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_a_restart_takes_up_a_batch_whose_id_was_never_written(tmp_path: Path, batch_api: Served, model: str) -> None:
    import asyncio

    from structbench.runner.batch.providers import provider_for

    batch_api.server.complete_after = 0.5
    run(tmp_path, batch_api, "first", strategy="direct", model=model)  # to learn the lines a run sends
    first = Ledger(tmp_path / "first").entries[0]
    lines = list(Ledger(tmp_path / "first").read_lines(first.input_name))
    # a session killed after the provider created the batch, before the ledger had its id
    ledger = Ledger(tmp_path / "second")
    entry = ledger.new(lines, provider=first.provider, model=model, base_url=first.base_url,
                       endpoint=first.endpoint, requests=len(lines), step=1)
    backend = make_backend(BackendSpec.parse(model, base_url=first.base_url))
    provider = provider_for(backend)

    async def create() -> str:
        try:
            return await provider.submit(entry, lines, ledger.file(entry.input_name))
        finally:
            await provider.aclose()

    created = asyncio.run(create())
    before = batch_api.server.stats.batches
    notes: list[str] = []
    run(tmp_path, batch_api, "second", strategy="direct", cache="other.sqlite", notes=notes, model=model)
    assert batch_api.server.stats.batches == before  # found (by its tag, or its size and time): not sent again
    assert Ledger(tmp_path / "second").entries[0].id == created
    assert any("sent by an earlier session" in n for n in notes)
    assert scores(tmp_path / "second") == scores(tmp_path / "first")


def test_a_batch_cancelled_while_waiting_stops_the_run(tmp_path: Path, batch_api: Served) -> None:
    import threading

    batch_api.server.complete_after = 30

    def cancel() -> None:
        import time

        for _ in range(200):
            running = [b for b in batch_api.server.batches.values() if b.status == "in_progress"]
            if running:
                running[0].status = "cancelled"
                running[0].output_file_id = batch_api.server._store([])
                return
            time.sleep(0.05)

    threading.Thread(target=cancel, daemon=True).start()
    with pytest.raises(RunStoppedError, match="was cancelled"):
        run(tmp_path, batch_api, "r", strategy="direct")
    assert not (tmp_path / "r" / "samples.jsonl").read_text()  # no sample recorded as failed: all tried again


def test_a_step_larger_than_the_providers_limit_is_split(tmp_path: Path, batch_api: Served,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from structbench.runner.batch.openai import OpenAIBatches

    monkeypatch.setattr(OpenAIBatches, "max_requests", 4)
    run(tmp_path, batch_api, "lines", strategy="direct")
    assert [e.requests for e in Ledger(tmp_path / "lines").entries] == [4, 2]
    monkeypatch.setattr(OpenAIBatches, "max_requests", 50_000)
    monkeypatch.setattr(OpenAIBatches, "max_bytes", 1000)  # a line of a toy prompt is about 400 bytes
    run(tmp_path, batch_api, "bytes", strategy="direct", cache="other.sqlite")
    assert [e.requests for e in Ledger(tmp_path / "bytes").entries] == [2, 2, 2]
    assert scores(tmp_path / "bytes") == scores(tmp_path / "lines")


@pytest.mark.parametrize(("model", "fault"), [("openai:mock", "reject"), ("openai:mock", "refuse-lines"),
                                              ("anthropic:mock", "refuse-lines")])
def test_a_batch_that_ended_without_answers_is_sent_again_by_the_next_run(
        tmp_path: Path, batch_api: Served, model: str, fault: str) -> None:
    batch_api.server.fault, batch_api.server.fault_times = fault, 1  # the first batch fails, the server is then fixed
    first, _ = run(tmp_path, batch_api, "r", strategy="direct", model=model)
    assert len(first.failures) == 6
    notes: list[str] = []
    second, _ = run(tmp_path, batch_api, "r", strategy="direct", model=model, notes=notes)
    assert second.failures == [] and batch_api.server.stats.batches == 2 and batch_api.server.stats.direct == 0
    assert any("holds no answer to 6 of the requests wanted: they go into a new batch" in n for n in notes)
    old, new = Ledger(tmp_path / "r").entries  # the ledger keeps the history
    assert (old.state, new.state, new.requests) == ("ended", "ended", 6)
    assert "sent again in a later batch" in old.notes[-1]
    assert scores(tmp_path / "r") == scores_of_direct(tmp_path, batch_api)
    run(tmp_path, batch_api, "r", strategy="direct", model=model)  # done: nothing more is sent
    assert batch_api.server.stats.batches == 2


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_the_rest_of_a_cancelled_batch_goes_into_a_new_one(tmp_path: Path, batch_api: Served, model: str) -> None:
    import asyncio

    from structbench.runner.batch.providers import provider_for

    batch_api.server.complete_after = 0.3
    run(tmp_path, batch_api, "first", strategy="direct", model=model)  # to learn the lines a run sends
    first = Ledger(tmp_path / "first").entries[0]
    lines = list(Ledger(tmp_path / "first").read_lines(first.input_name))
    # a session stopped while its batch ran, which `structbench batches --cancel` then cancelled
    ledger = Ledger(tmp_path / "second")
    entry = ledger.new(lines, provider=first.provider, model=model, base_url=first.base_url,
                       endpoint=first.endpoint, requests=len(lines), step=1)
    provider = provider_for(make_backend(BackendSpec.parse(model, base_url=first.base_url)))

    async def submit_and_cancel() -> str:
        try:
            batch_id = await provider.submit(entry, lines, ledger.file(entry.input_name))
            await provider.cancel(batch_id)
            return batch_id
        finally:
            await provider.aclose()

    batch_api.server.complete_after = 30
    ledger.update(entry, id=asyncio.run(submit_and_cancel()), state="submitted")
    batch_api.server.complete_after = 0
    notes: list[str] = []
    second, _ = run(tmp_path, batch_api, "second", strategy="direct", model=model, cache="other.sqlite", notes=notes)
    assert second.failures == []  # not stopped: the batch was cancelled before this session, not while it waited
    entries = Ledger(tmp_path / "second").entries
    old, new = entries
    assert (old.state, old.status, old.requests) == ("ended", "cancelled", 6)
    assert (new.state, new.requests, new.round) == ("ended", 6, 0)
    assert scores(tmp_path / "second") == scores(tmp_path / "first")


def test_a_run_stopped_by_a_cancel_sends_the_rest_next_time(tmp_path: Path, batch_api: Served) -> None:
    import threading

    batch_api.server.complete_after = 30

    def cancel() -> None:
        import time

        for _ in range(200):
            running = [b for b in batch_api.server.batches.values() if b.status == "in_progress"]
            if running:
                running[0].status = "cancelled"
                running[0].output_file_id = batch_api.server._store([])
                return
            time.sleep(0.05)

    threading.Thread(target=cancel, daemon=True).start()
    with pytest.raises(RunStoppedError, match="was cancelled"):
        run(tmp_path, batch_api, "r", strategy="direct")
    batch_api.server.complete_after = 0
    again, _ = run(tmp_path, batch_api, "r", strategy="direct")
    assert again.failures == [] and batch_api.server.stats.batches == 2
    assert [e.status for e in Ledger(tmp_path / "r").entries] == ["cancelled", "completed"]


def test_the_batch_input_is_the_requests_as_a_direct_call_sends_them(tmp_path: Path, batch_api: Served) -> None:
    prompt = "Write the answer in basic Python3-compatible English. Authorization: none required."
    url = batch_api.url + "/v1"
    config = RunConfig(model="openai:mock", base_url=url, benches=["toy:small"], strategies=["direct"], limit=2,
                       system_prompt=prompt)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        Run(tmp_path / "r", config).execute(
            make_backend(BackendSpec.parse("openai:mock", base_url=url)), prepare(config, DataContext()), cache=cache,
            concurrency=8, progress=False, batch=FAST, control=RunControl(notify=lambda _: None))
    finally:
        cache.close()
    (entry,) = Ledger(tmp_path / "r").entries
    uploaded = [f for f in batch_api.server.files.values() if b'"custom_id"' in f and b'"method"' in f]
    assert len(uploaded) == 1 and uploaded[0] == Ledger(tmp_path / "r").file(entry.input_name).read_bytes()
    lines = [json.loads(raw) for raw in uploaded[0].decode().splitlines()]
    assert all(line["body"]["messages"][0] == {"role": "system", "content": prompt} for line in lines)


def _capped_batch(tmp_path: Path, model: str, reply_bytes: int, limit: int) -> tuple[BatchServer, Run]:
    """A batch run of ``limit`` toy samples with ``--max-reply-mb 1``, every reply ``reply_bytes`` long: the loopback
    server and the run."""
    from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
    from structbench.testing.openai_server import MockOpenAIServer

    server = BatchServer(MockOpenAIServer(fault="huge", huge_bytes=reply_bytes))
    with serve_batches_in_thread(server) as base:
        url = base + "/v1" if model.startswith("openai") else base
        config = RunConfig(model=model, base_url=url, benches=["toy:small"], strategies=["direct"], limit=limit)
        cache = ResponseCache(tmp_path / "cache.sqlite")
        the_run = Run(tmp_path / "r", config)
        try:
            the_run.execute(make_backend(BackendSpec.parse(model, base_url=url, max_reply_bytes=2**20)),
                            prepare(config, DataContext()), cache=cache, concurrency=8, progress=False, batch=FAST,
                            control=RunControl(notify=lambda _: None))
        finally:
            cache.close()
    return server, the_run


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_a_batch_reply_larger_than_max_reply_mb_is_refused_unread(tmp_path: Path, model: str) -> None:
    server, the_run = _capped_batch(tmp_path, model, reply_bytes=3 * 2**20, limit=3)
    assert server.stats.batches == 1 and len(the_run.failures) == 3
    assert all("the reply is larger than 1 MiB (--max-reply-mb" in f.message for f in the_run.failures)
    (entry,) = Ledger(tmp_path / "r").entries
    assert Ledger(tmp_path / "r").file(entry.output_name).stat().st_size < 3000  # the replies were not kept
    assert (tmp_path / "cache.sqlite").stat().st_size < 2**20


@pytest.mark.parametrize("model", ["openai:mock", "anthropic:mock"])
def test_a_batchs_results_may_be_larger_than_max_reply_mb(tmp_path: Path, model: str) -> None:
    """The cap holds each reply, not the results file that holds them all (anthropic: its client caps every other
    body, ``backends.anthropic_http``)."""
    server, the_run = _capped_batch(tmp_path, model, reply_bytes=2**19, limit=4)  # 2 MiB of replies in all
    assert server.stats.batches == 1 and not the_run.failures
    (entry,) = Ledger(tmp_path / "r").entries
    assert Ledger(tmp_path / "r").file(entry.output_name).stat().st_size > 2 * 2**20
    assert server.stats.compressed == model.startswith("anthropic")  # (as httpx asks by default; not every reply)


def test_result_lines_are_read_a_capped_line_at_a_time() -> None:
    import asyncio

    from structbench.runner.batch.providers import MALFORMED, TOO_LARGE, capped_lines

    big = json.dumps({"custom_id": "k\"2", "body": "x" * 500})
    data = (json.dumps({"custom_id": "k1", "body": "ok"}) + "\n" + big + "\nnot json\n[1]\n\n"
            + json.dumps({"custom_id": "k3"})).encode()

    async def read(size: int) -> list[dict[str, object]]:
        async def chunks():  # type: ignore[no-untyped-def]
            for i in range(0, len(data), size):
                yield data[i:i + size]
        return [line async for line in capped_lines(chunks(), 100)]

    for size in (1, 7, 64, len(data)):
        assert asyncio.run(read(size)) == [{"custom_id": "k1", "body": "ok"},
                                           {"custom_id": "k\"2", TOO_LARGE: len(big)}, {MALFORMED: True},
                                           {MALFORMED: True}, {"custom_id": "k3"}], size


def test_a_run_with_a_batch_still_open_is_not_continued_without_batch(tmp_path: Path, batch_api: Served) -> None:
    from structbench.core.errors import UsageError

    batch_api.server.complete_after = 30
    stop_after_submitting(tmp_path, batch_api)  # a session stopped while its batch runs
    (entry,) = Ledger(tmp_path / "r").entries
    assert entry.state == "submitted"
    with pytest.raises(UsageError, match=f"batch {entry.id}, sent with --batch, may still be running at the provider; "
                       "continued without --batch, its requests would be sent again and paid twice: run the same "
                       "command with --batch"):
        run(tmp_path, batch_api, "r", strategy="direct", batch=None)
    assert batch_api.server.stats.direct == 0
    batch_api.server.complete_after = 0
    again, _ = run(tmp_path, batch_api, "r", strategy="direct")  # with --batch: its answers are used
    assert again.failures == [] and batch_api.server.stats.batches == 1 and batch_api.server.stats.direct == 0
    run(tmp_path, batch_api, "r", strategy="direct", batch=None)  # every batch ended: continued directly as well


def stop_after_submitting(tmp_path: Path, served: Served, model: str = "openai:mock", name: str = "r") -> None:
    """A ``--batch`` session that stops once its batch is submitted (its first poll refused by the provider)."""
    from structbench.runner.batch.anthropic import AnthropicBatches
    from structbench.runner.batch.openai import OpenAIBatches

    class Refused(Exception):
        status_code = 403  # refused for good: the session stops at once

    async def refused(self: object, batch_id: str) -> None:
        raise Refused("the session stops")

    provider = OpenAIBatches if model.startswith("openai") else AnthropicBatches
    original = provider.status
    provider.status = refused  # type: ignore[assignment,method-assign]
    try:
        with pytest.raises(RunStoppedError):
            run(tmp_path, served, name, strategy="direct", model=model)
    finally:
        provider.status = original  # type: ignore[method-assign]
