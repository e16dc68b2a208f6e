"""``structbench run`` with no arguments but ``-n``: the default suite, offline and uncached, on the embedded model in
a fresh process (a cache once hid the default path's crash in llama.cpp). ``-n 5`` asks the first question of each of
the five tasks (the set is interleaved task by task), a sixth of the default's 30 model calls, on the default's
model, options and generated set; CI (``.ci/run``) runs the README's whole default command with an empty cache after
the suite, and ``tests/cli/test_first_contact.py`` checks the default suite's summary on all 30 claims (a mock
model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patience import patience
from structbench.runner.configure import DEFAULT_OPTIONS, DEFAULT_STRATEGIES, DEFAULT_SUITE

N = 5
"""Questions asked: the first of each task."""


@pytest.mark.slow
def test_default_run_on_embedded_model(tmp_path: Path) -> None:
    env = dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    env.pop("STRUCTBENCH_DATA_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "structbench", "run", "--offline", "--no-cache", "-n", str(N)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=patience(900),
    )
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| structfact |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:5] == ["structfact", "generated", "few_shot", "llamacpp", "weighted_f1"]
    # the interval resamples the rows each question shows (the synthetic world's three tables are too few to)
    assert cells[6].startswith("[") and cells[7] == f"{N} evidence sets"
    assert cells[8] == str(N) and cells[9] == "0" and cells[10] == "0"
    assert cells[11].startswith("chance ") and "majority " in cells[11]  # the baselines beside the number
    summary = " ".join(proc.stdout.split("What ran: ", 1)[1].split())  # what ran, and how to read the number
    assert summary.startswith("Gemma 3 270M (embedded, Q4_K_M) through llama.cpp, with a context of 8192 tokens, on "
                              f"StructFact (structfact:generated, strategy few_shot, {N} samples)")
    assert "weighted_f1 " in summary and "baseline" in summary
    run_dir = next((tmp_path / "runs").iterdir())
    records = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(records) == N and all(r["error"] is None for r in records)
    assert {r["task"] for r in records} == {  # the five tasks, one question each
        "Arithmetic Calculation", "Spatiotemporal Cognition", "Multi-hop Reasoning", "Composition Understanding",
        "Combining Structural and Unstructural"}
    # every reply is an option letter, so every answer parses (the embedded base model rambled before)
    assert all(r["calls"] == 1 and r["output"] in ("A", "B", "C") and r["parsed"] is not None for r in records)
    metrics = json.loads((run_dir / "metrics.json").read_text())["results"][0]
    assert set(metrics["baselines"]) == {"chance", "majority"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["backend"]["model"] == "gemma-3-270m-q4_k_m" and manifest["status"] == "complete"
    assert manifest["backend"]["load"]["extra_bufts"] is False
    config = manifest["config"]  # the default suite, its first N questions
    assert (config["benches"], config["strategies"], config["options"], config["limit"]) == (
        DEFAULT_SUITE, DEFAULT_STRATEGIES, DEFAULT_OPTIONS, N)
    assert config["options"]["structfact.tables"] == "synthetic"
