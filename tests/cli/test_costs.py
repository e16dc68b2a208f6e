"""Tokens, cost, budgets and batches as a user meets them: ``structbench run`` (in this process; in its own where a
signal or a kill needs one) against loopback servers (the OpenAI chat API, its Batch API), never the network."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import toybench  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
from faults import child_pythonpath
from patience import patience
from runner.batch.conftest import USAGE, Served, mixed_answers
from structbench.core.errors import ExitCode
from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
from structbench.testing.cli import Invocation, invoke
from structbench.testing.openai_server import MockOpenAIServer, read_log, serve_in_thread
from structbench.testing.reasoning_server import ReasoningServer

KEY = "sk-structbench-test-key-0123456789abcdef"
"""An API key the run is given; it must appear in nothing the run writes."""


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": child_pythonpath(), "STRUCTBENCH_PLUGINS": "toybench",
            "STRUCTBENCH_CACHE": str(tmp_path / "cache"), "OPENAI_API_KEY": KEY}


def sb(tmp_path: Path, *args: str, check: int | None = 0) -> Invocation:
    proc = invoke(*args, env=env(tmp_path), cwd=tmp_path)
    if check is not None:
        assert proc.returncode == check, proc.stdout + proc.stderr
    return proc


def toy(url: str, out: str, *more: str, strategy: str = "refine", limit: int = 6) -> list[str]:
    return ["run", "-m", "openai:mock", "--base-url", url, "-b", "toy", "-s", strategy, "--limit", str(limit),
            "--no-progress", "--out", out, *more]


@pytest.fixture
def batch_api() -> Iterator[Served]:
    server = BatchServer(ReasoningServer("reasoning_content", mixed_answers(), usage=USAGE))
    with serve_batches_in_thread(server) as url:
        yield Served(server, url)


def test_token_totals_are_what_the_server_reported(tmp_path: Path, batch_api: Served) -> None:
    proc = sb(tmp_path, *toy(batch_api.url + "/v1", "run"))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    made = metrics["usage"]["usage"]  # 6 samples, 2 calls each, 100 prompt and 42 completion (40 reasoning) per call
    assert (made["calls"], made["prompt_tokens"], made["completion_tokens"], made["reasoning_tokens"]) == \
        (12, 1200, 504, 480)
    assert made["cached_tokens"] is None and metrics["results"][0]["usage"]["usage"] == made
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert all(r["usage"]["prompt_tokens"] == 200 and len(r["call_usage"]) == 2 for r in records)
    assert all(c == {"model": "openai:mock", "prompt_tokens": 100, "completion_tokens": 42, "reasoning_tokens": 40,
                     "cached_tokens": None, "reused": False, "batch": False} for r in records for c in r["call_usage"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["usage"]["usage"] == made
    assert "| tokens, cost |" in proc.stdout and "| 1.2k in, 504 out |" in proc.stdout
    assert "tokens: calls made: 12 calls: 1,200 prompt tokens, 504 completion tokens (480 reasoning)" in proc.stdout
    again = sb(tmp_path, *toy(batch_api.url + "/v1", "again"))  # the same requests: all from the cache
    reused = json.loads((tmp_path / "again" / "metrics.json").read_text())["usage"]
    assert reused["usage"]["calls"] == 0 and reused["reused"]["prompt_tokens"] == 1200
    assert "(+1.7k reused)" in again.stdout


def test_a_server_without_usage_gives_unknown_never_zero(tmp_path: Path) -> None:
    with serve_in_thread(MockOpenAIServer(reply="yes", no_usage=True)) as url:
        proc = sb(tmp_path, *toy(url, "run", strategy="direct"))
    made = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]["usage"]
    assert made == {"calls": 6, "prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None,
                    "cached_tokens": None, "unknown": 6}
    assert "| unknown |" in proc.stdout


def test_a_budget_cannot_be_kept_against_a_server_without_usage(tmp_path: Path) -> None:
    with serve_in_thread(MockOpenAIServer(reply="yes", no_usage=True)) as url:
        proc = sb(tmp_path, *toy(url, "run", "--max-tokens-total", "1000", "--workers", "2"), check=ExitCode.BUDGET)
    assert "openai:mock reported no token usage for a call, so the budget (--max-cost/--max-tokens-total) cannot " \
        "be kept" in proc.stderr
    assert "note: --workers 2: --batch, --max-cost and --max-tokens-total count every call in one process" \
        in proc.stderr


def killed_once_submitted(tmp_path: Path, command: list[str]) -> subprocess.Popen[bytes]:
    """The run of ``command`` killed with -9 as soon as it says its batch is submitted."""
    stderr = tmp_path / "first.err"
    with stderr.open("w") as err:
        first = subprocess.Popen([sys.executable, "-m", "structbench", *command], stdout=subprocess.DEVNULL,
                                 stderr=err, env=env(tmp_path), cwd=tmp_path)
        try:
            for _ in range(600):
                if "submitted" in stderr.read_text() or first.poll() is not None:
                    break
                time.sleep(0.05)
            assert "submitted" in stderr.read_text(), stderr.read_text()
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
    return first


def test_batch_resumes_after_kill_9_and_scores_as_direct_calls(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.complete_after = 8  # the batch completes 8 s after it was submitted
    command = toy(batch_api.url + "/v1", "run", "--batch", "--batch-poll", "1", strategy="direct")
    first = killed_once_submitted(tmp_path, command)
    assert first.returncode == -signal.SIGKILL
    ledger = json.loads((tmp_path / "run" / "batches" / "ledger.json").read_text())["batches"]
    assert len(ledger) == 1 and ledger[0]["id"].startswith("batch_") and ledger[0]["state"] == "submitted"
    assert batch_api.server.stats.batches == 1
    second = sb(tmp_path, *command)
    assert "taken up again" in second.stderr
    assert batch_api.server.stats.batches == 1 and batch_api.server.stats.direct == 0  # one batch, no direct call
    assert batch_api.server.stats.batch_lines == 6
    direct = sb(tmp_path, *toy(batch_api.url + "/v1", "direct", "--no-cache", strategy="direct"))
    assert batch_api.server.stats.direct == 6

    def scores(run: str) -> dict[str, float]:
        lines = (tmp_path / run / "samples.jsonl").read_text().splitlines()
        return {r["id"]: r["score"] for r in map(json.loads, lines)}

    assert scores("run") == scores("direct") and 0 < sum(scores("run").values()) < 6
    row = next(line for line in second.stdout.splitlines() if line.startswith("| toy |"))
    assert row.rsplit("|", 2)[0] == next(line for line in direct.stdout.splitlines()
                                         if line.startswith("| toy |")).rsplit("|", 2)[0]  # the same table row
    # the key is in nothing the run wrote: records, manifest, batch files, the response cache
    written = [p for p in [*(tmp_path / "run").rglob("*"), *(tmp_path / "cache").rglob("*")] if p.is_file()]
    assert any(p.name.endswith(".input.jsonl") for p in written)
    assert all(KEY.encode() not in p.read_bytes() for p in written)
    assert KEY not in second.stdout + second.stderr + (tmp_path / "first.err").read_text()


@pytest.mark.parametrize(("prices", "message"), [
    ("openai:gpt-4o: {input: 2.5, output: 10}\n",
     "prices.yaml: no price for the model openai:mock (the file prices: openai:gpt-4o)"),
    ("openai:mock:\n  input: 1\n  output: -2\n", "prices.yaml:3: openai:mock.output: a price cannot be negative (-2)"),
])
def test_a_bad_prices_file_is_refused_before_anything_runs(tmp_path: Path, prices: str, message: str) -> None:
    (tmp_path / "prices.yaml").write_text(prices)
    with serve_in_thread(MockOpenAIServer(reply="yes")) as url:
        proc = sb(tmp_path, *toy(url, "run", "--prices", "prices.yaml"), check=ExitCode.USAGE)
    assert message in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_a_budget_stops_the_run_and_a_larger_one_resumes_it(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text("mock: {input: 1, output: 2}\n")  # per million: 184 µ$ per call
    log = tmp_path / "requests.log"
    with serve_in_thread(MockOpenAIServer(reply="yes", usage=USAGE, log_path=log)) as url:
        command = toy(url, "run", "--prices", "prices.yaml", "-c", "1")
        stopped = sb(tmp_path, *command, "--max-tokens-total", "500", check=ExitCode.BUDGET)
        assert "stopped: the run reached --max-tokens-total 500 (spent 568 tokens) over 4 model calls" in stopped.stderr
        assert "the same command with a larger budget resumes the run" in stopped.stderr
        assert len(read_log(log)) == 4 and not (tmp_path / "run" / "metrics.json").exists()
        manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
        assert manifest["status"] == "stopped" and manifest["budget"]["max_tokens_total"] == 500
        costly = sb(tmp_path, *command, "--max-cost", "0.0015", check=ExitCode.BUDGET)
        # 184 µ$ a call: the ninth (four of the first session, five of this one) passes 0.0015
        assert "--max-cost 0.0015 USD (spent 0.0017 USD) over 9 model calls" in costly.stderr
        done = sb(tmp_path, *command, "--max-cost", "1")
    answered = [r.digest for r in read_log(log)]
    assert len(answered) == 12 == len(set(answered))  # every call once, over three sessions
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["prices"] == "prices.yaml" and metrics["results"][0]["n"] == 6
    total = metrics["usage"]
    assert "cost 0.00" in done.stdout and "at prices.yaml" in done.stdout
    sessions = json.loads((tmp_path / "run" / "manifest.json").read_text())["sessions"]
    assert [s["spent"]["calls"] for s in sessions] == [4, 5, 3]  # the calls each session paid for
    # the ninth call's sample was not recorded before the stop: its answer is reused by the third session
    assert (total["usage"]["calls"], total["reused"]["calls"]) == (11, 1)


def test_a_budget_counts_what_earlier_sessions_paid_for_samples_not_recorded(tmp_path: Path,
                                                                             batch_api: Served) -> None:
    (tmp_path / "prices.yaml").write_text("mock: {input: 1, output: 2}\n")  # 92 µ$ a batched call
    command = toy(batch_api.url + "/v1", "run", "--batch", "--batch-poll", "0.2", "--prices", "prices.yaml")
    first = sb(tmp_path, *command, "--max-cost", "0.0003", check=ExitCode.BUDGET)  # step 1: 6 lines, 552 µ$
    # reached at the fourth answer; the stop line counts the six the batch answered, as the manifest does
    assert "spent 0.0006 USD) over 6 model calls" in first.stderr and batch_api.server.stats.batches == 1
    # no sample was recorded (each waits for its second step), but the 6 calls were paid: the budget is spent
    again = sb(tmp_path, *command, "--max-cost", "0.0003", check=ExitCode.BUDGET)
    assert batch_api.server.stats.batches == 1 and "spent 0.0006 USD) over 6 model calls" in again.stderr
    sb(tmp_path, *command, "--max-cost", "1")
    assert batch_api.server.stats.batch_lines == 12  # every call once, over three sessions
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [s["spent"]["calls"] for s in manifest["sessions"]] == [6, 0, 6]
    assert manifest["usage"]["usage"]["calls"] == 12 and manifest["usage"]["cost_usd"] == pytest.approx(0.001104)


@pytest.mark.parametrize("crash", [False, True], ids=["killed", "machine-crash"])
def test_a_budget_and_the_manifest_count_the_calls_of_a_killed_session(tmp_path: Path, crash: bool) -> None:
    """A session killed with -9 records no spending of its own: the next one fills it in from ``spent.jsonl``. A
    crash of the machine (power lost) may also have cut the log short, its lines being synced every ``SYNC_EVERY``
    seconds, not once a call (#44), while the response cache kept the answers: the next session adds their lines back
    from the cache, so the budget, the crashed session's spending and the run's usage count those calls, and their
    answers are reused, not asked for again."""
    (tmp_path / "prices.yaml").write_text("mock: {input: 1, output: 2}\n")
    log = tmp_path / "requests.log"
    with serve_in_thread(MockOpenAIServer(reply="yes", usage=USAGE, log_path=log)) as url:
        command = toy(url, "run", "--prices", "prices.yaml", "-c", "1")
        # three calls (426 tokens): the second sample's first call paid, its answer cached, the sample not recorded
        sb(tmp_path, *command, "--max-tokens-total", "400", check=ExitCode.BUDGET)
        if crash:
            spent = tmp_path / "run" / "spent.jsonl"
            lines = spent.read_bytes().splitlines(keepends=True)
            assert len(lines) == 3 and all(b'"key"' in line for line in lines)
            spent.write_bytes(lines[0] + lines[1][:20])  # the last line lost, the one before torn
        path = tmp_path / "run" / "manifest.json"
        manifest = json.loads(path.read_text())
        manifest["sessions"][0]["spent"] = None  # as a session killed with -9 (or a crash) leaves it
        path.write_text(json.dumps(manifest))
        again = sb(tmp_path, *command, "--max-tokens-total", "400", check=ExitCode.BUDGET)
        restored = "note: 2 paid call(s) of an earlier session were missing from spent.jsonl"
        assert (restored in again.stderr) == crash
        assert "(spent 426 tokens) over 3 model calls" in again.stderr and len(read_log(log)) == 3
        sb(tmp_path, *command, "--max-cost", "1")
    assert len(read_log(log)) == 12
    manifest = json.loads(path.read_text())
    assert [s["spent"]["calls"] for s in manifest["sessions"]] == [3, 0, 9]  # the killed session's filled in
    assert manifest["usage"]["usage"]["calls"] == 12 and manifest["usage"]["cost_usd"] == pytest.approx(12 * 184e-6)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]  # the records: one call reused
    assert (metrics["usage"]["calls"], metrics["reused"]["calls"]) == (11, 1)


def test_batches_lists_and_cancels_a_runs_batches(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.complete_after = 600
    command = toy(batch_api.url + "/v1", "run", "--batch", "--batch-poll", "0.5", strategy="direct")
    stderr = tmp_path / "run.err"
    with stderr.open("w") as err:
        running = subprocess.Popen([sys.executable, "-m", "structbench", *command], stdout=subprocess.DEVNULL,
                                   stderr=err, env=env(tmp_path), cwd=tmp_path)
        try:
            for _ in range(600):
                if "submitted" in stderr.read_text() or running.poll() is not None:
                    break
                time.sleep(0.05)
            listed = sb(tmp_path, "batches", "run")
            assert "| submitted | in_progress, 0/6 done | 6 |" in listed.stdout
            cancelled = sb(tmp_path, "batches", "run", "--cancel")
            assert "cancelled (cancel asked)" in cancelled.stdout
            running.wait(timeout=patience(60))
        finally:
            running.kill()
            running.wait()
    assert running.returncode == ExitCode.STOPPED
    assert "was cancelled; the answers it holds are kept" in stderr.read_text()
    assert batch_api.server.stats.cancelled == 1
    after = sb(tmp_path, "batches", "run", "--offline")
    assert "| ended | cancelled |" in after.stdout
    batch_api.server.complete_after = 0
    again = sb(tmp_path, *command)  # the same command sends the rest, in a new batch
    assert "holds no answer to 6 of the requests wanted: they go into a new batch" in again.stderr
    assert batch_api.server.stats.batches == 2 and batch_api.server.stats.batch_lines == 6
    assert "| ended | completed |" in sb(tmp_path, "batches", "run", "--offline").stdout
    assert sb(tmp_path, "batches", "nowhere", check=ExitCode.USAGE).stderr.startswith("error: nowhere: no such run")


def test_a_batch_the_provider_no_longer_knows_is_abandoned_and_sent_again(tmp_path: Path, batch_api: Served) -> None:
    batch_api.server.complete_after = 600
    command = toy(batch_api.url + "/v1", "run", "--batch", "--batch-poll", "0.2", strategy="direct")
    killed_once_submitted(tmp_path, command)
    batch_api.server.batches.clear()  # restarted, or another key: it knows the batch no more
    batch_api.server.complete_after = 0
    for listing in (sb(tmp_path, "batches", "run"), sb(tmp_path, "batches", "run", "--cancel")):  # an answer: exit 0
        assert "| submitted | not found (404) |" in listing.stdout
        assert "the provider does not know it (404 Not Found" in listing.stderr
    again = sb(tmp_path, *command)
    assert "the provider does not know it (404 Not Found" in again.stderr
    assert "sent again in a new batch" in again.stderr
    assert batch_api.server.stats.batches == 2 and batch_api.server.stats.batch_lines == 6
    ledger = json.loads((tmp_path / "run" / "batches" / "ledger.json").read_text())["batches"]
    assert [e["state"] for e in ledger] == ["abandoned", "ended"] and "404 Not Found" in ledger[0]["notes"][0]
    assert "| abandoned |" in sb(tmp_path, "batches", "run").stdout
    sb(tmp_path, *toy(batch_api.url + "/v1", "run", strategy="direct"))  # nothing open: the run goes on without --batch


def test_batch_needs_a_backend_with_a_batch_api(tmp_path: Path) -> None:
    proc = sb(tmp_path, "run", "-m", "mock", "-b", "toy", "--limit", "2", "--batch", check=ExitCode.USAGE)
    assert "--batch: the mock backend has no batch API (openai and anthropic have one)" in proc.stderr
    proc = sb(tmp_path, "run", "-m", "mock", "-b", "toy", "--limit", "2", "--max-cost", "1", check=ExitCode.USAGE)
    assert "--max-cost needs the models' prices: give --prices FILE" in proc.stderr


def test_prices_no_cost_can_hold_are_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text("mock: {input: 1.0e+306, output: 1.0e+308}\n")
    with serve_in_thread(MockOpenAIServer(reply="yes", usage=USAGE)) as url:
        proc = invoke(*toy(url, "run", "--prices", "prices.yaml"), env=env(tmp_path), cwd=tmp_path)
    assert proc.returncode == ExitCode.USAGE and proc.stderr.count("\n") == 1
    assert "prices.yaml:1: mock.input: 1e+306 US dollars per million tokens is more than any model costs" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_negative_usage_is_unknown_and_never_defeats_a_budget(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text("mock: {input: 1, output: 1}\n")
    lying = {"prompt_tokens": -1_000_000, "completion_tokens": 5}
    with serve_in_thread(MockOpenAIServer(reply="yes", usage=lying)) as url:
        stopped = invoke(*toy(url, "run", "--max-tokens-total", "500", "-c", "1"), env=env(tmp_path), cwd=tmp_path)
        assert stopped.returncode == ExitCode.BUDGET, stopped.stderr
        assert "reported no token usage for a call, so the budget (--max-cost/--max-tokens-total) cannot be kept" \
            in stopped.stderr
        done = invoke(*toy(url, "run", "--prices", "prices.yaml"), env=env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    assert made["usage"]["prompt_tokens"] is None and made["usage"]["unknown"] == made["usage"]["calls"] > 0
    assert made["cost_usd"] is None and "-1,000,000" not in done.stdout
