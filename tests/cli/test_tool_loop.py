"""The tool loop under kill -9: a run killed between two turns of its samples resumes without asking the model any
completed turn again (every turn is a cached model call), and ends as an uninterrupted run would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults import child_pythonpath, serve
from structbench.benchmarks.scitab.prompts import ZERO_SHOT_ANSWERS
from structbench.benchmarks.scitab.source import DATA_FILE, SOURCE, read_claims
from structbench.data.datasets import DataContext

SAMPLES = 8
LATENCY = 0.4


def test_kill_9_mid_loop_asks_no_completed_turn_again(tmp_path: Path, shared_datasets: Path) -> None:
    claims = read_claims(DataContext(data_dir=shared_datasets).file(SOURCE, DATA_FILE))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({c.claim: ZERO_SHOT_ANSWERS[c.label] for c in claims}))
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"),
               STRUCTBENCH_DATA_DIR=str(shared_datasets))
    with serve(tmp_path, "--tool-model", "--latency", str(LATENCY), "--reply", "no tool, no answer",
               "--tool-arguments", json.dumps({"sql": {"query": "SELECT count(*) AS n FROM t"}}),
               "--tool-answers", str(answers)) as server:
        run = subprocess.Popen(
            [sys.executable, "-m", "structbench", "run", "-m", "openai:mock", "--base-url", server.url, "-b", "scitab",
             "-s", "tools", "--limit", str(SAMPLES), "--concurrency", "1", "--workers", "1", "--out", "r",
             "--no-progress"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 240
            while len(server.answered()) < 5 and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            # one request at a time: half a reply's latency after an answer, that reply has reached the run and its
            # cache, and the next request is waiting for its own
            time.sleep(LATENCY / 2)
            completed = server.answered()
            run.kill()
        finally:
            run.wait()
        assert 5 <= len(completed) < 2 * SAMPLES, "the run was not killed in the middle of its loops"
        resumed = subprocess.run([sys.executable, "-m", "structbench", "run", "--resume", "r", "--no-progress"],
                                 cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr
        asked = server.answered()
    assert len(set(asked)) == 2 * SAMPLES  # two turns a sample
    assert all(asked.count(digest) == 1 for digest in completed)  # no completed turn was asked again
    assert len(asked) - len(set(asked)) <= 1  # only the request in flight at the kill (its reply never arrived)
    records = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    finished = {r["id"]: r for r in records}
    assert len(finished) == SAMPLES and all(r["score"] == 1.0 for r in finished.values())
    assert any(r["cached_calls"] for r in finished.values())  # a loop killed after its first turn read it back


@pytest.mark.slow
def test_the_embedded_model_runs_the_text_protocol_end_to_end(tmp_path: Path, shared_datasets: Path) -> None:
    """The default model has no function calling: it gets the text protocol, whatever it writes is run or answered,
    and the run ends with a record either way (a tiny base model rarely answers within two turns)."""
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "structbench", "run", "-b", "scitab", "-s", "tools", "--limit", "1", "--max-turns", "2",
         "--max-tokens", "48", "--data-dir", str(shared_datasets), "--offline", "--no-cache", "--out", "r",
         "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1100)
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    loop = record["artifacts"]["tools"]
    assert record["model"] == "llamacpp" and loop["protocol"] == "text" and 1 <= loop["turns"] <= 2
    assert record["calls"] == loop["turns"] and record["error_kind"] in (None, "turns")
    assert "```sql" in record["prompt"][0]["content"]  # the protocol's instructions went out
