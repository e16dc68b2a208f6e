"""The ``litellm`` backend against the loopback OpenAI-compatible server through LiteLLM's ``openai/`` route: the same
prompts score and count tokens exactly as ``-m openai:...`` does, and the openai backend's retries, timeouts, context
refusals, redaction, cache, breaker and reasoning handling hold; a run without prices is costed at LiteLLM's."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("litellm", "litellm")

from structbench.backends.base import CANNOT_CONNECT, PROMPT_TOO_LONG, TIMEOUT, BackendError, Request  # noqa: E402
from structbench.backends.factory import BackendSpec, make_backend  # noqa: E402
from structbench.backends.litellm import LiteLLMBackend, _merge  # noqa: E402
from structbench.benchmarks import BENCHMARKS  # noqa: E402
from structbench.core.errors import ExitCode  # noqa: E402
from structbench.runfiles.results import MetricsFile  # noqa: E402
from structbench.runfiles.runconfig import Reasoning, RunConfig  # noqa: E402
from structbench.runner.run import Run  # noqa: E402
from structbench.runner.selection import prepare  # noqa: E402
from structbench.runner.store import read_records  # noqa: E402
from structbench.testing.cli import invoke  # noqa: E402
from structbench.testing.openai_server import MockOpenAIServer, read_log, serve_in_thread  # noqa: E402
from structbench.testing.reasoning_server import OracleAnswers, ReasoningServer  # noqa: E402
from synthetic_releases import SYNTHETIC, clear_release_caches, describe_synthetic, synthetic_context  # noqa: E402

USAGE = {"prompt_tokens": 120, "completion_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 1},
         "prompt_tokens_details": {"cached_tokens": 20}}
"""What the server reports for every call: usage read the same way must sum the same."""
RUN = ["--limit", "6", "--epochs", "2", "--no-progress"]
STRATEGIES = sum(len(BENCHMARKS.get(name)().strategies()) for name in ("structfact", "scitab"))
"""StructFact's strategies and SciTab's (the tool loop's included: its text protocol on this backend)."""
KEY = "sk-litellmsecret0123456789abcdefgh"


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    return dict(os.environ, STRUCTBENCH_CACHE=str(tmp / "cache"), **extra)


def _entries(run_dir: Path) -> list[dict[str, Any]]:
    """The run's result entries without the model's name (the one thing that differs)."""
    metrics = MetricsFile.model_validate_json((run_dir / "metrics.json").read_text())
    return [e.model_dump(mode="json", exclude={"model"}) for e in metrics.results]


def test_the_same_prompts_score_and_count_as_through_the_openai_backend(tmp_path: Path) -> None:
    """A StructFact run of two epochs, the model answering each question its own way: identical metrics, intervals,
    baselines and usage, and the server saw the same requests."""
    replies = {}  # a model that answers some questions right, some wrong, and the second epoch otherwise
    for i, letter in enumerate("ABCABCAB"):
        replies[f"q{i}"] = [letter, "ABC"[(i + 1) % 3]]
    logs = {name: tmp_path / f"{name}.log" for name in ("openai", "litellm")}
    for name, model in (("openai", "openai:toy"), ("litellm", "litellm:openai/toy")):
        server = MockOpenAIServer(reply="B", usage=USAGE, log_path=logs[name])
        server.reply_to = lambda request, s=server: _by_prompt(request, replies, s.reply)  # type: ignore[method-assign]
        with serve_in_thread(server) as url:
            done = invoke("run", "-m", model, "--base-url", url, *RUN, "--out", str(tmp_path / name),
                          env=_env(tmp_path))
            assert done.returncode == 0, done.stderr
            if name == "litellm":  # the response cache answers the same requests again
                again = invoke("run", "-m", model, "--base-url", url, *RUN, "--out", str(tmp_path / "again"),
                               env=_env(tmp_path))
                assert again.returncode == 0, again.stderr
    openai, litellm = _entries(tmp_path / "openai"), _entries(tmp_path / "litellm")
    assert openai == litellm
    (entry,) = openai
    assert entry["epochs"]["count"] == 2 and entry["headline"]["ci_low"] is not None
    assert 0 < entry["headline"]["value"] < 1  # not a row of one answer
    assert entry["usage"]["usage"] == {"calls": 12, "prompt_tokens": 1440, "completion_tokens": 36,
                                       "reasoning_tokens": 12, "cached_tokens": 240, "unknown": 0}
    seen = {name: Counter(r.digest for r in read_log(path)) for name, path in logs.items()}
    assert seen["openai"] == seen["litellm"] and sum(seen["openai"].values()) == 12
    manifest = json.loads((tmp_path / "litellm" / "manifest.json").read_text())
    assert manifest["backend"] == {"backend": "litellm", "model": "openai/toy", "base_url": url, "provider": "openai"}
    assert manifest["packages"]["litellm"] == "1.110.2"
    assert _entries(tmp_path / "again")[0]["usage"]["reused"]["calls"] == 12
    assert sum(seen["litellm"].values()) == 12  # not one request more


def _by_prompt(request: dict[str, Any], replies: dict[str, list[str]], default: str) -> str:
    """The reply to a StructFact question: picked by a hash of its claim, then by the request's seed (epoch)."""
    messages = request.get("messages") or []
    text = messages[-1]["content"] if messages else str(request.get("prompt"))
    choices = replies.get(f"q{sum(text.encode()) % len(replies)}", [default])
    return choices[int(request.get("seed") or 0) % len(choices)]


@pytest.fixture(scope="module")
def answers() -> Iterator[OracleAnswers]:
    """The gold answer to every request of StructFact's and SciTab's strategies on the synthetic releases."""
    with pytest.MonkeyPatch.context() as mp:
        describe_synthetic(mp)
        found = OracleAnswers()
        found.add_run(["structfact:demo", "scitab:all"], strategies=["all"], limit=2, data_dir=str(SYNTHETIC))
        yield found
    clear_release_caches()


@pytest.mark.parametrize("shape", ["reasoning_content", "inline", "cutoff-field"])
def test_every_strategy_scores_the_answer_never_the_thought(shape: str, answers: OracleAnswers,
                                                           tmp_path: Path) -> None:
    """Chat and completion prompts, self-consistency's n draws, follow-up turns: a server that thinks before the
    gold answer scores the maximum through LiteLLM, its thought kept apart, as through the openai backend."""
    config = RunConfig(model="litellm:openai/thinker", benches=["structfact:demo", "scitab:all"], strategies=["all"],
                       limit=2, data_dir=str(SYNTHETIC), reasoning=Reasoning())
    with pytest.MonkeyPatch.context() as mp, serve_in_thread(ReasoningServer(shape, answers)) as url:
        describe_synthetic(mp)
        backend = make_backend(BackendSpec.parse(config.model, base_url=url, max_retries=0))
        metrics = Run(tmp_path, config).execute(backend, prepare(config, synthetic_context()), cache=None,
                                                concurrency=8, progress=False)
    clear_release_caches()
    records = list(read_records(tmp_path / "samples.jsonl"))
    assert len(metrics.results) == STRATEGIES and len(records) == 2 * STRATEGIES
    assert all(r.errors == r.harness_errors == 0 for r in metrics.results)
    if shape == "cutoff-field":  # every reply ran out of tokens in its thought: no answer, never an error
        assert all(r.reasoning_cut_off == r.n == 2 for r in metrics.results)
        assert all(r.output == "" and r.score == 0.0 and "The answer is" in str(r.reasoning) for r in records)
        return
    assert [(r.benchmark, r.strategy) for r in metrics.results if r.headline.value != 1.0] == []
    for record in records:
        assert record.reasoning is not None and "The answer is" in record.reasoning
        assert "The answer is" not in record.output and "<think>" not in record.output


def _call(server: MockOpenAIServer, request: Request, **kwargs: Any) -> Any:
    """``request`` through a ``LiteLLMBackend`` to ``server``, both on one event loop (closed together)."""
    async def go() -> Any:
        srv = await server.serve()
        url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1"
        backend = LiteLLMBackend("openai/toy", base_url=url, **{"max_retries": 2, "timeout": 5.0, **kwargs})
        backend.backoff_base = 0.001
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()
            srv.close()

    return asyncio.run(go())


def test_retries_honour_retry_after_and_give_up_as_the_openai_backend_does() -> None:
    server = MockOpenAIServer(fail_every=2, fail_status=429, retry_after="0.5")
    assert _call(server, Request.chat("one")).text == "A"
    started = time.perf_counter()
    assert _call(server, Request.chat("two")).text == "A"  # a 429, then an answer after the Retry-After
    assert server.requests == 3 and time.perf_counter() - started >= 0.5
    failing = MockOpenAIServer(fail_every=1, fail_status=500)
    with pytest.raises(BackendError, match=r"gave up after 3 tries: HTTP 500") as err:
        _call(failing, Request.chat("x"))
    assert err.value.cause == "HTTP 500" and failing.requests == 3


def test_a_refused_key_is_not_retried_and_never_shown() -> None:
    server = MockOpenAIServer(fault="echo-key")
    with pytest.raises(BackendError) as err:
        _call(server, Request.chat("x"), api_key=KEY)
    assert err.value.cause == "HTTP 401" and server.requests == 1
    assert KEY not in str(err.value) and KEY[:12] not in str(err.value) and "[REDACTED]" in str(err.value)


def test_a_prompt_too_long_and_a_timeout_are_what_they_are_for_openai() -> None:
    with pytest.raises(BackendError) as err:
        _call(MockOpenAIServer(context=64, refusal="openai"), Request.chat("x" * 1000, max_tokens=10))
    assert err.value.cause == PROMPT_TOO_LONG
    slow = MockOpenAIServer(latency=3.0)
    with pytest.raises(BackendError, match="no complete reply within 0.5 s") as err:
        _call(slow, Request.chat("x"), timeout=0.5, max_retries=5)
    assert err.value.cause == TIMEOUT and slow.requests == 2  # tried once more, never more


def test_the_breaker_stops_a_run_whose_every_call_fails(tmp_path: Path) -> None:
    with serve_in_thread(MockOpenAIServer(fail_every=1, fail_status=503)) as url:
        done = invoke("run", "-m", "litellm:openai/toy", "--base-url", url, "--limit", "30", "--max-retries", "0",
                      "--no-progress", "--out", str(tmp_path / "run"), "--concurrency", "2", env=_env(tmp_path))
    assert done.returncode == ExitCode.STOPPED, done.stderr
    assert "HTTP 503" in done.stderr.splitlines()[-1]


def test_nothing_listening_stops_the_run_at_once_as_for_openai(tmp_path: Path) -> None:
    """LiteLLM reports a refused connection as HTTP 500; it is "cannot connect": one try, and the run stops (exit 4)
    without a table of zeros."""
    with pytest.raises(BackendError, match="gave up after 1 try") as err:
        _call_at("http://127.0.0.1:1/v1", Request.chat("x"), max_retries=6)
    assert err.value.cause == CANNOT_CONNECT and "ConnectionRefusedError" in str(err.value)
    started = time.perf_counter()
    done = invoke("run", "-m", "litellm:openai/toy", "--base-url", "http://127.0.0.1:1/v1", "--limit", "4",
                  "--no-progress", "--out", str(tmp_path / "run"), env=_env(tmp_path))
    assert done.returncode == ExitCode.STOPPED, done.stderr
    assert "nothing answers there" in done.stderr and time.perf_counter() - started < 25
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_a_connection_dropped_before_the_reply_is_retried_not_a_status() -> None:
    accepted = []

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        await reader.read(1)
        writer.close()

    async def go() -> Any:
        server = await asyncio.start_server(drop, "127.0.0.1", 0)
        try:
            return await _generate(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", Request.chat("x"),
                                   max_retries=2)
        finally:
            server.close()

    with pytest.raises(BackendError, match="gave up after 3 tries") as err:
        asyncio.run(go())
    assert err.value.cause not in (CANNOT_CONNECT, "HTTP 500") and "HTTP 500" not in str(err.value)
    assert len(accepted) == 3


def _call_at(url: str, request: Request, **kwargs: Any) -> Any:
    return asyncio.run(_generate(url, request, **kwargs))


async def _generate(url: str, request: Request, **kwargs: Any) -> Any:
    backend = LiteLLMBackend("openai/toy", base_url=url, **{"timeout": 5.0, **kwargs})
    backend.backoff_base = 0.001
    try:
        return await backend.generate(request)
    finally:
        await backend.aclose()


def test_litellms_prices_cost_a_run_given_none(tmp_path: Path) -> None:
    from importlib.metadata import version

    import litellm

    with serve_in_thread(MockOpenAIServer(reply="A", usage=USAGE)) as url:
        done = invoke("run", "-m", "litellm:openai/gpt-4o-mini", "--base-url", url, "--limit", "4", "--no-progress",
                      "--max-cost", "1", "--out", str(tmp_path / "run"), env=_env(tmp_path))
        assert done.returncode == 0, done.stderr
        prices = tmp_path / "prices.yaml"
        prices.write_text("litellm:openai/gpt-4o-mini: {input: 1, output: 2}\n")
        mine = invoke("run", "-m", "litellm:openai/gpt-4o-mini", "--base-url", url, "--limit", "4", "--no-progress",
                      "--prices", str(prices), "--out", str(tmp_path / "mine"), "--no-cache", env=_env(tmp_path))
        assert mine.returncode == 0, mine.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["prices"] == f"LiteLLM's prices (litellm {version('litellm')})"
    paid = litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=4 * 120, completion_tokens=4 * 3,
                                  cache_read_input_tokens=4 * 20)
    assert metrics["usage"]["cost_usd"] == pytest.approx(sum(paid), abs=1e-6) and metrics["usage"]["cost_usd"] > 0
    assert "at LiteLLM's prices" in done.stdout
    own = json.loads((tmp_path / "mine" / "metrics.json").read_text())
    assert own["usage"]["cost_usd"] == pytest.approx((4 * 120 * 1 + 4 * 3 * 2) / 1e6)


def test_a_server_without_usage_counts_unknown_and_stops_a_budget(tmp_path: Path) -> None:
    """LiteLLM fills in zero usage where the server sent none: recorded as unknown (null), never 0, and a budget that
    cannot be kept stops the run as it does through the openai backend."""
    with serve_in_thread(MockOpenAIServer(reply="A", no_usage=True)) as url:
        done = invoke("run", "-m", "litellm:openai/toy", "--base-url", url, "--limit", "3", "--no-progress",
                      "--out", str(tmp_path / "run"), env=_env(tmp_path))
        assert done.returncode == 0, done.stderr
        prices = tmp_path / "prices.yaml"
        prices.write_text("litellm:openai/toy: {input: 1, output: 2}\n")
        budget = invoke("run", "-m", "litellm:openai/toy", "--base-url", url, "--limit", "3", "--no-progress",
                        "--prices", str(prices), "--max-cost", "1", "--no-cache", "--out", str(tmp_path / "budget"),
                        env=_env(tmp_path))
    made = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]["usage"]
    assert made["calls"] > 0 and made["unknown"] == made["calls"] and made["prompt_tokens"] is None
    calls = [c for r in read_records(tmp_path / "run" / "samples.jsonl") for c in r.call_usage]
    assert calls and all(c.prompt_tokens is None and c.completion_tokens is None for c in calls)
    assert budget.returncode == ExitCode.BUDGET, budget.stderr
    assert "reported no token usage for a call" in budget.stderr


def test_a_usage_of_zero_the_server_reported_is_kept() -> None:
    zero = MockOpenAIServer(usage={"prompt_tokens": 0, "completion_tokens": 0})
    response = _call(zero, Request.chat("x"))
    assert (response.prompt_tokens, response.completion_tokens) == (0, 0)
    assert _call(MockOpenAIServer(usage=USAGE), Request(prompt="x")).prompt_tokens == 120  # a completion prompt too
    assert _call(MockOpenAIServer(no_usage=True), Request(prompt="x")).prompt_tokens is None


def test_n_replies_drawn_one_per_call_are_one_reply() -> None:
    def reply(text: str, prompt: int) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 2,
                          "completion_tokens_details": {"reasoning_tokens": 1}}}

    merged = _merge([reply("A", 10), reply("B", 10), reply("C", 11)])
    assert [(c["index"], c["message"]["content"]) for c in merged["choices"]] == [(0, "A"), (1, "B"), (2, "C")]
    assert merged["usage"] == {"prompt_tokens": 31, "completion_tokens": 6,
                               "completion_tokens_details": {"reasoning_tokens": 3}}
    assert "usage" not in _merge([reply("A", 1), {"choices": []}])  # one call's usage unknown: the sum's too


def test_a_model_litellm_cannot_place_is_a_usage_error(tmp_path: Path) -> None:
    done = invoke("run", "-m", "litellm:toy", "--limit", "1", "--out", str(tmp_path / "run"), env=_env(tmp_path))
    assert done.returncode == ExitCode.USAGE and done.stderr.count("\n") == 1
    assert "error: --model litellm:toy: LiteLLM does not know which provider serves it" in done.stderr
    assert not (tmp_path / "run").exists()
