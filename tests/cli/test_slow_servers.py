"""A small, slow server as a newcomer meets it (issue 26): the real CLI against loopback servers that take longer
than ``--timeout`` or refuse prompts longer than their context, in the words of vLLM, OpenAI, llama.cpp and SGLang."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import toybench  # noqa: F401  (registers it in this process, as STRUCTBENCH_PLUGINS does in a child)
from faults import child_pythonpath, serve
from patience import patience
from structbench.testing.cli import Invocation, invoke


def sb(tmp_path: Path, *args: str, plugins: bool = True) -> Invocation:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    if plugins:
        env["STRUCTBENCH_PLUGINS"] = "toybench"
    proc = invoke(*args, env=env, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def metrics(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "metrics.json").read_text())["results"][0])


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]


def test_a_slow_server_shows_its_calls_and_stops_the_run_with_advice(tmp_path: Path) -> None:
    with serve(tmp_path, "--latency", "2.5") as server:
        t0 = time.perf_counter()
        proc = sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "toy", "-n", "40", "--out", "r",
                  "--timeout", "0.8", "--concurrency", "4", "--progress-every", "0.2")
        took = time.perf_counter() - t0
        time.sleep(2.6)  # the server finishes the replies nobody waits for any more, and logs them
        sent = Counter(server.answered())
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.splitlines()
    assert any("calls in flight" in line for line in lines) and any("timeouts)" in line for line in lines)
    last = lines[-1]
    assert last.startswith("error: stopped early: the last 3 model calls timed out (each tried up to twice)")
    assert "--max-tokens" in last and "--timeout" in last and "--concurrency" in last
    assert took < patience(30)
    assert sent and max(sent.values()) <= 2  # each request tried twice at most, not 1 + --max-retries 6


@pytest.mark.parametrize("refusal", ["vllm", "openai", "llamacpp", "sglang"])
def test_prompts_too_long_for_the_server_are_counted_apart_and_not_sent_again(tmp_path: Path, refusal: str) -> None:
    with serve(tmp_path, "--context", "60", "--refusal", refusal) as server:
        args = ["run", "-m", "openai:m", "--base-url", server.url, "-b", "toy", "-n", "10", "--no-progress"]
        first = sb(tmp_path, *args, "--out", "r")
        again = sb(tmp_path, *args, "--out", "r")
    assert first.returncode == 0, first.stderr
    entry = metrics(tmp_path / "r")
    assert 0 < entry["too_long"] < 10 and entry["n"] + entry["too_long"] == 10 and entry["errors"] == 0
    header, _, row = first.stdout.splitlines()[:3]
    assert "| too long |" in header and f"| {entry['too_long']} |" in row
    assert f"{entry['too_long']} sample(s) do not fit the model's context" in first.stderr
    kinds = Counter(r["error_kind"] for r in records(tmp_path / "r"))
    assert kinds == {None: entry["n"], "context": entry["too_long"]}
    assert again.returncode == 0, again.stderr
    session = json.loads((tmp_path / "r" / "manifest.json").read_text())["sessions"][-1]
    assert session["jobs"] == 0 and session["model_calls"] == 0  # nothing sent for them again
    with serve(tmp_path, port=None) as roomy:
        other = sb(tmp_path, "run", "-m", "openai:m", "--base-url", roomy.url, "-b", "toy", "-n", "10", "--out", "o",
                   "--no-progress")
    assert other.returncode == 0, other.stderr
    compared = sb(tmp_path, "compare", "r", "o")
    assert compared.returncode == 0, compared.stderr


def test_skabench_leaves_out_budgets_above_the_models_context(tmp_path: Path, shared_datasets: Path) -> None:
    def run(out: str, *extra: str, server_args: tuple[str, ...] = ()) -> Invocation:
        with serve(tmp_path, *server_args) as server:
            return sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "skabench", "-n", "6",
                      "--data-dir", str(shared_datasets), "--out", out, "--no-progress", *extra, plugins=False)

    listed = run("listed", server_args=("--context", "8192", "--refusal", "llamacpp"))
    given = run("given", "-M", "n_ctx=8192", server_args=("--hide-context",))
    unknown = run("unknown", server_args=("--context", "8192", "--hide-context"))
    for proc, out in ((listed, "listed"), (given, "given")):
        assert proc.returncode == 0, proc.stderr
        assert "note: the model's context is 8192 tokens" in proc.stderr
        excluded = metrics(tmp_path / out)["extra"]["excluded"]
        assert any("budget above the model's context of 8192 tokens" in e["reason"] for e in excluded)
        budgets = {r["meta"]["budget"] for r in records(tmp_path / out)}
        assert budgets and budgets <= {"1k", "4k"}
    # unknown up front: the larger budgets are sent, refused by the server, and counted apart
    assert unknown.returncode == 0, unknown.stderr
    assert "note: the model's context" not in unknown.stderr
    too_long = [r for r in records(tmp_path / "unknown") if r["error_kind"] == "context"]
    assert too_long and {r["meta"]["budget"] for r in too_long} >= {"12k"}
